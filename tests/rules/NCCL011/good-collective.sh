#!/bin/bash
export NCCL_ALGO="allreduce:ring;allgather:ring"
