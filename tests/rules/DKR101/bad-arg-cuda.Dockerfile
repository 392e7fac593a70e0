# the base comes from an ARG default: a CUDA image, the stage the image is
ARG BASE=nvidia/cuda:12.4.1-devel-ubuntu22.04
FROM rocm/dev-ubuntu-22.04:6.2 AS tools
FROM ${BASE}
