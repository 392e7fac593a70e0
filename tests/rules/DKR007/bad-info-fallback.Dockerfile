ARG UCX_REF=v1.17.0
FROM ubuntu:22.04
RUN git clone -b ${UCX_REF:-v1.15.0} https://github.com/openucx/ucx.git
