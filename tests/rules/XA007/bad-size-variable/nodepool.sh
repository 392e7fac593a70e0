#!/bin/bash
# The GPU size comes from a variable the script sets; still no GPU-driver opt-out.
GPU_SIZE=Standard_ND96amsr_A100_v4
az aks nodepool add --resource-group "$AKS_RG" --cluster-name "$AKS_NAME" --name ndmv4 --node-count 2 \
  --node-vm-size "${GPU_SIZE}" --os-sku Ubuntu
helm install gpu-operator nvidia/gpu-operator -n gpu-operator --create-namespace -f gpu-operator-values.yaml
