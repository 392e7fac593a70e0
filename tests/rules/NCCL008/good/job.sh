#!/bin/bash
export NCCL_DEBUG=INFO
mpirun -x NCCL_TOPO_FILE=/opt/microsoft/ndv4/topo.xml ./all_reduce_perf
