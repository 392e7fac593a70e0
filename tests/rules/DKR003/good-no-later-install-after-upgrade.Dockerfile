FROM ubuntu:22.04
RUN apt update && apt upgrade -y
COPY train.py /app/
