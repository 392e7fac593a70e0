#!/bin/bash
# Runs all_reduce_perf only: Tree strands no function this script calls.
export NCCL_ALGO=Tree
mpirun -np 16 /opt/nccl-tests/build/all_reduce_perf -b 8 -e 8G -f 2 -g 1
