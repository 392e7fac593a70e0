# The final stage starts from a named stage, which starts from nvidia/cuda: no plugin in the image either.
FROM nvidia/cuda:12.4.1-devel-ubuntu22.04 AS base
RUN apt-get update && apt-get install -y --no-install-recommends libnccl2 && rm -rf /var/lib/apt/lists/*
FROM base AS runtime
ENV NCCL_NET_PLUGIN=/opt/aws-ofi-nccl/lib/libnccl-net.so
