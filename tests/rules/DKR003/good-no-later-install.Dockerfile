FROM ubuntu:22.04
RUN apt-get update
COPY train.py /app/
