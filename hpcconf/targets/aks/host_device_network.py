"""HostDeviceNetwork: the Multus network whose NAD hands each pod its IB VFs.

``resourceName`` is the bare device-plugin name (the operator adds ``nvidia.com/``);
``networkNamespace`` is the job's namespace, because pod annotations resolve network names in
their own namespace; ``ipam`` is a JSON string spliced verbatim into the NAD.
"""

from __future__ import annotations

from typing import Any

from ...artifacts import Artifact, Kind
from ...resolve import ResolvedCluster
from ...resolve.aks import WHEREABOUTS_KUBECONFIG, ResolvedAks
from ._yaml import json_block, path, yaml_file

FILE = "hostdevicenetwork.yaml"


def ipam_config(cluster: ResolvedCluster, aks: ResolvedAks) -> dict[str, Any]:
    if aks.ipam == "nv-ipam":
        return {"type": "nv-ipam", "poolName": aks.ipam_pool_name}
    return {"type": "whereabouts", "datastore": "kubernetes", "kubernetes": {"kubeconfig": WHEREABOUTS_KUBECONFIG},
            "range": aks.ipam_range, "exclude": [], "log_file": "/var/log/whereabouts.log", "log_level": "info"}


def host_device_network(cluster: ResolvedCluster, aks: ResolvedAks) -> dict[str, Any]:
    return {
        "apiVersion": "mellanox.com/v1alpha1", "kind": "HostDeviceNetwork",
        "metadata": {"name": aks.network_name},
        "spec": {"networkNamespace": aks.namespace, "resourceName": aks.resource_name,
                 "ipam": json_block(ipam_config(cluster, aks))},
    }


def render(cluster: ResolvedCluster, aks: ResolvedAks) -> list[Artifact]:
    if not aks.uses_host_device_network:
        return []
    text = yaml_file(cluster, [host_device_network(cluster, aks)],
                     f"HostDeviceNetwork {aks.network_name} (cluster-scoped): {aks.ib_resource} VFs for pods in namespace {aks.namespace},",
                     f"addresses from {aks.ipam} in {aks.ipam_range}.")
    return [Artifact(path(FILE), text, Kind.HOST_DEVICE_NETWORK, "aks")]
