ARG BASE=nvcr.io/nvidia/pytorch:24.03-py3
ARG NCCL_TESTS_VERSION=2.13.9
ARG TORCH_CUDA_ARCH=9.0
FROM ${BASE} AS build
WORKDIR /opt
RUN git clone -b v${NCCL_TESTS_VERSION} https://github.com/NVIDIA/nccl-tests.git \
    && make -C nccl-tests MPI=1 NVCC_GENCODE="-gencode=arch=compute_${TORCH_CUDA_ARCH/./},code=sm_90"
ENV TESTS_TAG=$NCCL_TESTS_VERSION
