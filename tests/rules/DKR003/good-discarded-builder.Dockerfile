# The builder stage updates the lists in a layer of its own; the final image is not built FROM it.
FROM ubuntu:22.04 AS build
RUN apt-get update
RUN apt-get install -y --no-install-recommends build-essential && make -C /src install PREFIX=/out
FROM nvcr.io/nvidia/pytorch:24.03-py3
COPY --from=build /out /opt/tool
