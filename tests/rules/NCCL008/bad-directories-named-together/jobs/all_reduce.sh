#!/bin/bash
# Linted as `hpcconf lint etc/ jobs/`: the node's /etc/nccl.conf and the job, from two directories.
mpirun -x NCCL_TOPO_FILE=/workspace/ndv4-topo.xml ./all_reduce_perf
