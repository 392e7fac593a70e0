#!/bin/bash
export NCCL_ALGO="ring;allreduce:tree,ring"
export NCCL_PROTO=simple
mpirun -x NCCL_ALGO=NVLSTree ./all_reduce_perf
