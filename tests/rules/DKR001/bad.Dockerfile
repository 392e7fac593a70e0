ARG BASE=nvcr.io/nvidia/pytorch:latest
FROM ubuntu
FROM ${BASE}
