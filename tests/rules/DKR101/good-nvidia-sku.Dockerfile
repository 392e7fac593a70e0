# The same NVIDIA image, linted for an NVIDIA size: the image fits its GPUs.
FROM nvcr.io/nvidia/pytorch:24.05-py3
RUN git clone https://github.com/NVIDIA/nccl-tests.git
