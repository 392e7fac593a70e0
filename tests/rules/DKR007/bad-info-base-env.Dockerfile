ARG CUDA_VERSION=12.4.1
FROM nvidia/cuda:12.2.2-devel-ubuntu22.04
RUN echo "cuda ${CUDA_VERSION}" > /etc/cuda-build
