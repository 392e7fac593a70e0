#!/bin/bash
# the same setting on NCCL 2.23.4, the first release with PAT
export NCCL_ALGO=PAT,Ring
