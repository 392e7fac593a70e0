# Test image for MI300X nodes.
FROM nvcr.io/nvidia/pytorch:24.05-py3
RUN git clone https://github.com/NVIDIA/nccl-tests.git
