ARG PKG=openmpi
ARG TAG=v1
FROM ubuntu:22.04
RUN PKG=libnccl2 && apt-get install -y "$PKG"
RUN echo 'export TAG=$TAG' >> /etc/profile
CMD ["sh", "-c", "echo $TAG"]
