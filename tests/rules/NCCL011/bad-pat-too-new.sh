#!/bin/bash
# PAT arrived in NCCL 2.23: 2.21 refuses the token
export NCCL_ALGO=PAT,Ring
