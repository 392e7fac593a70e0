"""The cluster's secondary InfiniBand network as resolve's own type, and (re-exported from
:mod:`hpcconf.knowledge.network`, where the spec rule SPEC017 reads them: the spec layer may not import
``resolve``) the address-range overlap checks."""

from __future__ import annotations

from dataclasses import dataclass

from ..knowledge.network import AKS_DEFAULT_POD_CIDR, AKS_DEFAULT_SERVICE_CIDR, CidrOverlap, ipam_overlaps
from ..spec.model import InfinibandNetwork

__all__ = ["AKS_DEFAULT_POD_CIDR", "AKS_DEFAULT_SERVICE_CIDR", "CidrOverlap", "ResolvedInfiniband", "ipam_overlaps",
           "resolved_infiniband"]


@dataclass(frozen=True)
class ResolvedInfiniband:
    """``network.infiniband``: whether pools use it, the device-plugin resource, the IPAM range and network name."""

    enabled: bool
    resource_name: str  # the bare device-plugin resource (mlnxnics): pods request nvidia.com/<resource_name>
    ipam_range: str
    ipoib: bool
    network_name: str  # the HostDeviceNetwork (and NetworkAttachmentDefinition)


def resolved_infiniband(network: InfinibandNetwork) -> ResolvedInfiniband:
    return ResolvedInfiniband(**network.model_dump())
