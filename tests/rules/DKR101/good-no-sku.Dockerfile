# The same NVIDIA image, linted without --sku: the GPUs it is for are unknown.
FROM nvcr.io/nvidia/pytorch:24.05-py3
RUN git clone https://github.com/NVIDIA/nccl-tests.git
