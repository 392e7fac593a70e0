#!/bin/bash
# the same list joined by commas, as NCCL splits it
export NCCL_SOCKET_IFNAME=$(ls /sys/class/net | grep -v '^lo$' | paste -sd, -)
mpirun -np 16 -x NCCL_SOCKET_IFNAME ./all_reduce_perf -b 8 -e 8G -g 1
