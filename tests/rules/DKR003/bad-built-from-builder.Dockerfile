# Same builder stage, but the image IS built FROM it: its update layer is in the image.
FROM ubuntu:22.04 AS build
RUN apt-get update
RUN apt-get install -y --no-install-recommends build-essential && make -C /src install PREFIX=/out
FROM build
COPY app /opt/app
