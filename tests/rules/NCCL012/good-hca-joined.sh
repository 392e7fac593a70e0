#!/bin/bash
# the same lists joined by commas, or cut to one line
export NCCL_IB_HCA=$(for i in /sys/class/infiniband/mlx5_*; do echo $(basename $i); done | paste -sd, -)
export NCCL_IB_HCA="$(ls /sys/class/infiniband | grep mlx5 | tr '\n' ',')"
export NCCL_IB_HCA=$(ibv_devices | awk 'NR>2 {print $1}' | head -n 1)
export NCCL_IB_HCA=$(cat /etc/nccl-hca)
