#!/bin/bash
# A cluster created with its GPU pool as the default pool, without a GPU-driver opt-out.
az aks create --resource-group $AKS_RG --name $AKS_NAME --node-count 2 \
  --node-vm-size Standard_ND96isr_H100_v5 --generate-ssh-keys
helm install gpu-operator nvidia/gpu-operator -n gpu-operator --create-namespace -f gpu-operator-values.yaml
