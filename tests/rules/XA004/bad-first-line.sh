az aks nodepool add --resource-group rg --cluster-name aks --name ndmv4 --node-count 2 --node-vm-size Standard_ND96amsr_A100_v4 --tags SkipGPUDriverInstallation=true
# A script without a shebang: the command is on its first line.
