FROM nvcr.io/nvidia/pytorch:25.01-py3
ENV NCCL_IB_ECE_ENABLE=0
