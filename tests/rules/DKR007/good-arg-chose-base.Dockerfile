ARG CUDA_VERSION=12.4.1
ARG BASE_IMAGE=nvidia/cuda:${CUDA_VERSION}-devel-ubuntu22.04
FROM ${BASE_IMAGE}
RUN echo "cuda ${CUDA_VERSION}" > /etc/cuda-build
