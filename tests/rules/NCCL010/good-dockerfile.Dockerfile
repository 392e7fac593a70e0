FROM nvcr.io/nvidia/pytorch:24.05-py3
ENV NCCL_GRAPH_FILE=/opt/microsoft/ncv4/graph.xml
