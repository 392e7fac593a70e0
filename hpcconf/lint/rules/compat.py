"""Compatibility rules: parts that each validate but do not work together today.

Facts come from the compatibility knowledge base (``hpcconf.knowledge.compat``, one public source
per table row). Spec rules (HPC2xx) read the spec and its resolved cluster and point at the spec
line to change; file rules (HELM1xx, DKR1xx, AZH1xx) judge hand-written files and stay silent on
artifacts hpcconf generated from a spec, whose spec rule already reports the same fact once.
"""

from __future__ import annotations

import datetime as dt
from typing import TYPE_CHECKING, Any, Iterator, Optional

from ...artifacts import Kind
from ...diagnostics import Diagnostic, Severity
from ...knowledge import azhop as azhop_kb
from ...knowledge import charts, compat, nccl_env
from ...knowledge.versions import version_key
from ...parsers.k8s import get
from ...rules_registry import Moment, rule, spec_rule
from ..chart_version import chart_version
from ..compiled_spec import CompiledSpec, set_by_user
from ..context import LintContext
from ..document import Document

if TYPE_CHECKING:
    from ...resolve.aks import ResolvedAks

CHART_FIELDS = {"network-operator": "network_operator", "gpu-operator": "gpu_operator",
                "node-feature-discovery": "node_feature_discovery", "volcano": "volcano"}


def _generated(doc: Document) -> bool:
    return doc.artifact is not None


def _today() -> dt.date:
    return dt.date.today()


# -- spec rules -----------------------------------------------------------------------------------

@spec_rule(code="HPC200", name="retired-vm-size", severity=Severity.ERROR, moment=Moment.JUDGE)
def retired_vm_size(compiled: CompiledSpec) -> Iterator[Diagnostic]:
    """A pool uses a VM size Azure has retired.

    ## What it catches
    A pool whose ``sku`` is a retired Azure size, e.g. the NCv3 sizes (``Standard_NC24rs_v3``),
    retired on 2025-09-30, in any spelling the catalog takes (``nc24rs_v3``).

    ## Why is this bad?
    Azure no longer allocates retired sizes: ``az aks nodepool add``, CycleCloud and az-hop all fail to
    create the nodes, so nothing hpcconf writes for the pool can run. Microsoft's NCv3 retirement notice
    (learn.microsoft.com, virtual-machines/sizes/retirement/ncv3-series-retirement) gives 2025-09-30.

    ## Example
    ```yaml
    pools:
      - {name: gpu, sku: Standard_NC24rs_v3, count: 2}
    ```

    ## Fix
    Move the pool to a current size (the message names the replacement, e.g. NC A100 v4).
    """
    spec = compiled.spec
    for i, pool in enumerate(spec.pools):
        retired = compat.sku_retirement(_catalog_name(compiled, pool.name) or pool.sku)
        if retired is not None and retired.passed(_today()):
            yield compiled.at(("pools", i, "sku"), f"{pool.sku} ({retired.name}) was retired on "
                              f"{retired.date.isoformat()}: Azure no longer creates these VMs",
                              hint=f"use {retired.replacement} (source: {retired.source})", prefer_value=True)


def _catalog_name(compiled: CompiledSpec, pool_name: str) -> Optional[str]:
    return next((p.sku.name for p in compiled.cluster.pools if p.name == pool_name), None)


@spec_rule(code="HPC201", name="gpu-driver-drops-architecture", severity=Severity.ERROR, moment=Moment.JUDGE)
def gpu_driver_drops_architecture(compiled: CompiledSpec) -> Iterator[Diagnostic]:
    """The GPU driver gpu-operator installs no longer supports the pool's GPU architecture.

    ## What it catches
    On ``aks``, a GPU pool whose architecture ended with an older driver branch than the one installed:
    ``versions.gpu_driver``, or gpu-operator's default when it is unset. Maxwell, Pascal and Volta
    (V100: NCv3, NDv2) end with R580; gpu-operator 26.7.0 installs 595.91.07 by default.

    ## Why is this bad?
    NVIDIA's Unix graphics feature deprecation schedule: "The release 580 series will be the last to
    support GPUs based on the Maxwell, Pascal, and Volta architectures". A 590+ driver does not bind the
    V100s, so the driver pod never becomes ready and no pod gets ``nvidia.com/gpu``.

    ## Example
    ```yaml
    pools:
      - {name: gpu, sku: Standard_ND40rs_v2, count: 2}
    versions:
      gpu_operator: 26.7.0
      gpu_driver: 595.91.07
    ```

    ## Fix
    Pin an R580 driver (``gpu_driver: 580.126.20``, gpu-operator 26.3.3's default) or drop
    ``gpu_driver``: hpcconf then pins the R580 driver itself for such pools.
    """
    spec, cluster = compiled.spec, compiled.cluster
    if "aks" not in spec.platforms:
        return
    driver = cluster.versions.gpu_driver or compat.gpu_operator_default_driver(cluster.versions.gpu_operator)
    if not driver:
        return
    field = next((f for f in ("gpu_driver", "gpu_operator") if set_by_user(spec.versions, f)), None)
    path = ("versions", field) if field else ("platforms",)
    for pool in cluster.gpu_pools:
        gpu = compiled.pool_skus[pool.name].gpu
        if compat.driver_drives(gpu.sm, driver) is False:
            arch = compat.gpu_architecture(gpu.sm)
            if arch is None:  # driver_drives() is False only for a known architecture
                continue
            pin = compat.legacy_driver_pin(gpu.sm)
            yield compiled.at(path,
                              f"driver {driver} (R{compat.driver_branch(driver)}) cannot drive pool '{pool.name}': "
                              f"{gpu.model} is {arch.name}, supported up to R{arch.last_branch}",
                              hint=f"pin versions.gpu_driver to an R{arch.last_branch} driver"
                                   + (f" such as {pin.driver}" if pin else "") + f" (source: {arch.source})",
                              prefer_value=True)


@spec_rule(code="HPC202", name="hca-without-rdma-stack", severity=Severity.ERROR, moment=Moment.JUDGE)
def hca_without_rdma_stack(compiled: CompiledSpec) -> Iterator[Diagnostic]:
    """A pool uses InfiniBand through an HCA no current RDMA driver stack supports.

    ## What it catches
    A pool with InfiniBand enabled whose SKU's HCA is a ConnectX-3 (NCv3's ``mlx4`` virtual function).

    ## Why is this bad?
    MLNX_OFED dropped ConnectX-3 in 5.1 (4.9 LTS is the last release for it) and DOCA-OFED never
    supported it. Every network-operator release ships MOFED 5.x or DOCA, and current Azure HPC images
    do too, so there is no RDMA stack for the HCA: NCCL falls back to sockets or fails over IB.

    ## Example
    ```yaml
    pools:
      - {name: gpu, sku: Standard_NC24rs_v3, count: 2}
    ```

    ## Fix
    Use a size with a ConnectX-5 or newer HCA, or set ``network.infiniband.enabled: false`` and run
    NCCL over TCP.
    """
    spec, cluster = compiled.spec, compiled.cluster
    if not spec.network.infiniband.enabled:
        return
    for i, pool in enumerate(cluster.pools):
        ib = compiled.pool_skus[pool.name].infiniband
        hca = compat.hca_generation(ib.hca) if ib else None
        if hca is not None and not hca.has_current_rdma_stack:
            yield compiled.at(("pools", i, "sku"), f"{pool.sku.name}'s {hca.generation} HCA has no RDMA stack: "
                              f"MLNX_OFED dropped it in {hca.unsupported_since} and DOCA never supported it",
                              hint="use a size with a ConnectX-5 or newer HCA, or set network.infiniband.enabled: "
                                   f"false (source: {hca.source})", prefer_value=True)


@spec_rule(code="HPC203", name="nccl-contradicts-base-image", severity=Severity.ERROR, moment=Moment.JUDGE)
def nccl_contradicts_base_image(compiled: CompiledSpec) -> Iterator[Diagnostic]:
    """``versions.nccl`` names another NCCL than the one the AKS test image's base ships.

    ## What it catches
    On ``aks``, ``versions.nccl`` set to a version other than the NCCL in ``test_image.base``, when the
    base is an NGC PyTorch image hpcconf knows (``nvcr.io/nvidia/pytorch:YY.MM-py3``).

    ## Why is this bad?
    The job runs the image's NCCL, not ``versions.nccl``; hpcconf and lint judge every ``NCCL_*``
    setting against ``versions.nccl``. ``nvcr.io/nvidia/pytorch:24.05-py3`` ships NCCL 2.21.5
    (NVIDIA PyTorch release notes 24.05): paired with 2.28.9, variables 2.21.5 does not read pass lint
    and are silently ignored in the job.

    ## Example
    ```yaml
    versions:
      nccl: 2.28.9
    test_image:
      base: nvcr.io/nvidia/pytorch:24.05-py3
    ```

    ## Fix
    Delete ``versions.nccl`` (hpcconf then takes the image's), or set it to the image's NCCL, or pick
    a base image that ships the NCCL you want.
    """
    spec = compiled.spec
    if "aks" not in spec.platforms or spec.test_image is None:
        return
    release = compat.ngc_release(spec.test_image.base)
    if release is None or not set_by_user(spec.versions, "nccl"):
        return
    if version_key(spec.versions.nccl) != version_key(release.nccl):
        yield compiled.at(("versions", "nccl"), f"versions.nccl {spec.versions.nccl} contradicts test_image.base: "
                          f"pytorch:{release.tag}-py3 ships NCCL {release.nccl} (CUDA {release.cuda})",
                          hint=f"set nccl: {release.nccl} or delete it (source: {release.source})", prefer_value=True)


@spec_rule(code="HPC204", name="unknown-version", severity=Severity.WARNING, moment=Moment.JUDGE)
def unknown_version(compiled: CompiledSpec) -> Iterator[Diagnostic]:
    """A pinned version is outside what hpcconf's tables know, so its facts are not checked.

    ## What it catches
    A chart version (``versions.gpu_operator``, ``network_operator``, ``node_feature_discovery``,
    ``volcano``) older or newer than every release hpcconf read; an NCCL version newer than the NCCL
    variable table; an AKS ``kubernetes_version`` newer than the newest Kubernetes schemas installed
    (kubernetes-validate: 1.37 with 1.37.0), whose manifests are judged as for that newest version; an NGC
    PyTorch base image tag whose NCCL hpcconf does not know (info).

    ## Why is this bad?
    Chart keys, defaults and NCCL variables are checked against tables per release. For
    ``gpu_operator: 99.0.0`` hpcconf would otherwise build and lint clean while knowing nothing about
    that chart: its default driver, its values keys. You lose the checks without being told.

    ## Example
    ```yaml
    versions:
      gpu_operator: 99.0.0
    ```

    ## Fix
    Pin a release hpcconf knows (the hint lists the newest), or accept the finding knowingly with
    ``# hpcconf: ignore[HPC204] reason`` on the line.
    """
    spec, cluster = compiled.spec, compiled.cluster
    if "aks" in spec.platforms:
        yield from _unknown_charts(compiled)
    yield from _unknown_nccl(compiled)
    if "aks" in spec.platforms:
        yield from _unknown_kubernetes(compiled)
    if "aks" in spec.platforms and spec.test_image is not None:
        tag = compat.ngc_pytorch_tag(spec.test_image.base)
        if tag is not None and compat.ngc_release(spec.test_image.base) is None:
            known = ", ".join(r.tag for r in compat.ngc_pytorch_releases())
            yield compiled.at(("test_image", "base"), f"hpcconf does not know which NCCL pytorch:{tag}-py3 ships; "
                              f"versions.nccl {cluster.versions.nccl} is taken as given",
                              hint=f"check NVIDIA's PyTorch release notes for {tag} (tags hpcconf knows: {known})",
                              prefer_value=True, severity=Severity.INFO)


def _unknown_charts(compiled: CompiledSpec) -> Iterator[Diagnostic]:
    spec = compiled.spec
    pinned = {"network-operator": spec.versions.network_operator, "gpu-operator": spec.versions.gpu_operator,
              "node-feature-discovery": spec.versions.node_feature_discovery, "volcano": spec.versions.volcano}
    for chart, field in CHART_FIELDS.items():
        version = pinned[chart]
        known = charts.known_versions(chart)
        if not known:
            continue
        key = version_key
        if key(known[0]) <= key(version) <= key(known[-1]):
            continue
        newest = charts.newest_version(chart)
        path = ("versions", field) if set_by_user(spec.versions, field) else ("versions",)
        yield compiled.at(path, f"{chart} {version} is outside the releases hpcconf knows ({known[0]} to {known[-1]}): "
                          "its values keys and defaults are not checked",
                          hint=f"pin a known release such as {newest}", prefer_value=True)


def _unknown_kubernetes(compiled: CompiledSpec) -> Iterator[Diagnostic]:
    """The manifests the spec builds are judged with the newest schemas held (``lint --kubernetes-version`` warns
    the same on stderr): fields and API versions the newer release added or removed are not checked."""
    from ...knowledge.k8s_openapi import schema_version

    spec, cluster = compiled.spec, compiled.cluster
    version = cluster.aks.kubernetes_version if cluster.aks is not None else None
    if not version:
        return
    held = schema_version(None)
    if version_key(str(version))[:2] <= version_key(held)[:2]:
        return
    path = ("aks", "kubernetes_version") if spec.aks is not None and set_by_user(spec.aks, "kubernetes_version") \
        else ("aks",)
    yield compiled.at(path, f"Kubernetes {version} is newer than the newest schemas hpcconf holds ({held}): the "
                      f"manifests are judged as for {held}, and fields or API versions {version} changed are not "
                      "checked", hint=f"pin kubernetes_version {held} or older, or update kubernetes-validate",
                      prefer_value=True)


def _unknown_nccl(compiled: CompiledSpec) -> Iterator[Diagnostic]:
    spec, cluster = compiled.spec, compiled.cluster
    version = str(cluster.versions.nccl)
    newest = str(nccl_env.newest_version())
    if version_key(version) <= version_key(newest):
        return
    path = ("versions", "nccl") if set_by_user(spec.versions, "nccl") else ("test_image", "base")
    yield compiled.at(path, f"NCCL {version} is newer than the NCCL variable table ({newest}): variables it added "
                      "or dropped are not checked", hint=f"pin NCCL {newest} or older", prefer_value=True)


@spec_rule(code="HPC205", name="doca-driver-node-os", severity=Severity.ERROR, moment=Moment.JUDGE)
def doca_driver_node_os(compiled: CompiledSpec) -> Iterator[Diagnostic]:
    """The doca-driver image does not exist for the OS the AKS nodes run.

    ## What it catches
    On ``aks`` with InfiniBand and a NicClusterPolicy doca-driver tag hpcconf knows: the node OS
    ``provision.sh`` pins (``aks.os_sku``, by default the Ubuntu AKS gives at ``aks.kubernetes_version``)
    is not one the tag is published for.

    ## Why is this bad?
    network-operator pulls ``doca-driver:<tag>-<os><version>-<arch>``; a tag missing for the node OS
    leaves the driver pod in ImagePullBackOff and no node gets RDMA. With ``--os-sku Ubuntu`` AKS gives
    Ubuntu 22.04 on Kubernetes 1.25-1.34 and 24.04 from 1.35 (AKS FAQ); Azure Linux has no doca-driver
    image at all.

    ## Example
    ```yaml
    versions:
      doca_ofed: doca3.4.1-26.04-1.1.0.0-1
    aks:
      os_sku: AzureLinux
    ```

    ## Fix
    Use an ``aks.os_sku`` (or a Kubernetes version whose default Ubuntu) the tag is published for.
    """
    cluster = compiled.cluster
    aks = cluster.aks
    if aks is None or not aks.infiniband or aks.ncp_from_values:
        return
    tag = compat.doca_driver_tag(aks.ofed_version)
    if tag is None:
        return
    node_os = {"Ubuntu2204": "ubuntu22.04", "Ubuntu2404": "ubuntu24.04"}.get(aks.os_sku, aks.os_sku)
    if node_os in tag.os:
        return
    settings = aks.settings
    path = ("aks", "os_sku") if settings.os_sku else ("aks", "kubernetes_version") if settings.kubernetes_version else ("platforms",)
    yield compiled.at(path, f"AKS nodes run {aks.os_sku} (Kubernetes {aks.kubernetes_version}); doca-driver "
                      f"{tag.tag} is published only for {', '.join(tag.os)}",
                      hint=f"choose an aks.os_sku the tag is published for (source: {tag.source})", prefer_value=True)


@rule(code="HPC206", name="cyclecloud-slurm-gpu-count", severity=Severity.INFO, kinds=(Kind.AZHOP_CONFIG,))
def cyclecloud_slurm_gpu_count(doc: Document, ctx: LintContext) -> Iterator[Diagnostic]:
    """The cyclecloud-slurm release AzHOP installs cannot correct a wrong GPU count for the queue's size.

    ## What it catches
    A spec with an ``azhop`` pool, or an az-hop ``config.yml`` queue, of a size the GPU-count fix concerns
    (``Standard_ND96isr_H100_v5``, ``Standard_ND96isr_H200_v5``: the NDv5 family) with a cyclecloud-slurm
    release older than 3.0.6 (``versions.cyclecloud_slurm``; in ``config.yml``
    ``slurm.cyclecloud_slurm_version``, whose absence means az-hop's 3.0.4).

    ## Why is this bad?
    azslurm takes each size's GPU count from what CycleCloud reports, which "for some regions and VM
    sizes, some subscriptions" get wrong (Azure/cyclecloud-slurm README, "Incorrect number of GPUs"):
    0 for ND H100 v5 (vanzod/ccslurm4ai#2), so no ``gres.conf`` is written and ``--gpus-per-node=8``
    never fits. The documented fix, a ``slurm_gpus`` entry in ``autoscale.json``'s ``default_resources``,
    is read from 3.0.6 on (commit f0c08b4, PR #206); 3.0.4's ``Partition.gpu_count`` takes the bucket's.
    Information only: whether a subscription reports the wrong count is not in the file.

    ## Example
    ```yaml
    platforms: [azhop]
    pools:
      - {name: gpu, sku: Standard_ND96isr_H100_v5, count: 2}
    ```

    ## Fix
    Upgrade the scheduler's cyclecloud-slurm project to 3.0.6 or newer (az-hop's ``config.yml`` offers up
    to 3.0.4), or use CycleCloud Workspace for Slurm; then run the generated
    ``azhop/scheduler/slurm-gpu-count.sh`` on the scheduler: it checks the project it finds (and changes
    nothing before 3.0.6), writes the override, runs ``azslurm scale`` (which restarts slurmctld) and
    checks the Gres Slurm has for each partition.
    """
    if not _generated(doc):  # a generated config.yml: its spec's finding says it
        yield from _gpu_count_in_config(doc)


@spec_rule(code="HPC206", name="cyclecloud-slurm-gpu-count", severity=Severity.INFO, moment=Moment.JUDGE,
           file_rule=True)
def cyclecloud_slurm_gpu_count_in_spec(compiled: CompiledSpec) -> Iterator[Diagnostic]:
    spec, cluster = compiled.spec, compiled.cluster
    azhop = cluster.azhop
    if azhop is None:
        return
    version = azhop.slurm.cyclecloud_slurm
    path = ("versions", "cyclecloud_slurm") if set_by_user(spec.versions, "cyclecloud_slurm") else None
    for i, pool in enumerate(cluster.pools):
        fix = compat.cyclecloud_slurm_gpu_count_fix(pool.sku.name, version)
        if fix is not None:
            yield compiled.at(path or ("pools", i, "sku"), _gpu_count_message(pool.sku.name, version, fix),
                              hint=_GPU_COUNT_HINT.format(source=fix.source), prefer_value=True)


_GPU_COUNT_HINT = ("if Slurm shows the wrong count, upgrade the scheduler's cyclecloud-slurm to 3.0.6 or newer, then run "
                   "azhop/scheduler/slurm-gpu-count.sh there (hpcconf build writes it; it changes nothing before 3.0.6) "
                   "(source: {source})")


def _gpu_count_message(size: str, version: str, fix: compat.GpuCountFix) -> str:
    return (f"cyclecloud-slurm {version} cannot correct a wrong GPU count for {size} (the autoscale.json slurm_gpus "
            f"override is read from {fix.fixed_in}): if this subscription reports 0, Slurm rejects --gpus-per-node")


def _gpu_count_in_config(doc: Document) -> Iterator[Diagnostic]:
    data = doc.data
    if not isinstance(data, dict) or not isinstance(data.get("queues"), list):
        return
    raw_slurm = data.get("slurm")
    slurm: dict[str, Any] = raw_slurm if isinstance(raw_slurm, dict) else {}
    version = str(slurm.get("cyclecloud_slurm_version") or azhop_kb.SCHEMA_DEFAULT_CYCLECLOUD_SLURM_VERSION)
    for i, queue in enumerate(data["queues"]):
        size = queue.get("vm_size") if isinstance(queue, dict) else None
        if not isinstance(size, str) or data.get("queue_manager") not in (None, "slurm"):
            continue
        fix = compat.cyclecloud_slurm_gpu_count_fix(size, version)
        if fix is None:
            continue
        path = ("slurm", "cyclecloud_slurm_version") if slurm.get("cyclecloud_slurm_version") else ("queues", i, "vm_size")
        yield doc.at_path(path, _gpu_count_message(size, version, fix), hint=_GPU_COUNT_HINT.format(source=fix.source),
                          prefer_value=True)


@spec_rule(code="HPC207", name="aks-kubernetes-version-unsupported", severity=Severity.ERROR, moment=Moment.JUDGE)
def aks_kubernetes_version_unsupported(compiled: CompiledSpec) -> Iterator[Diagnostic]:
    """The AKS Kubernetes version is past its end of life: ``az aks create`` refuses it.

    ## What it catches
    On ``aks``, an ``aks.kubernetes_version`` past the end of life in AKS's release calendar
    (learn.microsoft.com/azure/aks/supported-kubernetes-versions): 1.26 ended 2024-03-31, 1.31
    2025-11-01. A version still inside its long-term-support window is reported with that option. A minor
    older than the calendar's oldest (1.24, ended 2023-07-31), such as 1.22, ended before it: AKS retires
    minors in order.

    ## Why is this bad?
    ``provision.sh`` pins ``--kubernetes-version``; AKS creates no cluster at a version past its end of
    life (on the Premium tier with long-term support, only until the LTS end of life). The script stops
    at its first command and nothing of the cluster exists.

    ## Example
    ```yaml
    aks:
      kubernetes_version: "1.26"
    ```

    ## Fix
    Pin a supported minor (``az aks get-versions --location <region>`` lists them), or delete the key to
    get the newest version hpcconf knows.
    """
    cluster = compiled.cluster
    aks = cluster.aks
    if aks is None:
        return
    path = ("aks", "kubernetes_version") if aks.settings.kubernetes_version else ("platforms",)
    support = compat.aks_kubernetes_support(aks.kubernetes_version)
    if support is None:
        oldest = compat.aks_kubernetes_older_than_calendar(aks.kubernetes_version)
        if oldest is not None:
            yield compiled.at(path, f"AKS Kubernetes {aks.kubernetes_version} is older than {oldest.minor}, which "
                              f"reached its end of life on {oldest.end_of_life.isoformat()}: az aks create refuses it",
                              hint=f"pin a supported version (source: {oldest.source})", prefer_value=True)
        return
    state = support.creatable(_today())
    if state == "yes":
        return
    if state == "lts":
        assert support.lts_end_of_life is not None
        yield compiled.at(path, f"AKS Kubernetes {support.minor} reached end of life on {support.end_of_life.isoformat()}: "
                          "az aks create refuses it unless the cluster has long-term support (Premium tier), "
                          f"until {support.lts_end_of_life.isoformat()}",
                          hint=f"pin a supported version, or create the cluster with --tier premium "
                               f"--k8s-support-plan AKSLongTermSupport (source: {support.source})", prefer_value=True)
        return
    ended = support.lts_end_of_life or support.end_of_life
    yield compiled.at(path, f"AKS Kubernetes {support.minor} is past its end of life ({ended.isoformat()}): "
                      "az aks create refuses it", hint=f"pin a supported version (source: {support.source})",
                      prefer_value=True)


@spec_rule(code="HPC208", name="aks-gpu-driver-opt-out-retired", severity=Severity.WARNING, moment=Moment.JUDGE)
def aks_gpu_driver_opt_out_retired(compiled: CompiledSpec) -> Iterator[Diagnostic]:
    """The pinned az CLI can only opt out of AKS's GPU driver with a tag AKS no longer reads.

    ## What it catches
    On ``aks`` with GPU pools, ``versions.az_cli`` older than 2.72.2: ``provision.sh`` then opts out of
    the AKS-installed NVIDIA driver with ``--tags SkipGPUDriverInstall=true``, the only way that az CLI
    has, and AKS stopped honouring that tag on 2025-07-14 (``--gpu-driver none`` replaced it; Azure/AKS#4925).

    ## Why is this bad?
    AKS installs its own driver on every GPU node; gpu-operator then finds a driver on the host and keeps
    it, so ``versions.gpu_driver`` and GPUDirect RDMA's ``driver.rdma`` are silently not what you pinned.

    ## Example
    ```yaml
    versions:
      az_cli: 2.50.0
    ```

    ## Fix
    Pin ``versions.az_cli`` to 2.72.2 or newer (hpcconf then writes ``--gpu-driver none``), or delete it.
    """
    spec, cluster = compiled.spec, compiled.cluster
    aks = cluster.aks
    if aks is None or aks.gpu_driver_opt_out != "tag":
        return
    path = ("versions", "az_cli") if set_by_user(spec.versions, "az_cli") else ("versions",)
    yield compiled.at(path, f"az CLI {spec.versions.az_cli} has no --gpu-driver flag, so provision.sh uses the "
                      "SkipGPUDriverInstall tag, which AKS stopped honouring on 2025-07-14: AKS installs its own "
                      "GPU driver and the pinned one is not used",
                      hint=f"pin versions.az_cli >= {charts.AZ_GPU_DRIVER_FLAG_SINCE} to get --gpu-driver none",
                      prefer_value=True)


NODE_OS_IDS = {"Ubuntu2204": "ubuntu22.04", "Ubuntu2404": "ubuntu24.04"}


@spec_rule(code="HPC209", name="gpu-operator-node-os", severity=Severity.WARNING, moment=Moment.JUDGE)
def gpu_operator_node_os(compiled: CompiledSpec) -> Iterator[Diagnostic]:
    """The pinned gpu-operator or GPU driver predates the Ubuntu release the AKS nodes run.

    ## What it catches
    On ``aks`` with GPU pools, when the node OS ``provision.sh`` pins (``aks.os_sku``, by default the
    Ubuntu AKS gives at ``aks.kubernetes_version``: 24.04 from Kubernetes 1.35) is Ubuntu 24.04 and

    - the driver gpu-operator installs (``versions.gpu_driver``, else the chart's default) has no
      ``nvcr.io/nvidia/driver:<version>-ubuntu24.04`` image: its branch's first Ubuntu 24.04 image is
      newer (R550: 550.144.03, R570: 570.86.15). This is an **error**;
    - or ``versions.gpu_operator`` is older than 25.3.0, the first release that supports Ubuntu 24.04,
      or the driver's branch is older than every branch with a known Ubuntu 24.04 image (R525, R535):
      a warning.

    ## Why is this bad?
    gpu-operator pulls ``driver:<version>-<os><version>``; NVIDIA pushed the first ``-ubuntu24.04`` driver
    images on 2025-02-03 (NVIDIA/gpu-driver-container#38: 570.86.15 and 550.144.03), and gpu-operator
    added Ubuntu 24.04 in 25.3.0 (its release notes). With an older driver the driver pod stays in
    ImagePullBackOff and no pod gets ``nvidia.com/gpu``; an older operator was never validated on 24.04.

    ## Example
    ```yaml
    versions:
      gpu_operator: 23.3.2
      gpu_driver: 525.60.13
    aks:
      kubernetes_version: "1.35"
    ```

    ## Fix
    Pin ``aks.os_sku: Ubuntu2204`` to keep the nodes on 22.04, or move to gpu-operator 25.3.0 or newer
    with a driver that has an Ubuntu 24.04 image (delete ``gpu_driver`` to take the chart's default).
    """
    spec, cluster = compiled.spec, compiled.cluster
    aks = cluster.aks
    node_os = NODE_OS_IDS.get(aks.os_sku, "") if aks is not None else ""
    if aks is None or not cluster.gpu_pools or not node_os:
        return
    operator = cluster.versions.gpu_operator
    driver = cluster.versions.gpu_driver or compat.gpu_operator_default_driver(operator)
    where = f"AKS nodes run {aks.os_sku} (" + ("aks.os_sku" if aks.settings.os_sku else
                                               f"the default at Kubernetes {aks.kubernetes_version}") + ")"
    missing = compat.driver_image_missing(driver, node_os) if driver else None
    if missing is not None:
        field = next((f for f in ("gpu_driver", "gpu_operator") if set_by_user(spec.versions, f)), None)
        yield compiled.at(("versions", field) if field else _node_os_path(aks),
                          f"{where}, but nvcr.io/nvidia/driver:{driver}-{node_os} does not exist: the first R{missing.branch} "
                          f"driver with a {node_os} image is {missing.first}; the driver pod never starts",
                          hint=f"pin gpu_driver >= {missing.first} with gpu-operator >= 25.3.0, or aks.os_sku: Ubuntu2204 "
                               f"(source: {missing.source})", prefer_value=True, severity=Severity.ERROR)
        return
    yield from _operator_predates_os(compiled, aks, node_os, where, driver)


def _operator_predates_os(compiled: CompiledSpec, aks: ResolvedAks, node_os: str, where: str,
                          driver: Optional[str]) -> Iterator[Diagnostic]:
    spec = compiled.spec
    support = compat.gpu_operator_os_support(node_os)
    operator = spec.versions.gpu_operator
    old_operator = support is not None and not compat.version_at_least(operator, support.since)
    old_branch = bool(driver) and compat.driver_branch_predates_os_images(str(driver), node_os)
    if not (old_operator or old_branch):
        return
    reasons = ([f"gpu-operator {operator} predates {node_os} support ({support.since})"] if old_operator and support else []) + \
              ([f"no R{compat.driver_branch(str(driver))} driver image for {node_os} was published (the first, on "
                f"{compat.FIRST_UBUNTU2404_DRIVER_IMAGES.isoformat()}, were R550 and R570)"] if old_branch else [])
    field = "gpu_operator" if old_operator else "gpu_driver"
    path = ("versions", field) if set_by_user(spec.versions, field) else _node_os_path(aks)
    yield compiled.at(path, f"{where}: " + "; ".join(reasons),
                      hint="pin aks.os_sku: Ubuntu2204, or gpu-operator >= 25.3.0 with a driver of R550 (>= 550.144.03) "
                           f"or newer (source: {support.source if support else 'NVIDIA/gpu-driver-container#38'})",
                      prefer_value=True)


def _node_os_path(aks: ResolvedAks) -> tuple[Any, ...]:
    settings = aks.settings
    return ("aks", "os_sku") if settings.os_sku else ("aks", "kubernetes_version") if settings.kubernetes_version \
        else ("platforms",)


# -- hand-written files ---------------------------------------------------------------------------

@rule(code="HELM100", name="gpu-operator-driver-drops-architecture", severity=Severity.ERROR,
      kinds=(Kind.HELM_GPU_OPERATOR,))
def gpu_operator_driver_drops_architecture(doc: Document, ctx: LintContext) -> Iterator[Diagnostic]:
    """gpu-operator values install a driver that does not support the target SKU's GPUs.

    ## What it catches
    With ``--sku`` naming a Maxwell, Pascal or Volta SKU (V100: NCv3, NDv2), gpu-operator values whose
    ``driver.version`` (or the chart's default, when unset) is newer than R580.

    ## Why is this bad?
    NVIDIA: "The release 580 series will be the last to support GPUs based on the Maxwell, Pascal, and
    Volta architectures". gpu-operator 26.7.0 defaults to 595.91.07, so a V100 pool installed with
    default values never gets a working driver.

    ## Example
    ```yaml
    driver:
      enabled: true
      version: 595.91.07
    ```

    ## Fix
    Pin ``driver.version`` to an R580 driver, e.g. ``580.126.20`` (gpu-operator 26.3.3's default).
    """
    if _generated(doc) or ctx.sku is None or not isinstance(doc.data, dict):
        return
    if get(doc.data, "driver.enabled") is False:
        return  # the node image's driver is used
    explicit = get(doc.data, "driver.version")
    version, assumed = chart_version(ctx, "gpu-operator", doc)
    driver = str(explicit) if explicit else (compat.gpu_operator_default_driver(version) if version else None)
    if not driver or compat.driver_drives(ctx.sku.gpu.sm, driver) is not False:
        return
    arch = compat.gpu_architecture(ctx.sku.gpu.sm)
    if arch is None:
        return
    pin = compat.legacy_driver_pin(ctx.sku.gpu.sm)
    where = "driver.version" if explicit else f"gpu-operator {version}'s default driver" + (" (newest known chart)" if assumed else "")
    yield doc.at_path(("driver", "version") if explicit else ("driver",) if "driver" in doc.data else (),
                      f"{where} {driver} cannot drive {ctx.sku.name}'s {ctx.sku.gpu.model} ({arch.name}, supported up to "
                      f"R{arch.last_branch})",
                      hint=f"set driver.version to an R{arch.last_branch} driver" + (f" such as {pin.driver}" if pin else ""),
                      prefer_value=True)


@rule(code="DKR100", name="nccl-var-unread-by-base-image", severity=Severity.WARNING, kinds=(Kind.DOCKERFILE,))
def nccl_var_unread_by_base_image(doc: Document, ctx: LintContext) -> Iterator[Diagnostic]:
    """An ``ENV NCCL_*`` setting the NCCL of the NGC base image does not read.

    ## What it catches
    A Dockerfile ``FROM nvcr.io/nvidia/pytorch:YY.MM-py3`` (a tag hpcconf knows) that sets an NCCL
    variable only later NCCL releases read, judged against the NCCL that image ships rather than the
    newest one.

    ## Why is this bad?
    NCCL ignores variables it does not know without a word. ``pytorch:24.05-py3`` ships NCCL 2.21.5
    (NVIDIA PyTorch release notes): ``ENV NCCL_IB_ECE_ENABLE`` (read from NCCL 2.23.4) or other newer
    knobs in that image do nothing, however current the documentation you copied them from.

    ## Example
    ```dockerfile
    FROM nvcr.io/nvidia/pytorch:24.05-py3
    ENV NCCL_IB_ECE_ENABLE=0
    ```

    ## Fix
    Use a base image whose NCCL reads the variable, or drop the setting.
    """
    if _generated(doc):
        return
    froms = doc.dockerfile.of("FROM")
    if not froms:
        return
    base = froms[-1].arguments.split()[0] if froms[-1].arguments.split() else ""
    release = compat.ngc_release(base)
    if release is None or any("nccl" in i.arguments.lower() and ("install" in i.arguments or "make" in i.arguments)
                              for i in doc.dockerfile.of("RUN")):
        return  # the image builds or installs its own NCCL: the base's version is not what runs
    for name, (_, instruction) in sorted(doc.dockerfile.env().items()):
        if not name.startswith("NCCL_") or nccl_env.lookup(name) is None or instruction.line < froms[-1].line:
            continue
        if not nccl_env.is_read_by(name, release.nccl):
            yield doc.at_line(instruction.line, f"{name} is not read by NCCL {release.nccl}, which pytorch:{release.tag}-py3 "
                              "ships: the setting does nothing", hint=f"use a newer base image or drop {name} "
                              f"(source: {release.source})")


@rule(code="AZH100", name="azhop-image-end-of-life", severity=Severity.WARNING, kinds=(Kind.AZHOP_CONFIG,))
def azhop_image_end_of_life(doc: Document, ctx: LintContext) -> Iterator[Diagnostic]:
    """An AzHOP image is an OS past its end of life.

    ## What it catches
    ``linux_base_image`` or a queue ``image`` naming CentOS 7 (end of life 2024-06-30; az-hop's own
    template default ``OpenLogic:CentOS:7_9-gen2:latest``) or Ubuntu 20.04 (standard support ended
    2025-05-31; az-hop's ``azhpc:azhop-compute:ubuntu-2004`` queue images).

    ## Why is this bad?
    These images get no security updates and their package mirrors move to vault archives, so
    az-hop's Ansible package installs fail or install unpatched software. New CUDA, DOCA and NCCL
    releases no longer build for them.

    ## Example
    ```yaml
    linux_base_image: "OpenLogic:CentOS:7_9-gen2:latest"
    ```

    ## Fix
    Use az-hop's AlmaLinux 8.7 option (``almalinux:almalinux-x86_64:8_7-gen2:latest``) for the
    infrastructure VMs and an Ubuntu 22.04 HPC image for queues.
    """
    if not isinstance(doc.data, dict):
        return
    places: list[tuple[tuple[Any, ...], Any]] = [(("linux_base_image",), doc.data.get("linux_base_image"))]
    queues: list[Any] = doc.data["queues"] if isinstance(doc.data.get("queues"), list) else []
    places += [(("queues", i, "image"), q.get("image")) for i, q in enumerate(queues) if isinstance(q, dict)]
    for path, image in places:
        retired = compat.image_retirement(str(image)) if isinstance(image, str) else None
        if retired is not None and retired.passed(_today()):
            yield doc.at_path(path, f"{image} is {retired.name}, past end of life since {retired.date.isoformat()}",
                              hint=f"use {retired.replacement} (source: {retired.source})", prefer_value=True)


@rule(code="AZH101", name="azhop-queue-image-latest", severity=Severity.WARNING, kinds=(Kind.AZHOP_CONFIG,))
def azhop_queue_image_latest(doc: Document, ctx: LintContext) -> Iterator[Diagnostic]:
    """An AzHOP queue boots a marketplace image at ``:latest``: its nodes can run different images.

    ## What it catches
    A ``queues[].image`` that is a marketplace URN whose version is ``latest``, e.g.
    ``microsoft-dsvm:ubuntu-hpc:2204:latest``. Image IDs (``/subscriptions/...``) and the infrastructure
    images (``linux_base_image``, ``windows_base_image``: VMs created once) are not reported.

    ## Why is this bad?
    Azure resolves ``latest`` when each VM is deployed ("the latest version of an image available at
    deploy time"; ImageReference.version in the Azure Compute REST API). CycleCloud deploys a queue's
    nodes when jobs need them and deletes them when idle, so nodes of one queue created on different
    days boot different image versions: the Azure HPC images change the NVIDIA driver, DOCA/OFED, NCCL
    and HPC-X between releases (about quarterly, plus hotfixes). One multi-node job then runs on mixed
    drivers and NCCL builds, and a job that passed yesterday can fail or slow down on a new node.

    ## Example
    ```yaml
    queues:
      - name: ndv5
        vm_size: Standard_ND96isr_H100_v5
        image: microsoft-dsvm:ubuntu-hpc:2204:latest
    ```

    ## Fix
    Pin a published version (``az vm image list --publisher microsoft-dsvm --offer ubuntu-hpc --sku 2204
    --all`` lists them), e.g. ``microsoft-dsvm:ubuntu-hpc:2204:22.04.2024102301``, and move queues to a
    newer one deliberately.
    """
    if _generated(doc) or not isinstance(doc.data, dict) or not isinstance(doc.data.get("queues"), list):
        return
    for i, queue in enumerate(doc.data["queues"]):
        image = queue.get("image") if isinstance(queue, dict) else None
        if not isinstance(image, str) or not compat.floating_marketplace_image(image):
            continue
        pin = compat.marketplace_pin(image)
        example = f"e.g. {image.rsplit(':', 1)[0]}:{pin.version}, published {pin.published.isoformat()} " \
                  f"(source: {pin.source})" if pin else "listed by az vm image list --all"
        yield doc.at_path(("queues", i, "image"), f"queue '{queue.get('name')}' boots {image}: Azure resolves "
                          "'latest' when each node is deployed, so nodes created on different days run different "
                          "images (driver, OFED, NCCL)", hint=f"pin a published version, {example}", prefer_value=True)
