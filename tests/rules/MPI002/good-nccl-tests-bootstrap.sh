#!/bin/bash
# MPI only starts the ranks here: NCCL moves the data over InfiniBand itself.
export UCX_TLS=tcp,sm,self,cuda_copy,cuda_ipc
mpirun -np 16 -x UCX_TLS ./build/all_reduce_perf -b 8 -e 8G -f 2 -g 1
