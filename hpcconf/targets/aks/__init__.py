"""AKS targets: operator values, NicClusterPolicy, HostDeviceNetwork, Volcano job, provisioning script.

Every file lands under ``aks/`` and reads only ``cluster.aks`` (hpcconf.resolve.aks) and the
resolved pools, so the resource name, namespaces and task names agree across files.
"""

from __future__ import annotations

from .. import Target
from . import gpu_operator, host_device_network, network_operator, nfd_values, provisioning, volcano_job

AKS = frozenset({"aks"})

TARGETS = [
    Target("aks-nfd-values", AKS, nfd_values.render),
    Target("aks-network-operator", AKS, network_operator.render),
    Target("aks-gpu-operator", AKS, gpu_operator.render),
    Target("aks-host-device-network", AKS, host_device_network.render),
    Target("aks-volcano-job", AKS, volcano_job.render),
    Target("aks-provisioning", AKS, provisioning.render),
]
