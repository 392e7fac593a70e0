FROM nvcr.io/nvidia/pytorch:24.05-py3
ENV NCCL_IB_ECE_ENABLE=0
