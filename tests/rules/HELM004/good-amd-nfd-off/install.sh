#!/bin/bash
helm install amd-gpu-operator rocm/gpu-operator-charts -f gpu-operator-values.yaml
helm install network-operator nvidia/network-operator -f network-operator-values.yaml
