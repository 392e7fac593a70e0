#!/bin/bash
# A CPU pool: no GPU driver to skip, whatever its tags.
az aks nodepool add --resource-group rg --cluster-name aks --name system --node-count 2 --node-vm-size Standard_D8s_v5 --tags SkipGPUDriverInstall=true
