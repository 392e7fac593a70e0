"""node-feature-discovery values (the 2023 NDm_v4 AKS walkthroughs' ``--set-json`` flags as a values file).

The operators select nodes by NFD labels: network-operator operands by
``feature.node.kubernetes.io/pci-15b3.present``, gpu-operator by ``pci-10de.present`` (or the
class-qualified forms). nfd-worker's built-in PCI defaults (classes 03/0b40/12, label fields
class+vendor) would produce ``pci-0207_15b3.present`` instead, which nothing selects, so the
whitelist and ``deviceLabelFields: [vendor]`` are set here.
"""

from __future__ import annotations

from ...artifacts import Artifact, Kind
from ...resolve import ResolvedCluster
from ...resolve.aks import ResolvedAks
from ._yaml import path, yaml_file

# AKS node labels: system pool mode, and the label AKS puts on GPU (N-series) nodes.
SYSTEM_POOL_SELECTOR = {"kubernetes.azure.com/mode": "system"}
GPU_POOL_SELECTOR = {"kubernetes.azure.com/accelerator": "nvidia"}
# PCI classes: 02 network (0200 Ethernet, 0207 InfiniBand), 03 display (0302 3D controller = A100/H100).
PCI_CLASS_WHITELIST = ["02", "03", "0200", "0207"]
PCI_LABEL_FIELDS = ["vendor"]  # labels pci-<vendor>.present, what both operators select on
# AMD Instinct GPUs are PCI class 12 (processing accelerator: an MI300X VF is 1200), and AKS's accelerator
# label names NVIDIA only: for AMD pools the workers run on every node and the whitelist adds class 12,
# so the AMD GPU operator's NodeFeatureRule (AMD PCI device ids -> amd-gpu / amd-vgpu) sees the GPUs.
AMD_PCI_CLASS = "12"

FILE = "nfd-values.yaml"


def values(cluster: ResolvedCluster, amd: bool = False) -> dict:
    worker: dict = {} if amd else {"nodeSelector": dict(GPU_POOL_SELECTOR)}
    worker["config"] = {"sources": {"pci": {
        "deviceClassWhitelist": list(PCI_CLASS_WHITELIST) + ([AMD_PCI_CLASS] if amd else []),
        "deviceLabelFields": list(PCI_LABEL_FIELDS),
    }}}
    return {"master": {"nodeSelector": dict(SYSTEM_POOL_SELECTOR)}, "worker": worker}


def render(cluster: ResolvedCluster, aks: ResolvedAks) -> list[Artifact]:
    version = cluster.versions.node_feature_discovery
    amd = aks.gpu_vendor == "amd"
    comment = (["Workers run on every node (AKS labels only NVIDIA nodes as accelerators) and label PCI",
                "vendors and class 12 devices, what network-operator and the AMD GPU operator's rule select on."]
               if amd else
               ["Workers run on GPU nodes only and label them pci-15b3.present / pci-10de.present,",
                "the labels network-operator and gpu-operator select on."])
    text = yaml_file(cluster, [values(cluster, amd)],
                     f"node-feature-discovery chart {version} values for {cluster.name}.", *comment)
    return [Artifact(path(FILE), text, Kind.HELM_NFD, "aks")]
