ARG OFED_VERSION=24.04-0.6.6.0
FROM ubuntu:22.04 AS base
ARG OFED_VERSION
RUN echo "building with OFED ${OFED_VERSION}"

FROM base AS runtime
RUN curl -fsSLO https://example.invalid/MLNX_OFED_LINUX-${OFED_VERSION}-ubuntu22.04-x86_64.tgz
