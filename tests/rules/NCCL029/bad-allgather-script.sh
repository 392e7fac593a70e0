#!/bin/bash
# all_gather_perf is what this script runs, and Tree cannot run AllGather
export NCCL_ALGO=Tree
mpirun -np 16 -npernode 8 -hostfile hosts /opt/nccl-tests/build/all_gather_perf -b 8 -e 8G -f 2 -g 1
