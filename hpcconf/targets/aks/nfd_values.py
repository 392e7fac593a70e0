"""node-feature-discovery values (the 2023 NDm_v4 AKS walkthroughs' ``--set-json`` flags as a values file).

The operators select nodes by NFD labels: network-operator operands by
``feature.node.kubernetes.io/pci-15b3.present``, gpu-operator by ``pci-10de.present`` (or the
class-qualified forms). nfd-worker's built-in PCI defaults (classes 03/0b40/12, label fields
class+vendor) would produce ``pci-0207_15b3.present`` instead, which nothing selects, so the
whitelist and ``deviceLabelFields: [vendor]`` are set here.
"""

from __future__ import annotations

from typing import Any

from ruamel.yaml.scalarstring import DoubleQuotedScalarString

from ...artifacts import Artifact, Kind
from ...resolve import ResolvedCluster
from ...resolve.aks import IbVfRule, ResolvedAks
from ._yaml import path, yaml_file

# AKS node labels: system pool mode, and the label AKS puts on GPU (N-series) nodes.
SYSTEM_POOL_SELECTOR = {"kubernetes.azure.com/mode": "system"}
GPU_POOL_SELECTOR = {"kubernetes.azure.com/accelerator": "nvidia"}
# PCI classes: 02 network (0200 Ethernet, 0207 InfiniBand), 03 display (0302 3D controller = A100/H100).
PCI_CLASS_WHITELIST = ["02", "03", "0200", "0207"]
NETWORK_CLASSES = ("02", "0200", "0207")
PCI_LABEL_FIELDS = ["vendor"]  # labels pci-<vendor>.present, what both operators select on
# AMD Instinct GPUs are PCI class 12 (processing accelerator: an MI300X VF is 1200), and AKS's accelerator
# label names NVIDIA only: for AMD pools the workers run on every node (data/accelerators.yaml,
# nfd_workers_on_every_node, nfd_extra_pci_classes). The AMD GPU operator's NodeFeatureRule matches pci.device
# ids, which NFD reports whatever the whitelist; class 12 labels pci-1002.present.

FILE = "nfd-values.yaml"
RULE_FILE = "nfd-network-rule.yaml"
RULE_NAME = "hpcconf-infiniband-vf"
NODE_FEATURE_RULE_CRD = "nodefeaturerules.nfd.k8s-sigs.io"


def values(cluster: ResolvedCluster, aks: ResolvedAks) -> dict[str, Any]:
    every_node = aks.accelerator.nfd_workers_on_every_node
    by_rule = aks.ib_vf_rule is not None
    worker: dict[str, Any] = {} if every_node else {"nodeSelector": dict(GPU_POOL_SELECTOR)}
    classes = [c for c in PCI_CLASS_WHITELIST if not (by_rule and c in NETWORK_CLASSES)]
    worker["config"] = {"sources": {"pci": {
        "deviceClassWhitelist": classes + list(aks.accelerator.nfd_extra_pci_classes),
        "deviceLabelFields": list(PCI_LABEL_FIELDS),
    }}}
    return {"master": {"nodeSelector": dict(SYSTEM_POOL_SELECTOR)}, "worker": worker}


def node_feature_rule(rule: IbVfRule) -> dict[str, Any]:
    """pci-15b3.present on the nodes with an InfiniBand VF only: Azure's reference rule, our ids, and the
    InfiniBand class (Azure's rule omits it), so an Ethernet-mode VF sharing an id (101e) labels nothing."""
    return {"apiVersion": "nfd.k8s-sigs.io/v1alpha1", "kind": "NodeFeatureRule", "metadata": {"name": RULE_NAME},
            "spec": {"rules": [{"name": RULE_NAME, "labels": {rule.label: "true"},
                                "matchFeatures": [{"feature": "pci.device", "matchExpressions": {
                                    # quoted: an id of digits only would otherwise be read as a number
                                    "vendor": {"op": "In", "value": [DoubleQuotedScalarString(rule.vendor)]},
                                    "device": {"op": "In", "value": [DoubleQuotedScalarString(i) for i in rule.device_ids]},
                                    "class": {"op": "In", "value": [DoubleQuotedScalarString(rule.pci_class)]}}}]}]}}


def render(cluster: ResolvedCluster, aks: ResolvedAks) -> list[Artifact]:
    version = cluster.versions.node_feature_discovery
    every_node = aks.accelerator.nfd_workers_on_every_node
    rule = aks.ib_vf_rule
    comment = (["Workers run on every node (AKS labels only NVIDIA nodes as accelerators) and label PCI",
                "vendors of display and class 12 devices, what the AMD GPU operator's rule selects on."]
               if every_node else
               ["Workers run on GPU nodes only and label them pci-10de.present (gpu-operator selects on it)."] if rule else
               ["Workers run on GPU nodes only and label them pci-15b3.present / pci-10de.present,",
                "the labels network-operator and gpu-operator select on."])
    if rule:
        comment.append(f"pci-15b3.present comes from {RULE_FILE} (InfiniBand VFs only), not from PCI class 02, "
                       "which an accelerated-networking VF shares.")
    text = yaml_file(cluster, [values(cluster, aks)],
                     f"node-feature-discovery chart {version} values for {cluster.name}.", *comment)
    artifacts = [Artifact(path(FILE), text, Kind.HELM_NFD, "aks")]
    if rule:
        rule_text = yaml_file(cluster, [node_feature_rule(rule)],
                              f"Labels {rule.label} on nodes with an InfiniBand VF (PCI {', '.join(rule.device_ids)}),",
                              f"the nodes the NicClusterPolicy deploys to; as {rule.reference}.")
        artifacts.append(Artifact(path(RULE_FILE), rule_text, Kind.K8S_MANIFEST, "aks"))
    return artifacts
