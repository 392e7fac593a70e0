#!/bin/bash
#SBATCH --nodes=2
export NCCL_IB_DISABLE=1
srun --mpi=pmix /opt/nccl-tests/build/all_reduce_perf -b 8 -e 8G -f 2 -g 1
