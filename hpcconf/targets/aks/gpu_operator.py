"""gpu-operator values: the driver and toolkit from the operator, NFD from the standalone chart.

``driver.rdma.enabled`` loads nvidia-peermem, which needs MOFED: it is on exactly when the
network-operator deploys the OFED/DOCA driver (InfiniBand pools). The node pool is created
without the AKS GPU driver, so ``driver.enabled`` is true.
"""

from __future__ import annotations

from ...artifacts import Artifact, Kind
from ...resolve import ResolvedCluster
from ...resolve.aks import ResolvedAks
from ._yaml import path, yaml_file

FILE = "gpu-operator-values.yaml"


def values(cluster: ResolvedCluster, aks: ResolvedAks) -> dict:
    driver: dict = {"enabled": True}
    if cluster.versions.gpu_driver:
        driver["version"] = cluster.versions.gpu_driver
    driver["rdma"] = {"enabled": aks.gpudirect_rdma}
    return {
        "nfd": {"enabled": False},  # node-feature-discovery is installed on its own (nfd-values.yaml)
        "driver": driver,
        "toolkit": {"enabled": True},
    }


def render(cluster: ResolvedCluster, aks: ResolvedAks) -> list[Artifact]:
    text = yaml_file(cluster, [values(cluster, aks)],
                     f"gpu-operator chart v{cluster.versions.gpu_operator.lstrip('v')} values for {cluster.name}.")
    return [Artifact(path(FILE), text, Kind.HELM_GPU_OPERATOR, "aks")]
