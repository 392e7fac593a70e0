"""network-operator: chart values, and from 24.10 on the NicClusterPolicy manifest.

Up to 24.7.x the chart renders the NicClusterPolicy from values (``deployCR``, ``ofedDriver``,
``sriovDevicePlugin.resources``, ``secondaryNetwork``). From 24.10 those keys are gone and helm
ignores them silently (commit 8fc96f20), so the policy is emitted as its own manifest, with the
same content the old template produced: sriov device plugin with prefix ``nvidia.com`` and
``isRdma``, selectors vendor 15b3 + link type infiniband (so the Ethernet VF of accelerated
networking is not claimed), multus + CNI plugins, and an IPAM. whereabouts stays available
until the CRD drops ``secondaryNetwork.ipamPlugin`` (25.10, commit 63c7ea65); nv-ipam with an
IPPool from then on.
"""

from __future__ import annotations

from typing import Any

from ...artifacts import Artifact, Kind
from ...resolve import ResolvedCluster
from ...resolve.aks import MELLANOX_VENDOR, NCP_NAME, NETWORK_OPERATOR_REPO, NFD_LABEL_MELLANOX, ResolvedAks
from ._yaml import json_block, path, yaml_file

VALUES_FILE = "network-operator-values.yaml"
NCP_FILE = "nicclusterpolicy.yaml"
IPPOOL_FILE = "ippool.yaml"
# Workaround for doca-driver-build#52 (openibd restart failing on NDm_A100_v4), Azure PR #55.
OFED_BLACKLIST_ENV = {"name": "OFED_BLACKLIST_MODULES_FILE", "value": "/host/etc/modprobe.d/blacklist-ofed-modules.conf"}


def sriov_selector(cluster: ResolvedCluster) -> dict[str, Any]:
    return {"vendors": [MELLANOX_VENDOR], "linkTypes": ["infiniband"]}


def values(cluster: ResolvedCluster, aks: ResolvedAks) -> dict[str, Any]:
    nfd: dict[str, Any] = {"enabled": False}  # node-feature-discovery runs standalone (nfd-values.yaml)
    if aks.nfd_rules_key:
        nfd["deployNodeFeatureRules"] = False  # nfd-values.yaml already yields pci-15b3.present
    if not aks.ncp_from_values:
        return {"nfd": nfd, "sriovNetworkOperator": {"enabled": False}}
    ofed: dict[str, Any] = {"deploy": aks.infiniband}
    if aks.ofed_version:
        ofed["version"] = aks.ofed_version
    out: dict[str, Any] = {
        "deployCR": True,
        "nfd": nfd,
        "ofedDriver": ofed,
        # The shared RDMA plugin would expose rdma/<name>, which cannot back a HostDeviceNetwork; its
        # default is deploy: true, so turn it off explicitly.
        "rdmaSharedDevicePlugin": {"deploy": False},
        "sriovDevicePlugin": {
            "deploy": aks.infiniband,
            "resources": [{"name": aks.resource_name, **sriov_selector(cluster)}],
        },
        "secondaryNetwork": {
            "deploy": aks.uses_host_device_network,
            "cniPlugins": {"deploy": aks.uses_host_device_network},
            "multus": {"deploy": aks.uses_host_device_network},
            "ipamPlugin": {"deploy": aks.uses_host_device_network},
            "ipoib": {"deploy": aks.ipoib},
        },
        "sriovNetworkOperator": {"enabled": False},
    }
    return out


def _component(image: str, tag: str | None) -> dict[str, Any]:
    return {"image": image, "repository": NETWORK_OPERATOR_REPO, "version": tag}


def nic_cluster_policy(cluster: ResolvedCluster, aks: ResolvedAks) -> dict[str, Any]:
    """The NicClusterPolicy a >= 24.10 network-operator needs (what the 24.7 chart rendered)."""
    version = aks.network_operand_tag
    spec: dict[str, Any] = {
        "nodeAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": {"nodeSelectorTerms": [
            {"matchExpressions": [{"key": NFD_LABEL_MELLANOX, "operator": "In", "values": ["true"]}]}]}},
        "ofedDriver": {"image": "doca-driver", "repository": NETWORK_OPERATOR_REPO, "version": aks.ofed_version,
                       "env": [dict(OFED_BLACKLIST_ENV)]},
        "sriovDevicePlugin": {
            **_component("sriov-network-device-plugin", version),
            "config": json_block({"resourceList": [{
                "resourcePrefix": "nvidia.com", "resourceName": aks.resource_name,
                "selectors": {**sriov_selector(cluster), "isRdma": True}}]}),
        },
    }
    if aks.uses_host_device_network:
        secondary: dict[str, Any] = {"cniPlugins": _component("plugins", version), "multus": _component("multus-cni", version)}
        if aks.ipoib:
            secondary["ipoib"] = _component("ipoib-cni", version)
        if aks.ipam == "whereabouts":
            secondary["ipamPlugin"] = _component("whereabouts", version)
        spec["secondaryNetwork"] = secondary
        if aks.ipam == "nv-ipam":
            spec["nvIpam"] = {**_component("nvidia-k8s-ipam", version), "enableWebhook": False}
    return {"apiVersion": "mellanox.com/v1alpha1", "kind": "NicClusterPolicy",
            "metadata": {"name": NCP_NAME}, "spec": spec}


def ip_pool(cluster: ResolvedCluster, aks: ResolvedAks) -> dict[str, Any]:
    """nv-ipam pool backing the HostDeviceNetwork's addresses (lives with the operator)."""
    return {
        "apiVersion": "nv-ipam.nvidia.com/v1alpha1", "kind": "IPPool",
        "metadata": {"name": aks.ipam_pool_name, "namespace": aks.operators_namespace},
        "spec": {
            "subnet": aks.ipam_range,
            "perNodeBlockSize": aks.ipam_block_size,
            "nodeSelector": {"nodeSelectorTerms": [{"matchExpressions": [
                {"key": NFD_LABEL_MELLANOX, "operator": "In", "values": ["true"]}]}]},
        },
    }


def render(cluster: ResolvedCluster, aks: ResolvedAks) -> list[Artifact]:
    if not aks.infiniband:
        return []  # no IB HCAs: nothing for the network-operator to drive (no OFED, VFs or secondary network)
    version = cluster.versions.network_operator
    how = ("the chart renders the NicClusterPolicy from these values" if aks.ncp_from_values
           else f"NicClusterPolicy keys are gone from the chart since 24.10: apply {NCP_FILE} after installing")
    out = [Artifact(path(VALUES_FILE), yaml_file(cluster, [values(cluster, aks)],
                                                 f"network-operator chart {version} values for {cluster.name};", how + "."),
                    Kind.HELM_NETWORK_OPERATOR, "aks")]
    if not aks.ncp_from_values:
        out.append(Artifact(path(NCP_FILE), yaml_file(cluster, [nic_cluster_policy(cluster, aks)],
                                                      f"NicClusterPolicy for network-operator {version} (cluster-scoped)."),
                            Kind.NIC_CLUSTER_POLICY, "aks"))
        if aks.uses_host_device_network and aks.ipam == "nv-ipam":
            out.append(Artifact(path(IPPOOL_FILE), yaml_file(cluster, [ip_pool(cluster, aks)],
                                                             f"nv-ipam IPPool for HostDeviceNetwork {aks.network_name}."),
                                Kind.K8S_MANIFEST, "aks"))
    return out
