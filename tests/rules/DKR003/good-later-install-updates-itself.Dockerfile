FROM ubuntu:22.04
RUN apt-get update && apt-get remove -y libnccl2
RUN apt-get -qq update && apt-get install -y curl && rm -rf /var/lib/apt/lists/*
