"""Derived values only the AKS artifacts need, computed once so the artifacts cannot disagree.

The device-plugin resource name, the HostDeviceNetwork name and namespace, the task names
the hostfile path is made from, -np / -npernode, the IPAM flavour the network-operator
version supports and the az CLI's GPU-driver opt-out all come from here.
"""

from __future__ import annotations

import ipaddress
from dataclasses import dataclass
from typing import TYPE_CHECKING, Literal, Optional

from ..knowledge import aznhc, charts, pci_ids, rocm
from ..knowledge.accelerators import AcceleratorProfile
from ..knowledge.volcano import WORKER_TASK, job_names
from ..spec.aks import AksSettings
from .collective import ResolvedTestImage
from .compat import ResolvedVersions, aks_kubernetes_version, aks_os_sku
from .test_passes import TestRuns, job_runs

if TYPE_CHECKING:
    from .model import ResolvedCore
    from .pool import PoolSkus, ResolvedPool

# The names the 2023 NDm_v4 AKS walkthroughs use; the svc plugin writes /etc/volcano/<task>.host, `-` becoming `_`.
LAUNCHER_TASK = "mpimaster"
SERVICE_ACCOUNT = "mpi-worker-view"  # lets the launcher's init container watch the worker pods
ROLE_BINDING = "default-view"
KUBECTL_IMAGE = "mcr.microsoft.com/oss/kubernetes/kubectl"  # jingchaozhang.github.io's wait-for-workers image
NCP_NAME = "nic-cluster-policy"  # the name the chart used and the operator expects
MELLANOX_VENDOR = "15b3"
NVIDIA_VENDOR = "10de"
NETWORK_OPERATOR_REPO = "nvcr.io/nvidia/mellanox"
NFD_LABEL_MELLANOX = f"feature.node.kubernetes.io/pci-{MELLANOX_VENDOR}.present"
POD_INTERFACE = "eth0"  # a pod's own network interface (the CNI's), whatever the host calls its NIC
WHEREABOUTS_KUBECONFIG = "/etc/cni/net.d/whereabouts.d/whereabouts.kubeconfig"

Ipam = Literal["whereabouts", "nv-ipam"]
GpuDriverOptOut = Literal["flag", "tag"]


@dataclass(frozen=True)
class ChartPin:
    """A Helm chart provision.sh installs beside the spec's pinned versions, at the version hpcconf pins."""

    chart: str
    repo: str
    version: str  # without a leading v
    source: str = ""  # where the values' keys were read
    version_prefix: str = "v"  # how the repository spells a version

    @property
    def helm_version(self) -> str:
        """What ``helm install --version`` is given."""
        return self.version_prefix + self.version


@dataclass(frozen=True)
class IbVfRule:
    """The NodeFeatureRule that labels only the nodes with an InfiniBand VF (knowledge.pci_ids)."""

    device_ids: tuple[str, ...]  # the IB VFs' PCI device ids
    label: str  # feature.node.kubernetes.io/pci-15b3.present
    vendor: str  # 15b3
    pci_class: str  # 0207, InfiniBand
    reference: str  # Azure's reference rule


@dataclass(frozen=True)
class AksPoolJob:
    """The NCCL test job of one GPU pool: every number the job, its readiness wait and its verdict use."""

    pool: "ResolvedPool"
    job_name: str
    gpus_per_worker: int
    ib_nics_per_worker: int  # 0 without InfiniBand
    mpirun_env: tuple[tuple[str, str], ...]  # the pool's own NCCL settings (pool-level nccl_env included)
    runs: TestRuns  # the nccl-tests runs of the launcher, each with its floor
    # Pool variables the single-node pass goes without: its floor is Azure's check's, which runs without the
    # topology file on these sizes (knowledge.aznhc.SINGLE_NODE_WITHOUT_TOPO_FILE).
    single_node_drops: tuple[str, ...] = ()

    @property
    def pool_name(self) -> str:
        return self.pool.name

    @property
    def sku(self) -> str:
        return self.pool.sku.name

    @property
    def worker_replicas(self) -> int:
        return self.pool.count

    @property
    def gpu_resource(self) -> str:
        """The pool's device-plugin resource: nvidia.com/gpu, or amd.com/gpu on an AMD pool."""
        return self.pool.accelerator.device_resource

    @property
    def infiniband(self) -> bool:
        return self.ib_nics_per_worker > 0

    @property
    def np(self) -> int:
        return self.worker_replicas * self.gpus_per_worker

    @property
    def min_available(self) -> int:
        return 1 + self.worker_replicas  # gang: launcher + every worker, or mpirun waits forever


@dataclass(frozen=True)
class ResolvedAksSettings:
    """The spec's ``aks`` section (its defaults when the spec has none), as the AKS artifacts read it."""

    namespace: str
    operators_namespace: str
    kubernetes_version: Optional[str]  # the spec's pin (ResolvedAks.kubernetes_version is the one used)
    os_sku: Optional[str]  # the spec's choice (ResolvedAks.os_sku is the one used)
    system_pool_name: str
    system_pool_sku: str
    system_pool_count: int
    acr_name: Optional[str]
    job_name: Optional[str]
    service_cidr: Optional[str]
    pod_cidr: Optional[str]


@dataclass(frozen=True)
class ResolvedAks:
    settings: ResolvedAksSettings
    namespace: str
    operators_namespace: str
    job_name: str
    launcher_task: str
    worker_task: str
    service_account: str
    role_binding: str
    kubectl_image: str
    kubernetes_version: str  # always pinned in provision.sh
    os_sku: str  # az aks --os-sku of every pool
    pool_name: str
    sku: str
    worker_replicas: int
    gpus_per_worker: int
    gpu_resource: str  # the device plugin's resource: nvidia.com/gpu or amd.com/gpu
    accelerator: AcceleratorProfile  # the worker pool's: operator, runtime class, NFD labels
    gpu_runtime_class_name: str  # the RuntimeClass gpu-operator installs (pods name it where the profile says so)
    operator_driver_version: str  # the driver the GPU operator builds on the node; "" when it builds none
    ib_nics_per_worker: int  # 0 without InfiniBand
    resource_name: str  # the bare device-plugin resource name ("mlnxnics")
    ib_resource: str  # "nvidia.com/<resource_name>"
    network_name: str  # HostDeviceNetwork (and NetworkAttachmentDefinition) name
    ipam: Ipam
    ipam_range: str
    ipam_pool_name: str  # nv-ipam IPPool name
    ipam_block_size: int  # nv-ipam perNodeBlockSize
    ipoib: bool
    ncp_from_values: bool  # network-operator <= 24.7: the chart renders the NicClusterPolicy
    ofed_version: Optional[str]  # OFED/DOCA driver version (chart values) or doca-driver tag (NCP)
    gpudirect_rdma: bool  # gpu-operator driver.rdma.enabled: MOFED comes from the network-operator
    gpu_driver_opt_out: GpuDriverOptOut
    acr_name: Optional[str]
    hostfile: str
    mpirun_mca: tuple[tuple[str, str], ...]
    pool: "ResolvedPool"  # the test pool the job runs on
    test_image: ResolvedTestImage  # the image the job runs, built in ACR when acr_name is set
    image_ref: str  # its registry/name:tag
    jobs: tuple[AksPoolJob, ...] = ()  # one NCCL test job per tested GPU pool, the test pool's first
    # (variable, az aks create flag, value) of the cluster ranges the spec sets; AKS requires --dns-service-ip
    # inside a custom --service-cidr (.10 by convention)
    cidr_options: tuple[tuple[str, str, str], ...] = ()
    gpu_driver_flag_since: str = charts.AZ_GPU_DRIVER_FLAG_SINCE  # az CLI release that has --gpu-driver none
    network_operand_tag: Optional[str] = None  # the NicClusterPolicy operands' tag (None: the CRD's defaults)
    nfd_rules_key: bool = False  # the installed network-operator chart has nfd.deployNodeFeatureRules
    ib_vf_rule: Optional[IbVfRule] = None  # set when pci-15b3.present must come from a rule, not the PCI class
    gpu_operator_chart: Optional[ChartPin] = None  # the chart of the worker profile's operator
    network_operator_chart: Optional[ChartPin] = None
    nfd_chart: Optional[ChartPin] = None
    cert_manager: Optional[ChartPin] = None  # the prerequisite of an operator chart that needs it

    @property
    def infiniband(self) -> bool:
        return self.ib_nics_per_worker > 0

    @property
    def uses_host_device_network(self) -> bool:
        return self.infiniband


def cidr_options(settings: AksSettings) -> tuple[tuple[str, str, str], ...]:
    """(variable, az aks create flag, value) for the cluster ranges the spec sets (SPEC017 checks the IPAM
    range against them); AKS requires --dns-service-ip inside a custom --service-cidr (.10 by convention)."""
    out: list[tuple[str, str, str]] = []
    if settings.service_cidr:
        network = ipaddress.ip_network(settings.service_cidr)
        out += [("SERVICE_CIDR", "service-cidr", settings.service_cidr),
                ("DNS_SERVICE_IP", "dns-service-ip", str(network[10]))]
    if settings.pod_cidr:
        out.append(("POD_CIDR", "pod-cidr", settings.pod_cidr))
    return tuple(out)


def infiniband_vf_ids(cluster: "ResolvedCore", pool: "ResolvedPool", skus: "PoolSkus") -> Optional[tuple[str, ...]]:
    """The IB VF device ids to label pci-15b3.present by, when the whitelist would also label nodes without
    InfiniBand: NFD workers on every node (AMD pools), or a GPU pool without IB beside one with it. None when the
    class whitelist is enough, or when an IB pool's HCA has no VF id of its own (then the whitelist stays)."""
    if not pool.ib_nics_per_node:
        return None
    ib_pools = [p for p in cluster.gpu_pools if p.infiniband]
    if not pool.accelerator.nfd_workers_on_every_node and len(ib_pools) == len(cluster.gpu_pools):
        return None
    hcas = [ib.hca if (ib := skus[p.name].infiniband) else None for p in ib_pools]
    ids = [pci_ids.ib_vf_device_ids(hca) for hca in hcas]
    if not ids or any(i is None for i in ids):
        return None
    return tuple(sorted({d for group in ids if group for d in group}))


def ib_vf_rule(cluster: "ResolvedCore", pool: "ResolvedPool", skus: "PoolSkus") -> Optional[IbVfRule]:
    ids = infiniband_vf_ids(cluster, pool, skus)
    if ids is None:
        return None
    return IbVfRule(device_ids=ids, label=pci_ids.NFD_MELLANOX_LABEL, vendor=pci_ids.MELLANOX_VENDOR,
                    pci_class=pci_ids.INFINIBAND_CLASS, reference=pci_ids.REFERENCE)


def operator_chart(accelerator: AcceleratorProfile, versions: ResolvedVersions) -> Optional[ChartPin]:
    """The chart of the profile's operator, at the version the spec's ``versions`` field it names pins."""
    chart = accelerator.operator_chart
    if chart is None:
        return None
    pinned = {"gpu_operator": versions.gpu_operator, "amd_gpu_operator": versions.amd_gpu_operator}[chart.version_pin]
    return ChartPin(chart=chart.chart, repo=chart.repository, version=pinned.lstrip("v"), source=chart.values_source,
                    version_prefix=chart.version_prefix)


def cert_manager_chart(accelerator: AcceleratorProfile) -> Optional[ChartPin]:
    """cert-manager, for an operator chart whose README installs it first."""
    if accelerator.operator_chart is None or not accelerator.operator_chart.needs_cert_manager:
        return None
    return ChartPin(chart="cert-manager", repo=rocm.CERT_MANAGER_REPO, version=rocm.CERT_MANAGER_VERSION)


def helm_chart(name: str, version: str) -> ChartPin:
    """A chart of hpcconf's chart table (data/chart_keys.yaml) at ``version``."""
    known = charts.chart(name)
    if known.helm_repository is None:
        raise LookupError(f"data/chart_keys.yaml names no Helm repository for {name}")
    return ChartPin(chart=name, repo=known.helm_repository, version=version.lstrip("v"), version_prefix=known.version_prefix)


def hostfile_path(task: str) -> str:
    """The file Volcano's svc plugin writes for ``task`` (volcano-sh/volcano pkg/controller/job/plugins/svc)."""
    return f"/etc/volcano/{task.replace('-', '_')}.host"


def ipam_block_size(ipam_range: str, nodes: int, nics: int) -> int:
    """IPs per node for nv-ipam: room for four pods' worth of NICs, within the range."""
    size = ipaddress.ip_network(ipam_range).num_addresses
    wanted = 1
    while wanted < max(16, 4 * nics):
        wanted *= 2
    while wanted > 2 and wanted * nodes > size:
        wanted //= 2
    return wanted


def acr_name_for(settings: AksSettings, registry: Optional[str]) -> Optional[str]:
    if settings.acr_name:
        return settings.acr_name
    if registry and registry.endswith(".azurecr.io"):
        return registry.split(".", 1)[0]
    return None


def amd_driver_version(cluster: "ResolvedCore") -> str:
    """The amdgpu driver KMM builds: the ROCm release of the test image's base (the driver version is the
    ROCm version before ROCm 7.1: ROCm/gpu-operator docs/drivers/installation.md), so user space and
    kernel module match."""
    base = cluster.test_image.base if cluster.test_image else rocm.ROCM_BASE_IMAGE
    tag = base.rsplit(":", 1)[-1] if ":" in base.rsplit("/", 1)[-1] else ""
    return tag if tag[:1].isdigit() else rocm.ROCM_BASE_IMAGE.rsplit(":", 1)[1]


def _mpirun_env(pool: "ResolvedPool", mpi_env: tuple[tuple[str, str], ...]) -> tuple[tuple[str, str], ...]:
    """NCCL settings of the pool (topology path inside the image), then UCX/CUDA for mpirun."""
    env: dict[str, str] = {"NCCL_DEBUG": "INFO"}  # the 2023 NDm_v4 AKS walkthroughs (jingchaozhang.github.io, Azure HPC blog) log NCCL init; keeps the busbw log readable
    env.update(pool.nccl.image_env)
    if pool.accelerator.device_order_env:
        env.setdefault("CUDA_DEVICE_ORDER", "PCI_BUS_ID")  # so rank i sees GPU i in the topology file
    # The job runs nccl-tests only: MPI starts the ranks and passes NCCL's unique id, NCCL moves the data over
    # InfiniBand itself. MPI stays on the pod network, as Azure's NHC NCCL check runs it (UCX_TLS=tcp
    # UCX_NET_DEVICES=eth0, customTests/azure_nccl_allreduce.nhc @0e0a1ac2) and as NCCL_SOCKET_IFNAME keeps NCCL's
    # own bootstrap: a faulty IB VF then shows in the NCCL run the verdict judges, not in MPI's wire-up. (Azure's
    # multi-node AKS chart, ai-infrastructure-on-azure nccl-test values.yaml, uses rc on mlx5_0:1; either
    # leaves busbw unchanged, MPI002 accepts both.) The spec's mpi_env overrides them.
    env.setdefault("UCX_TLS", "tcp")
    env.setdefault("UCX_NET_DEVICES", POD_INTERFACE)
    for key, value in mpi_env:
        if not key.startswith("OMPI_MCA_"):
            env[key] = value
    return tuple(env.items())


def _mpirun_mca(mpi_env: tuple[tuple[str, str], ...]) -> tuple[tuple[str, str], ...]:
    mca = {"coll_hcoll_enable": "0"}  # hcoll is not in the image; the 2023 NDm_v4 AKS walkthroughs (jingchaozhang.github.io, Azure HPC blog) turn it off
    for key, value in mpi_env:
        if key.startswith("OMPI_MCA_"):
            mca[key.removeprefix("OMPI_MCA_")] = value
    return tuple(mca.items())


def tested_pools(cluster: "ResolvedCore") -> tuple["ResolvedPool", ...]:
    """The pools that get an NCCL test job: the one ``nccl_test.pool`` names, else every GPU pool."""
    if cluster.nccl_test.pool:
        return (cluster.pool(cluster.nccl_test.pool),)
    return cluster.gpu_pools


def pool_jobs(cluster: "ResolvedCore", job_name: Optional[str], skus: "PoolSkus") -> tuple[AksPoolJob, ...]:
    pools = tested_pools(cluster)
    names = job_names(job_name, cluster.nccl_test.collective, [(p.name, p.collective_library) for p in pools])
    return tuple(AksPoolJob(pool=p, job_name=names[p.name], gpus_per_worker=p.gpus_per_node,
                            ib_nics_per_worker=p.ib_nics_per_node, mpirun_env=_mpirun_env(p, cluster.mpi_env),
                            runs=job_runs(cluster.nccl_test, skus[p.name], p.count, p.gpus_per_node),
                            single_node_drops=("NCCL_TOPO_FILE",) if p.sku.name in aznhc.SINGLE_NODE_WITHOUT_TOPO_FILE else ())
                 for p in pools)


def ipam_nodes_and_nics(cluster: "ResolvedCore") -> tuple[int, int]:
    """Nodes on the InfiniBand network (every IB GPU pool's) and the most NICs one of them has."""
    ib_pools = [p for p in cluster.gpu_pools if p.ib_nics_per_node] or [p for p in (cluster.test_pool,) if p]
    return sum(p.count for p in ib_pools), max((p.ib_nics_per_node for p in ib_pools), default=0)


def resolve_aks(cluster: "ResolvedCore", spec_settings: Optional[AksSettings], skus: "PoolSkus") -> ResolvedAks:
    settings = spec_settings or AksSettings()
    pool = cluster.test_pool
    assert pool is not None, "check_spec guarantees a GPU pool for aks"
    assert cluster.test_image is not None and cluster.test_image_ref is not None, "check_spec requires a test_image for aks"
    versions = cluster.versions
    ib = cluster.ib_network
    nics = pool.ib_nics_per_node
    ncp_from_values = charts.network_operator_renders_ncp(versions.network_operator)
    ipam: Ipam = "whereabouts" if charts.network_operator_has_whereabouts(versions.network_operator) else "nv-ipam"
    ofed = versions.doca_ofed if ncp_from_values else \
        (versions.doca_ofed or charts.doca_driver_default(versions.network_operator))
    kubernetes = aks_kubernetes_version(settings.kubernetes_version)
    jobs = pool_jobs(cluster, settings.job_name, skus)
    ipam_nodes, ipam_nics = ipam_nodes_and_nics(cluster)
    return ResolvedAks(
        settings=ResolvedAksSettings(**settings.model_dump()),
        namespace=settings.namespace,
        operators_namespace=settings.operators_namespace,
        job_name=jobs[0].job_name,
        launcher_task=LAUNCHER_TASK,
        worker_task=WORKER_TASK,
        service_account=SERVICE_ACCOUNT,
        role_binding=ROLE_BINDING,
        kubectl_image=f"{KUBECTL_IMAGE}:v{versions.kubectl.lstrip('v')}",
        kubernetes_version=kubernetes,
        os_sku=aks_os_sku(settings.os_sku, kubernetes, None if ncp_from_values else ofed),
        pool_name=pool.name,
        sku=pool.sku.name,
        worker_replicas=pool.count,
        gpus_per_worker=pool.gpus_per_node,
        gpu_resource=pool.accelerator.device_resource,
        accelerator=pool.accelerator,
        gpu_runtime_class_name=charts.GPU_OPERATOR_RUNTIME_CLASS if pool.accelerator.gpu_runtime_class else "",
        operator_driver_version=amd_driver_version(cluster) if pool.accelerator.driver_built_by_operator else "",
        ib_nics_per_worker=nics,
        resource_name=ib.resource_name,
        ib_resource=cluster.ib_resource,
        network_name=ib.network_name,
        ipam=ipam,
        ipam_range=ib.ipam_range,
        ipam_pool_name=f"{ib.network_name}-pool",
        ipam_block_size=ipam_block_size(ib.ipam_range, ipam_nodes, ipam_nics),
        ipoib=ib.ipoib,
        ncp_from_values=ncp_from_values,
        ofed_version=ofed,
        gpudirect_rdma=nics > 0,  # the network-operator deploys MOFED whenever IB is used
        gpu_driver_opt_out="flag" if charts.az_cli_has_gpu_driver_flag(versions.az_cli) else "tag",
        acr_name=acr_name_for(settings, cluster.test_image.registry),
        hostfile=hostfile_path(WORKER_TASK),
        mpirun_mca=_mpirun_mca(cluster.mpi_env),
        pool=pool,
        test_image=cluster.test_image,
        image_ref=cluster.test_image_ref,
        jobs=jobs,
        cidr_options=cidr_options(settings),
        network_operand_tag=charts.network_operator_operand_tag(versions.network_operator),
        # read only where the network-operator is installed (InfiniBand): a chart lookup parses its section
        nfd_rules_key=nics > 0 and charts.chart_has_key("network-operator", versions.network_operator,
                                                         "nfd.deployNodeFeatureRules"),
        ib_vf_rule=ib_vf_rule(cluster, pool, skus),
        gpu_operator_chart=operator_chart(pool.accelerator, versions),
        network_operator_chart=helm_chart("network-operator", versions.network_operator),
        nfd_chart=helm_chart("node-feature-discovery", versions.node_feature_discovery),
        cert_manager=cert_manager_chart(pool.accelerator),
    )
