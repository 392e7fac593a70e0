#!/bin/bash
# a collective name NCCL does not have before the colon
export NCCL_ALGO="allreduce:ring;allgatherv:ring"
