FROM nvcr.io/nvidia/pytorch:24.05-py3
RUN apt install -y infiniband-diags
RUN apt upgrade -y
