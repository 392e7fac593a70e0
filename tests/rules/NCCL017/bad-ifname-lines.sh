#!/bin/bash
# every interface but lo, one per line (ls prints one name a line into a pipe)
export NCCL_SOCKET_IFNAME=$(ls /sys/class/net | grep -v '^lo$')
mpirun -np 16 -x NCCL_SOCKET_IFNAME ./all_reduce_perf -b 8 -e 8G -g 1
