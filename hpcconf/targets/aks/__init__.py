"""AKS targets: operator values, NicClusterPolicy, HostDeviceNetwork, Volcano job, provisioning script.

Every file lands under ``aks/`` and receives ``cluster.aks`` (hpcconf.resolve.aks) and the
resolved pools, so the resource name, namespaces and task names agree across files.
"""

from __future__ import annotations

from typing import Optional

from ...resolve import ResolvedCluster
from ...resolve.aks import ResolvedAks
from .._common import platform_target
from . import gpu_operator, health_checks, host_device_network, network_operator, nfd_values, provisioning, volcano_job

AKS = frozenset({"aks"})


def _aks(cluster: ResolvedCluster) -> Optional[ResolvedAks]:
    return cluster.aks


TARGETS = [
    platform_target("aks-nfd-values", AKS, _aks, nfd_values.render),
    platform_target("aks-network-operator", AKS, _aks, network_operator.render),
    platform_target("aks-gpu-operator", AKS, _aks, gpu_operator.render),
    platform_target("aks-host-device-network", AKS, _aks, host_device_network.render),
    platform_target("aks-health-checks", AKS, _aks, health_checks.render),
    platform_target("aks-volcano-job", AKS, _aks, volcano_job.render),
    platform_target("aks-provisioning", AKS, _aks, provisioning.render),
]
