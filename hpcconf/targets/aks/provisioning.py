"""The AKS provisioning script: az commands, helm installs, manifests, Volcano, the jobs.

Create or update: every az step checks what exists first (``az aks show`` / ``az aks nodepool show``),
so the script applies a reviewed spec change when run again: a new pool is added, a count scaled, a
Kubernetes version upgraded; what AKS cannot change in place (a pool's VM size, OS SKU, OS disk) stops
the script before it changes anything. It never deletes a pool.

Every value comes from the spec through shell variables set once at the top (quoted); the
GPU-driver opt-out is spelled the way the pinned az CLI needs (``--gpu-driver none`` from
2.72.2, the ``SkipGPUDriverInstall=true`` tag before; never jingchaozhang.github.io's
``SkipGPUDriverInstallation``); every ``helm upgrade -i`` pins ``--version``.
"""

from __future__ import annotations

from typing import Any, Callable, Optional

from ...artifacts import Artifact, Kind
from ...resolve import GpuOperator, ResolvedCluster
from ...resolve.aks import ChartPin, ResolvedAks
from ...templating import generated_by, render_template
from . import gpu_operator, health_checks, host_device_network, network_operator, nfd_values, volcano_job
from ._yaml import path

FILE = "provision.sh"
QUOTE = "'"
NCP_CRD = "nicclusterpolicies.mellanox.com"
IPPOOL_CRD = "ippools.nv-ipam.nvidia.com"  # installed once the NicClusterPolicy deploys nv-ipam


def sh_quote(value: object) -> str:
    """Always single-quoted (not only when needed), so a reviewer sees every spec value is literal."""
    return "'" + str(value).replace("'", "'\"'\"'") + "'"


def volcano_manifest_url(version: str) -> str:
    return f"https://raw.githubusercontent.com/volcano-sh/volcano/v{version.lstrip('v')}/installer/volcano-development.yaml"


def variables(cluster: ResolvedCluster, aks: ResolvedAks) -> list[tuple[str, str]]:
    pool = aks.pool
    out = [
        ("AZ_CLI_VERSION", cluster.versions.az_cli),  # what the opt-out below is spelled for (lint XA004 reads it)
        ("RESOURCE_GROUP", cluster.resource_group),
        ("LOCATION", cluster.location),
        ("CLUSTER_NAME", cluster.name),
    ]
    out += [("KUBERNETES_VERSION", aks.kubernetes_version), ("OS_SKU", aks.os_sku)]
    out += [(name, value) for name, _flag, value in aks.cidr_options]
    if aks.acr_name:
        out += [("ACR_NAME", aks.acr_name), ("TEST_IMAGE", f"{aks.test_image.name}:{aks.test_image.tag}")]
    out += [
        ("SYSTEM_POOL", aks.settings.system_pool_name),
        ("SYSTEM_POOL_COUNT", str(aks.settings.system_pool_count)),
        ("SYSTEM_POOL_SKU", aks.settings.system_pool_sku),
        ("GPU_POOL", pool.name),
        ("GPU_POOL_COUNT", str(pool.count)),
        ("GPU_POOL_SKU", pool.sku.name),
        ("GPU_POOL_OS_DISK_GB", str(pool.os_disk_gb)),
        ("GPUS_PER_NODE", str(aks.gpus_per_worker)),
    ]
    if aks.infiniband:
        out.append(("IB_NICS_PER_NODE", str(aks.ib_nics_per_worker)))
    out += [
        ("OPERATORS_NAMESPACE", aks.operators_namespace),
        ("JOB_NAMESPACE", aks.namespace),
        ("JOB_NAME", aks.job_name),
    ]
    return out


def pool_steps(cluster: ResolvedCluster, aks: ResolvedAks) -> list[dict[str, Any]]:
    """Every spec pool's create-or-scale step, the test pool first (through its variables above), the
    others with their values quoted in place; GPU pools get the GPU-driver opt-out."""
    test = {"name": aks.pool_name, "gpu": True, "name_ref": '"$GPU_POOL"', "count_ref": '"$GPU_POOL_COUNT"',
            "sku_ref": '"$GPU_POOL_SKU"', "disk_ref": '"$GPU_POOL_OS_DISK_GB"'}
    others = [{"name": p.name, "gpu": p.has_gpus, "name_ref": sh_quote(p.name), "count_ref": sh_quote(p.count),
               "sku_ref": sh_quote(p.sku.name), "disk_ref": sh_quote(p.os_disk_gb)}
              for p in cluster.pools if p.name != aks.pool_name]
    return [test, *others]


def readiness_waits(cluster: ResolvedCluster, aks: ResolvedAks) -> list[dict[str, Any]]:
    """One wait per GPU pool: its GPUs (its vendor's resource), and its IB VFs where it has InfiniBand,
    allocatable on every node."""
    waits = []
    for p in cluster.gpu_pools:
        test = p.name == aks.pool_name
        ib = p.ib_nics_per_node if p.infiniband else 0
        waits.append({"pool_ref": "$GPU_POOL" if test else p.name,
                      "gpus_ref": '"$GPUS_PER_NODE"' if test else sh_quote(p.gpus_per_node),
                      "ib_ref": ('"$IB_NICS_PER_NODE"' if test else sh_quote(ib)) if ib else None,
                      # the pool's own device plugin: nvidia.com/gpu, or amd.com/gpu on an AMD pool
                      "gpu_resource_jsonpath": p.accelerator.device_resource.replace(".", "\\.")})
    return sorted(waits, key=lambda w: w["pool_ref"] != "$GPU_POOL")  # the test pool first


def job_steps(aks: ResolvedAks) -> list[dict[str, Any]]:
    return [{"pool": job.pool_name, "name_ref": "$JOB_NAME" if i == 0 else job.job_name}
            for i, job in enumerate(aks.jobs)]


def helm_releases(cluster: ResolvedCluster, aks: ResolvedAks) -> list[dict[str, Any]]:
    v = cluster.versions
    network_steps: list[dict[str, Any]] = []  # after the chart: apply manifests once their CRDs exist
    if not aks.ncp_from_values:
        network_steps += [{"wait_crd": NCP_CRD}, {"apply": network_operator.NCP_FILE}]
        if aks.uses_host_device_network and aks.ipam == "nv-ipam":
            network_steps += [{"wait_crd": IPPOOL_CRD}, {"apply": network_operator.IPPOOL_FILE}]
    no_comment = (f"network-operator {v.network_operator}: NicClusterPolicy rendered by the chart from values"
                  if aks.ncp_from_values else
                  f"network-operator {v.network_operator}: the chart no longer renders the NicClusterPolicy; apply it")
    nfd, network = _pinned(aks.nfd_chart), _pinned(aks.network_operator_chart)
    releases: list[dict[str, Any]] = [
        {"name": "node-feature-discovery", "chart": nfd.chart, "repo": nfd.repo,
         "version": sh_quote(nfd.helm_version), "values_file": nfd_values.FILE,
         "then": ([{"wait_crd": nfd_values.NODE_FEATURE_RULE_CRD}, {"apply": nfd_values.RULE_FILE}]
                  if aks.ib_vf_rule else []),
         "comment": f"node-feature-discovery {v.node_feature_discovery}: labels the operators select on"},
        {"name": "network-operator", "chart": network.chart, "repo": network.repo,
         "version": sh_quote(network.helm_version), "values_file": network_operator.VALUES_FILE,
         "then": network_steps, "comment": no_comment},
        *gpu_operator_releases(cluster, aks),
    ]
    for release in releases:
        release.setdefault("sets", [])
    return [r for r in releases if r["name"] != "network-operator" or aks.infiniband]


def _pinned(chart: Optional[ChartPin]) -> ChartPin:
    if chart is None:  # resolve_aks pins every chart provision.sh installs
        raise RuntimeError("AKS build without a resolved chart pin")
    return chart


def nvidia_releases(cluster: ResolvedCluster, aks: ResolvedAks) -> list[dict[str, Any]]:
    v, chart = cluster.versions, _pinned(aks.gpu_operator_chart)
    return [{"name": gpu_operator.release(aks), "chart": chart.chart, "repo": chart.repo,
             "version": sh_quote(chart.helm_version), "values_file": gpu_operator.values_file(aks), "then": [],
             "comment": f"gpu-operator {v.gpu_operator}: driver, container toolkit, device plugin"}]


def amd_releases(cluster: ResolvedCluster, aks: ResolvedAks) -> list[dict[str, Any]]:
    """cert-manager (when the operator's chart needs it) and the operator KMM builds the driver with."""
    chart, cert_manager = _pinned(aks.gpu_operator_chart), aks.cert_manager
    prerequisite = [] if cert_manager is None else [
        {"name": "cert-manager", "chart": cert_manager.chart, "repo": cert_manager.repo,
         "version": sh_quote(cert_manager.helm_version), "values_file": None, "then": [],
         "sets": [("crds.enabled", "true")],
         "comment": f"cert-manager {cert_manager.version}: {aks.accelerator.operator_label}'s prerequisite (its chart README)"}]
    return [
        *prerequisite,
        {"name": gpu_operator.release(aks), "chart": chart.chart, "repo": chart.repo,
         "version": sh_quote(chart.helm_version), "values_file": gpu_operator.values_file(aks), "then": [],
         "comment": f"{aks.accelerator.operator_label.removeprefix('the ')} {chart.version}: {aks.accelerator.driver_name} "
                    f"driver (KMM), device plugin ({aks.gpu_resource}), node labeller; the chart renders the DeviceConfig"},
    ]


# The Helm releases that install each operator a profile (data/accelerators.yaml) can name.
GPU_OPERATOR_RELEASES: dict[GpuOperator, Callable[[ResolvedCluster, ResolvedAks], list[dict[str, Any]]]] = {
    GpuOperator.NVIDIA: nvidia_releases, GpuOperator.AMD: amd_releases}


def gpu_operator_releases(cluster: ResolvedCluster, aks: ResolvedAks) -> list[dict[str, Any]]:
    """NVIDIA's gpu-operator, or for AMD pools cert-manager and AMD's operator."""
    return GPU_OPERATOR_RELEASES[aks.accelerator.operator](cluster, aks)


def driver_secret(aks: ResolvedAks) -> dict[str, Any] | None:
    """The registry secret KMM pushes the AMD driver image with (None for NVIDIA pools)."""
    if not aks.accelerator.driver_built_by_operator:
        return None
    chart = aks.accelerator.operator_chart
    return {"name": gpu_operator.driver_secret_name(aks), "acr": bool(aks.acr_name),
            "docs": chart.driver_docs if chart is not None else "",
            "image": gpu_operator.driver_image(aks)}


def render(cluster: ResolvedCluster, aks: ResolvedAks) -> list[Artifact]:
    v = cluster.versions
    driver_note = v.gpu_driver or "(the chart's default)"
    if aks.accelerator.driver_built_by_operator:
        driver_note = f"{aks.operator_driver_version} ({aks.accelerator.driver_name}, built by KMM)"
    installs = ", ".join(f"{r['name']} {r['version'].strip(QUOTE).lstrip('v')}" for r in helm_releases(cluster, aks)) + \
        f" and Volcano {v.volcano}"
    text = render_template(
        "aks/provision.sh.j2",
        header=generated_by(cluster.spec_file),
        cluster_name=cluster.name, pool_name=aks.pool_name, pool_count=aks.worker_replicas, pool_sku=aks.sku,
        installs=installs, az_cli=v.az_cli,
        variables=[(name, sh_quote(value)) for name, value in variables(cluster, aks)],
        pools=pool_steps(cluster, aks), acr=bool(aks.acr_name),
        kubernetes_version=aks.kubernetes_version,
        cidr_flags=[(flag, name) for name, flag, _value in aks.cidr_options],
        opt_out=aks.gpu_driver_opt_out, driver_note=driver_note, flag_since=aks.gpu_driver_flag_since,
        helm_releases=helm_releases(cluster, aks),
        host_device_network=host_device_network.FILE if aks.uses_host_device_network else None,
        volcano_version=v.volcano, volcano_url=volcano_manifest_url(v.volcano),
        ib_resource=aks.ib_resource if any(w["ib_ref"] for w in readiness_waits(cluster, aks)) else None,
        waits=readiness_waits(cluster, aks), jobs=job_steps(aks),
        ib_resource_jsonpath=aks.ib_resource.replace(".", "\\."),
        profile=aks.accelerator, driver_secret=driver_secret(aks),
        rbac_file=volcano_job.RBAC_FILE, job_files=volcano_job.job_files(aks), launcher_task=aks.launcher_task,
        health_files=health_checks.files(cluster),
    )
    return [Artifact(path(FILE), text, Kind.SHELL_SCRIPT, "aks")]
