#!/bin/bash
# Seed 000's node pool command without any GPU-driver opt-out, next to seed 000's gpu-operator values.
az aks nodepool add --resource-group $AKS_RG --cluster-name $AKS_NAME --name $NDMv4_POOL_NAME --node-count 1 \
  --node-vm-size Standard_ND96amsr_A100_v4 --node-osdisk-size 128 --os-sku Ubuntu
helm install gpu-operator nvidia/gpu-operator -n gpu-operator --create-namespace -f gpu-operator-values.yaml
