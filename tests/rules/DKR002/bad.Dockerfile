FROM ubuntu:22.04 AS build
RUN apt-get update && apt-get install -y build-essential
RUN make -C /src
FROM nvcr.io/nvidia/pytorch:23.03-py3 AS base
RUN apt-get update && apt-get -y install infiniband-diags
FROM base
RUN apt-get -y install kmod
RUN apt-get update && apt-get -y install openssh-server
COPY --from=build /src/out /opt/out
