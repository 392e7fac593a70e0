FROM golang:1.22 AS build
RUN go build -o /exporter .
FROM gcr.io/distroless/static-debian12
COPY --from=build /exporter /exporter
