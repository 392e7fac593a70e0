FROM pplx-garden-dev:latest
COPY pplx-garden /app
RUN cd /app && python3 -m pip install .
