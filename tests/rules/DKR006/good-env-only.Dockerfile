FROM nvcr.io/nvidia/pytorch:24.05-py3
ENV NCCL_IB_PCI_RELAXED_ORDERING=1
RUN git clone https://github.com/NVIDIA/nccl-tests.git /opt/nccl-tests && make -C /opt/nccl-tests MPI=1
