# The builder stage keeps its lists, but the final image is not built FROM it: only its /out is copied.
FROM ubuntu:22.04 AS build
RUN apt-get update && apt-get install -y --no-install-recommends build-essential
RUN make -C /src install PREFIX=/out
FROM nvcr.io/nvidia/pytorch:24.03-py3
COPY --from=build /out /opt/tool
