# Test image for MI300X nodes.
FROM rocm/dev-ubuntu-22.04:6.4.1
RUN git clone https://github.com/ROCm/rccl-tests.git
