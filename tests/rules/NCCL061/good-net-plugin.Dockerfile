# the plugin copied to the path NCCL is pointed at
FROM nvidia/cuda:12.4.1-devel-ubuntu22.04
RUN apt-get update && apt-get install -y --no-install-recommends libnccl2 && rm -rf /var/lib/apt/lists/*
COPY libnccl-net.so /opt/aws-ofi-nccl/lib/
ENV NCCL_NET_PLUGIN=/opt/aws-ofi-nccl/lib/libnccl-net.so
