FROM ubuntu:22.04
RUN apt-get update && apt-get install -y --no-install-recommends build-essential \
    && rm -rf /var/lib/apt/lists/*

ARG CUDA_ARCH=90
ENV NCCL_DEBUG=WARN \
    ARCH_LIST=${CUDA_ARCH}
RUN echo "ENV is set" \
    && echo done
