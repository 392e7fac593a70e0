#!/bin/bash
# AMD-AGI/Primus base_env.sh: a setting deprecated in NCCL 2.2.12, whose purpose is the default since
export NCCL_CHECKS_DISABLE=1
export NCCL_IB_HCAS=mlx5_0
