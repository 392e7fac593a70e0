#!/bin/bash
# The AKS-managed driver opted out with --gpu-driver none: the operator installs the driver.
az aks nodepool add --resource-group $AKS_RG --cluster-name $AKS_NAME --name $NDMv4_POOL_NAME --node-count 1 \
  --node-vm-size Standard_ND96amsr_A100_v4 --node-osdisk-size 128 --os-sku Ubuntu --gpu-driver none
