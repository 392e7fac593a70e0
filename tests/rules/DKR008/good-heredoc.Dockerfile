FROM ubuntu:22.04
RUN <<EOT
ENV is not an instruction here \
ARG nor this
EOT
