ARG FROM_IMAGE_NAME=nvcr.io/nvidia/pytorch:23.03-py3
FROM ${FROM_IMAGE_NAME}
RUN apt-get update \
    && apt-get -y install --no-install-recommends build-essential infiniband-diags openssh-server kmod \
    && rm -rf /var/lib/apt/lists/*
COPY nccl-tests.sh /opt/
RUN cd /opt && ./nccl-tests.sh
COPY ndv4-topo.xml /opt/nccl/topo.xml
ENV NCCL_TOPO_FILE=/opt/nccl/topo.xml
RUN apt-get update
RUN apt-get -y install --no-install-recommends jq
