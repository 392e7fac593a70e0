FROM nvcr.io/nvidia/pytorch:23.03-py3
COPY ndv4-topo.xml /opt/nccl/topo.xml
ENV NCCL_TOPO_FILE=/opt/nccl/topo.xml
