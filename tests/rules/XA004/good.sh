#!/bin/bash
set -euo pipefail
GPU_POOL_SKU='Standard_ND96amsr_A100_v4'
az aks nodepool add --resource-group "$RG" --cluster-name "$CLUSTER" --name ndmv4 --node-count 2 \
  --node-vm-size "$GPU_POOL_SKU" --node-osdisk-size 128 --os-sku Ubuntu \
  --gpu-driver none
