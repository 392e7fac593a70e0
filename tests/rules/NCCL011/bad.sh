#!/bin/bash
export NCCL_ALGO=CollNet
export NCCL_PROTO=LL,Simple
mpirun -x NCCL_ALGO="allreduce:ring;tree" ./all_reduce_perf
export NCCL_PROTO=Simpel
