FROM ubuntu:22.04
RUN apt-get update && apt-get install -y --no-install-recommends build-essential \

ARG CUDA_ARCH=90
RUN echo "arch ${CUDA_ARCH}"
