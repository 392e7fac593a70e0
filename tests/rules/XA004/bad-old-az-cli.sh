#!/bin/bash
AZ_CLI_VERSION=2.70.0
az aks nodepool add --resource-group rg --cluster-name aks --name ndmv4 --node-count 2 --node-vm-size Standard_ND96amsr_A100_v4 --gpu-driver none
