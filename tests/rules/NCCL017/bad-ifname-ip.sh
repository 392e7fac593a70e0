#!/bin/bash
# ip prints one interface a line, and so does the loop: NCCL reads each result as one name with newlines in it
export NCCL_SOCKET_IFNAME=$(ip -br link | awk '$1 != "lo" {print $1}')
mpirun -np 16 -x NCCL_SOCKET_IFNAME ./all_reduce_perf -b 8 -e 8G -g 1
export NCCL_SOCKET_IFNAME=$(for dev in /sys/class/net/eth*; do echo "${dev##*/}"; done)
mpirun -np 16 -x NCCL_SOCKET_IFNAME ./all_reduce_perf -b 8 -e 8G -g 1
