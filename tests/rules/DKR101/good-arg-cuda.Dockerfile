# a CUDA builder stage is discarded; the image is the ROCm stage
ARG BASE=nvidia/cuda:12.4.1-devel-ubuntu22.04
FROM ${BASE} AS tools
FROM rocm/dev-ubuntu-22.04:6.2
