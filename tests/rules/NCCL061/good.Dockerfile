FROM nvidia/cuda:12.4.1-devel-ubuntu22.04
COPY libnccl-tuner.so /opt/nccl-tuner/libnccl-tuner.so
ENV NCCL_TUNER_PLUGIN=/opt/nccl-tuner/libnccl-tuner.so
