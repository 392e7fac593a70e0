"""Spec section `aks:`: settings only the AKS artifacts use.

Everything here has a default that reproduces the published 2023 NDm A100 v4 AKS walkthroughs
(jingchaozhang.github.io, Azure HPC blog), so `aks: {}` is a complete
section; versions live in the spec-wide `versions:` block.
"""

from __future__ import annotations

import ipaddress
from typing import Literal, Optional

from pydantic import Field, field_validator

from .base import StrictModel

DNS_LABEL = r"^[a-z0-9]([-a-z0-9]{0,61}[a-z0-9])?$"
DNS_1035_LABEL = r"^[a-z]([-a-z0-9]{0,61}[a-z0-9])?$"


class AksSettings(StrictModel):
    namespace: str = Field(default="default", pattern=DNS_LABEL, description="Namespace of the NCCL job and its HostDeviceNetwork.")
    operators_namespace: str = Field(default="nvidia-operator", pattern=DNS_LABEL, description="Namespace of node-feature-discovery, network-operator and gpu-operator (the 2023 NDm A100 v4 AKS walkthroughs use nvidia-operator). Labelled pod-security privileged.")
    kubernetes_version: Optional[str] = Field(default=None, pattern=r"^\d+\.\d+(\.\d+)?$", description="AKS Kubernetes version (default: the newest release hpcconf's node-OS table knows; provision.sh always pins one, so the node OS cannot move with the region's default).")
    os_sku: Optional[Literal["Ubuntu2204", "Ubuntu2404", "AzureLinux"]] = Field(default=None, description="Node OS of every pool (az aks --os-sku). Default: the Ubuntu AKS gives at kubernetes_version, or, when the NicClusterPolicy's doca-driver tag is not published for that one, the newest Ubuntu it is published for.")
    system_pool_name: str = Field(default="system", pattern=r"^[a-z][a-z0-9]{0,11}$", description="Name of the AKS system node pool (lower case letters and digits, at most 12).")
    system_pool_sku: str = Field(default="Standard_D4s_v5", description="VM size of the AKS system pool.")
    system_pool_count: int = Field(default=2, ge=1, le=100)
    acr_name: Optional[str] = Field(default=None, pattern=r"^[a-zA-Z0-9]{5,50}$", description="Azure Container Registry to create and attach (default: derived from test_image.registry when it is *.azurecr.io).")
    job_name: Optional[str] = Field(default=None, pattern=DNS_1035_LABEL, description="Name of the Volcano job (default: nccl-<collective>-job1, e.g. nccl-allreduce-job1). The svc plugin makes it a Service name, so it must be a DNS-1035 label.")
    service_cidr: Optional[str] = Field(default=None, description="The cluster's service CIDR (az aks create --service-cidr; None: AKS's default 10.0.0.0/16). provision.sh passes it, with --dns-service-ip its 10th address; SPEC017 checks the IB IPAM range against it.")
    pod_cidr: Optional[str] = Field(default=None, description="The cluster's pod CIDR (az aks create --pod-cidr, kubenet or Azure CNI Overlay; None: AKS's default 10.244.0.0/16). provision.sh passes it; SPEC017 checks the IB IPAM range against it.")

    @field_validator("service_cidr", "pod_cidr")
    @classmethod
    def _cidr(cls, value: Optional[str]) -> Optional[str]:
        if value is not None:
            try:
                ipaddress.ip_network(value, strict=True)
            except ValueError as exc:
                raise ValueError(f"not a valid CIDR range ({exc}); write it like 10.0.0.0/16") from None
        return value
