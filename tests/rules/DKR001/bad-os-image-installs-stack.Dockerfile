FROM ubuntu
RUN apt-get update && apt-get install -y libnccl2 && rm -rf /var/lib/apt/lists/*
