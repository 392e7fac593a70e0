# the plugin built and installed under --prefix=/opt/aws-ofi-nccl: make install puts it in /opt/aws-ofi-nccl/lib
FROM nvidia/cuda:12.4.1-devel-ubuntu22.04
RUN git clone https://github.com/aws/aws-ofi-nccl && cd aws-ofi-nccl && ./autogen.sh && ./configure --prefix=/opt/aws-ofi-nccl && make install
ENV NCCL_NET_PLUGIN=/opt/aws-ofi-nccl/lib/libnccl-net.so
