#!/bin/bash
# MegEngine/MegEngine-Benchmark prepare.sh: one RoCE HCA per line, which NCCL reads as a single name
export NCCL_IB_HCA=$(pushd /sys/class/infiniband/ > /dev/null; for i in mlx*_*; do cat $i/ports/1/gid_attrs/types/* 2>/dev/null | grep v >/dev/null && echo $i ; done; popd > /dev/null)
export NCCL_IB_HCA="$(ls /sys/class/infiniband | grep mlx5)"
