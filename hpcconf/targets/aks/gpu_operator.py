"""GPU operator values: NVIDIA's gpu-operator for NVIDIA pools, AMD's GPU operator for AMD Instinct pools.

NVIDIA: the driver and toolkit from the operator, NFD from the standalone chart.
``driver.rdma.enabled`` loads nvidia-peermem, which needs MOFED: it is on exactly when the
network-operator deploys the OFED/DOCA driver (InfiniBand pools). The node pool is created
without the AKS GPU driver, so ``driver.enabled`` is true.

AMD (ROCm/gpu-operator chart ``gpu-operator-charts``, keys of helm-charts-k8s/values.yaml at the pinned
tag): the chart renders the ``DeviceConfig`` named ``default`` from ``deviceConfig.spec``
(templates/default-deviceconfig.yaml, ``crds.defaultCR.install``), so no separate CR is applied.
AKS node images carry no ROCm driver: the operator builds the amdgpu module with KMM
(``driver.enable``, the inbox module blacklisted) and pushes the driver image to the test image's
registry. The DeviceConfig selects the test pool's nodes by their AKS agent-pool label rather than
by the chart's NFD labels, which differ between bare-metal GPUs (``amd-gpu``) and SR-IOV virtual
functions (``amd-vgpu``, PCI 1002:74b5; the chart's README: VMs with VFs need the latter): the pool
label holds whichever way the VM presents its GPUs. NFD is installed on its own (nfd-values.yaml).
"""

from __future__ import annotations

from typing import Any, Callable

from ...artifacts import Artifact, Kind
from ...resolve import GpuOperator, ResolvedCluster
from ...resolve.aks import ChartPin, ResolvedAks
from ._yaml import path, yaml_file

AGENTPOOL_LABEL = "kubernetes.azure.com/agentpool"  # AKS puts it on every node of a node pool


def release(aks: ResolvedAks) -> str:
    """The Helm release of the profile's operator (data/accelerators.yaml operator_chart.release)."""
    chart = aks.accelerator.operator_chart
    if chart is None or not chart.release:  # resolve_aks pins a chart for every AKS GPU pool
        raise RuntimeError(f"{aks.accelerator.operator_label}: its profile names no operator release")
    return chart.release


def values_file(aks: ResolvedAks) -> str:
    return f"{release(aks)}-values.yaml"


def driver_secret_name(aks: ResolvedAks) -> str:
    """The docker-registry secret provision.sh creates for the operator's push of the driver it builds."""
    return f"{aks.accelerator.driver_name}-driver-registry"


def values(cluster: ResolvedCluster, aks: ResolvedAks) -> dict[str, Any]:
    driver: dict[str, Any] = {"enabled": True}
    if cluster.versions.gpu_driver:
        driver["version"] = cluster.versions.gpu_driver
    driver["rdma"] = {"enabled": aks.gpudirect_rdma}
    return {
        "nfd": {"enabled": False},  # node-feature-discovery is installed on its own (nfd-values.yaml)
        "driver": driver,
        "toolkit": {"enabled": True},
    }


def amd_values(cluster: ResolvedCluster, aks: ResolvedAks) -> dict[str, Any]:
    return {
        "node-feature-discovery": {"enabled": False},  # installed on its own (nfd-values.yaml)
        "kmm": {"enabled": True},  # builds and loads the amdgpu module on the nodes
        "crds": {"defaultCR": {"install": True}},  # the chart renders the DeviceConfig below
        "deviceConfig": {"spec": {
            "selector": {AGENTPOOL_LABEL: aks.pool_name},
            "driver": {
                "enable": True,
                "blacklist": True,  # the out-of-tree module replaces the inbox amdgpu
                "version": aks.operator_driver_version,
                "image": driver_image(aks),
                "imageRegistrySecret": {"name": driver_secret_name(aks)},
            },
            "devicePlugin": {"enableDevicePlugin": True, "enableNodeLabeller": True},
        }},
    }


def driver_image(aks: ResolvedAks) -> str:
    """The image the operator pushes the driver it builds to: the profile's repository under the test image's registry."""
    return f"{aks.test_image.registry}/{aks.accelerator.driver_image}"


def operator_chart(aks: ResolvedAks) -> ChartPin:
    if aks.gpu_operator_chart is None:  # resolve_aks pins it for every profile with an operator chart
        raise RuntimeError("GPU pool without a resolved operator chart")
    return aks.gpu_operator_chart


def render_amd(cluster: ResolvedCluster, aks: ResolvedAks) -> list[Artifact]:
    chart = operator_chart(aks)
    text = yaml_file(cluster, [amd_values(cluster, aks)],
                     f"{aks.accelerator.operator_label.removeprefix('the ')} chart ({chart.chart}) v{chart.version} values for "
                     f"{cluster.name}; keys of {chart.source}.")
    return [Artifact(path(values_file(aks)), text, Kind.HELM_AMD_GPU_OPERATOR, "aks")]


def render_nvidia(cluster: ResolvedCluster, aks: ResolvedAks) -> list[Artifact]:
    text = yaml_file(cluster, [values(cluster, aks)],
                     f"gpu-operator chart v{cluster.versions.gpu_operator.lstrip('v')} values for {cluster.name}.")
    return [Artifact(path(values_file(aks)), text, Kind.HELM_GPU_OPERATOR, "aks")]


# The values file of each operator a profile (data/accelerators.yaml) can name.
RENDERERS: dict[GpuOperator, Callable[[ResolvedCluster, ResolvedAks], list[Artifact]]] = {
    GpuOperator.NVIDIA: render_nvidia, GpuOperator.AMD: render_amd}


def render(cluster: ResolvedCluster, aks: ResolvedAks) -> list[Artifact]:
    return RENDERERS[aks.accelerator.operator](cluster, aks)
