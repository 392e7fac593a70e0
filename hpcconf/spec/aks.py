"""Spec section `aks:`: settings only the AKS artifacts use."""

from __future__ import annotations

from typing import Optional

from pydantic import Field

from .base import StrictModel


class AksSettings(StrictModel):
    namespace: str = Field(default="default", pattern=r"^[a-z0-9]([-a-z0-9]{0,61}[a-z0-9])?$", description="Namespace of the NCCL job and its HostDeviceNetwork.")
    kubernetes_version: Optional[str] = Field(default=None, description="AKS Kubernetes version (None: the region's default).")
    system_pool_sku: str = Field(default="Standard_D4s_v5", description="VM size of the AKS system pool.")
    system_pool_count: int = Field(default=2, ge=1, le=100)
    acr_name: Optional[str] = Field(default=None, pattern=r"^[a-zA-Z0-9]{5,50}$", description="Azure Container Registry to create and attach (default: derived from test_image.registry when it is *.azurecr.io).")
