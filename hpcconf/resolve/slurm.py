"""Slurm values derived once for every Slurm-side artifact (sbatch scripts, env file, tfvars).

Per GPU pool: the partition, how many nodes the test uses, the task geometry (one task per GPU,
``--cpus-per-task`` = vCPUs / GPUs) and the CPU mask of each local task, taken from the SKU's
guest NUMA layout so that a task runs on the cores next to its GPU (jingchaozhang.github.io's ``PIN_MASK``).
Also the MPI/UCX/UCC environment the ``collectives`` choice asks for, and the Crusoe Terraform
variables.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Optional

from ..catalog import Sku
from ..knowledge import images, mnnvl, slurm_gres
from ..knowledge.openmpi import has_coll_hcoll
from ..knowledge.versions import Version
from ..spec.slurm import CrusoeSlurm, SlurmSettings
from .test_passes import TestRuns, job_runs

if TYPE_CHECKING:
    from .model import ResolvedCore
    from .pool import PoolSkus, ResolvedPool

# cyclecloud-slurm names each nodearray's partition after it; CCWS's GPU nodearray is "gpu" (resolve.ccws)
CCWS_GPU_PARTITION = "gpu"
CRUSOE_LEGACY_PARTITION = "batch"  # crusoecloud/slurm before v3.0.0: every compute node in PartitionName=batch
# crusoecloud/slurm v3.0.0 README: "specify 'image' as 'ubuntu24.04-nvidia-slurm'" (the variable's own
# default, ubuntu22.04-nvidia-slurm:latest, is the older OS).
CRUSOE_DEFAULT_IMAGE = "ubuntu24.04-nvidia-slurm"
UCC_PRIORITY = "100"  # above coll/hcoll (90) and coll/tuned (30); JSC's X-Dev blog ("MPI as API", 2023), open-mpi/ompi#9885


SKU_DIR_NAME = "sku"  # beside the sbatch script: slurm/<pool>/sku/<file>


@dataclass(frozen=True)
class SlurmPartition:
    """One GPU pool as a Slurm partition, and the NCCL test job for it."""

    pool: str
    partition: str
    sku: str
    nodes: int  # nodes the test job uses
    ntasks_per_node: int  # one task per GPU
    gpus_per_node: int
    cpus_per_task: Optional[int]  # None when the SKU's vCPU count is unknown
    pin_masks: tuple[str, ...]  # hex CPU mask per local task (srun --cpu-bind=mask_cpu); () if NUMA unknown
    pin_numa: tuple[int, ...]  # NUMA node of each local task, for the comment next to the masks
    nccl_env: tuple[tuple[str, str], ...]  # exported in the job: the pool's nccl.conf + NCCL_DEBUG
    required_files: tuple[str, ...]  # files the NCCL settings name (topology/graph); the job checks them
    mpi_env: tuple[tuple[str, str], ...]  # MPI/UCX/UCC settings (empty for plain NCCL without mpi_env)
    graph_opt_in: Optional[str] = None  # a graph file installed for jobs to opt in to (NC96ads_A100_v4)
    nvlink: Optional["NvlinkDomain"] = None  # set when the SKU's NVLink domain spans VMs (GB200/GB300 NVL72)
    library: str = "nccl"  # the collective library the GPUs run: nccl (NVIDIA) or rccl (AMD)
    tests_dir: str = "/opt/nccl-tests/build"  # where the nodes keep nccl-tests' (rccl-tests') binaries
    sku_file: Optional[str] = None  # file name of the user's SKU file shipped in sku/ beside the job (see ResolvedPool)
    modules: tuple[str, ...] = ()  # environment modules loaded before the ranks start (the tests' MPI)
    library_dir: Optional[str] = None  # the image's collective library outside the default path (Azure's RCCL)
    launcher: images.Launcher = "srun-pmix"  # how the ranks start: srun --mpi=pmix, or the image's mpirun
    mpirun: Optional[str] = None  # the mpirun a launcher "mpirun" job uses
    image: Optional[str] = None  # the node image the paths above were read from (a comment in the job)
    image_source: Optional[str] = None
    runs: Optional[TestRuns] = None  # the job's nccl-tests runs, each with its floor
    rocm_path: Optional[str] = None  # the ROCm runtime the tests load (RCCL pools); None: CUDA
    expected_busbw: Optional[str] = None  # the catalog's measured busbw at the job's node count, for a comment
    image_env: tuple[tuple[str, str], ...] = ()  # what the provider's own tests of the image pass to every rank
    # The Slurm configuration the partition's nodes need (knowledge.slurm_gres, as CCWS's azslurm writes it):
    gres_conf: tuple[str, ...] = ()  # for each node of the pool (no NodeName=), GPUs bound to their NUMA node's cores
    cgroup_conf: tuple[str, ...] = ()
    slurm_conf: tuple[slurm_gres.SlurmConfLine, ...] = ()  # () where the spec's Slurm lacks what the size needs

    @property
    def unsets_graph_file(self) -> bool:
        """No graph file is set or offered for this SKU: one in the environment is stale (another size's)."""
        return self.graph_opt_in is None and all(key != "NCCL_GRAPH_FILE" for key, _ in self.nccl_env)

    @property
    def ranks(self) -> int:
        return self.nodes * self.ntasks_per_node

    @property
    def directory(self) -> str:
        return f"slurm/{self.pool}"

    @property
    def sku_dir(self) -> Optional[str]:
        """Where the job's own copy of a user SKU file lies (for hpcconf nccl-report --sku-dir), or None."""
        return f"{self.directory}/{SKU_DIR_NAME}" if self.sku_file else None


@dataclass(frozen=True)
class NvlinkDomain:
    """A pool whose NVLink domain spans VMs: what the IMEX/block-topology script and the job need."""

    domain_gpus: int  # GPUs in one domain (72 for NVL72)
    nodes_per_domain: int  # VMs in one domain (18 for NVL72 of 4-GPU VMs)
    segment: Optional[int]  # sbatch --segment: the job's nodes per block; None when no size divides them
    job_env: tuple[tuple[str, str], ...]  # MNNVL settings the test job exports (unless the spec sets them)
    setup_script: bool  # hpcconf writes nvlink-domains.sh (not on Crusoe, whose module sets IMEX up)
    # topology.conf's BlockSizes, as `azslurm topology -n --block --block_size` takes it: one whole domain, or the
    # pool when it is smaller (a block below it is commented out)
    block_size: int = 0
    imex_nodes_config: str = mnnvl.IMEX_NODES_CONFIG  # the IMEX daemon's peer list on each node
    imex_service: str = mnnvl.IMEX_SERVICE


@dataclass(frozen=True)
class CrusoePartition:
    """One element of crusoecloud/slurm v3.0.0's ``partitions`` list (the whole compute side before it)."""

    name: str
    pool: str
    count: int
    instance_type: str
    ib_partition_id: Optional[str]
    image: Optional[str]  # an official Crusoe image (None when custom_image is set)
    default: bool  # extra_args Default=YES (the first GPU pool)
    imex_support: bool = False  # the module sets IMEX up (NVLink domain spans VMs: GB200 NVL72)
    custom_image: Optional[str] = None  # GB200/B200: the pool's image, built with slurm-custom-image


@dataclass(frozen=True)
class CrusoeUser:
    name: str
    uid: int
    ssh_public_key: str


@dataclass(frozen=True)
class ResolvedCrusoe:
    """The spec's ``slurm.crusoe``: the variables of Crusoe's Slurm Terraform module the tfvars set."""

    module_version: str  # the crusoecloud/slurm ref the tfvars are for (v3.0.0, 9f57d5e, b115d0c)
    project_id: str
    location: str
    ssh_public_key_path: str
    vpc_subnet_id: str
    ib_network_id: Optional[str]
    ib_partition_ids: dict[str, str]  # pool -> IB partition id
    users: tuple[CrusoeUser, ...]


def resolved_crusoe(crusoe: CrusoeSlurm) -> ResolvedCrusoe:
    return ResolvedCrusoe(**{**crusoe.model_dump(), "ib_partition_ids": dict(crusoe.ib_partition_ids),
                             "users": tuple(CrusoeUser(**user.model_dump()) for user in crusoe.users)})


@dataclass(frozen=True)
class ResolvedSlurm:
    partitions: tuple[SlurmPartition, ...]
    time_limit: str
    nccl_tests_dir: str
    collectives: str
    crusoe: Optional[ResolvedCrusoe]  # set when the tfvars are generated (platform slurm on Crusoe)
    crusoe_partitions: tuple[CrusoePartition, ...]  # one per Crusoe GPU pool
    modules_from_spec: bool = False  # slurm.modules is set: the job loads those, not the image's documented ones
    rccl_env_source: str = images.AZURE_RCCL_ENV_SOURCE  # where an Azure RCCL job's image settings come from

    def partition(self, pool: str) -> SlurmPartition:
        return next(p for p in self.partitions if p.pool == pool)


# --------------------------------------------------------------------------- CPU binding

def gpu_numa_nodes(sku: Sku) -> Optional[list[int]]:
    """The NUMA node of each GPU in device-index order, or None when it cannot be known.

    With a topology (the one NCCL is given) each GPU's bus id names its NUMA node; GPUs are
    numbered by bus id, as NVML and Slurm's gres do. Without one, GPUs are spread evenly over
    the NUMA nodes in order, which is how the NC A100 v4 sizes are built (one or two GPUs per
    node, jingchaozhang.github.io's nvidia-smi topo -m).
    """
    gpus = sku.gpu.count
    if sku.topology is not None:
        numa_of = {busid: node.numaid for node in sku.topology.numa for busid in node.gpus}
        return [numa_of[busid] for busid in sku.topology.cuda_order()]
    ids = sorted(node.id for node in sku.numa)
    if not ids:
        return None
    if gpus >= len(ids):
        if gpus % len(ids):
            return None  # an uneven split would be a guess
        per_node = gpus // len(ids)
        return [ids[i // per_node] for i in range(gpus)]
    if len(ids) % gpus:
        return None
    group = len(ids) // gpus
    return [ids[i * group] for i in range(gpus)]


def cpu_mask(cpus: list[int]) -> str:
    """Slurm's mask_cpu form: hex, bit N = CPU N (0xffffff for CPUs 0-23)."""
    return hex(sum(1 << cpu for cpu in cpus))


def pin_masks(sku: Sku) -> tuple[tuple[str, ...], tuple[int, ...]]:
    """One CPU mask per local task: the task's share of its GPU's NUMA node, contiguous cores.

    Several GPUs on one NUMA node split its CPUs in order (ND A100 v4: two per node). Fewer GPUs
    than NUMA nodes (one GPU, two nodes) give each task all the CPUs of its nodes.
    """
    numa_per_gpu = gpu_numa_nodes(sku)
    if numa_per_gpu is None or not sku.numa:
        return (), ()
    cpus_of = {node.id: sorted(node.cpu_set()) for node in sku.numa}
    if len(sku.numa) > sku.gpu.count:  # each GPU owns a group of NUMA nodes
        group = len(sku.numa) // sku.gpu.count
        ordered = [node.id for node in sorted(sku.numa, key=lambda n: n.id)]
        masks = [cpu_mask([c for nid in ordered[i * group:(i + 1) * group] for c in cpus_of[nid]])
                 for i in range(sku.gpu.count)]
        return tuple(masks), tuple(numa_per_gpu)
    masks = []
    for rank, numa_id in enumerate(numa_per_gpu):
        sharing = [r for r, n in enumerate(numa_per_gpu) if n == numa_id]
        cpus = cpus_of[numa_id]
        share = len(cpus) // len(sharing)
        index = sharing.index(rank)
        masks.append(cpu_mask(cpus[index * share:(index + 1) * share]))
    return tuple(masks), tuple(numa_per_gpu)


def cpus_per_task(sku: Sku) -> Optional[int]:
    return sku.vcpus // sku.gpu.count if sku.vcpus else None


# --------------------------------------------------------------------------- environment

def ucx_env(pool: "ResolvedPool", sku: Sku) -> list[tuple[str, str]]:
    """UCX transports and devices the SKU can use: rc on InfiniBand, tcp otherwise (never sockcm,
    removed in UCX 1.11); CUDA copy and IPC so GPU buffers move over NVLink/PCIe P2P (rapidsai/ucx-py#311, ND40rs_v2:
    2.1 GB/s between two GPUs without cuda_ipc, 17-26 GB/s with it)."""
    network = "rc" if pool.infiniband else "tcp"
    env = [("UCX_TLS", f"{network},sm,self,cuda_copy,cuda_ipc")]
    if pool.infiniband and sku.infiniband and sku.infiniband.devices:
        env.append(("UCX_NET_DEVICES", ",".join(f"{dev}:1" for dev in sku.infiniband.devices)))
    elif not pool.infiniband:
        env.append(("UCX_NET_DEVICES", sku.ethernet_interface))
    return env


def mpi_env(cluster: "ResolvedCore", settings: SlurmSettings, pool: "ResolvedPool", sku: Sku) -> tuple[tuple[str, str], ...]:
    """The collectives path as environment variables, then the spec's mpi_env (last word)."""
    env: list[tuple[str, str]] = []
    openmpi = Version.parse_or_none(cluster.versions.openmpi)
    tunes_mpi = settings.collectives in ("ucx", "ucc-nccl")  # the spec's MPI path, not the pool's library
    if tunes_mpi:
        env += ucx_env(pool, sku)
    if settings.collectives == "ucc-nccl":
        env += [("OMPI_MCA_coll_ucc_enable", "1"), ("OMPI_MCA_coll_ucc_priority", UCC_PRIORITY),
                ("UCC_TL_NCCL_TUNE", f"{','.join(settings.ucc_nccl_collectives)}:cuda:inf")]
    if tunes_mpi and (openmpi is None or has_coll_hcoll(openmpi)):
        # Azure's NCCL/MPI tests always turn hcoll off; from Open MPI 6 the variable does not exist.
        env.append(("OMPI_MCA_coll_hcoll_enable", "0"))
    merged = dict(env)
    merged.update(cluster.mpi_env)
    return tuple(merged.items())


def nccl_job_env(pool: "ResolvedPool", sku: Sku) -> tuple[tuple[str, str], ...]:
    """What the job exports: NCCL_DEBUG=INFO (jingchaozhang.github.io, 2023) unless set, then the pool's nccl.conf
    settings, so the job does not depend on what /etc/nccl.conf the image ships."""
    conf = dict(pool.nccl.node_conf)
    env = {"NCCL_DEBUG": conf.pop("NCCL_DEBUG", "INFO")}
    env.update(conf)
    for key, value in image_job_env(pool, sku):
        env.setdefault(key, value)  # the pool's and the spec's settings win
    return tuple(env.items())


def image_job_env(pool: "ResolvedPool", sku: Sku) -> list[tuple[str, str]]:
    """Settings the provider's own tests of the image pass to every rank, which the nodes' conf does not hold.

    Azure's IB sizes: NCCL_SOCKET_IFNAME=eth0 (NCCL's bootstrap would otherwise take IPoIB ib0 first;
    azhpc-images tests/test-definitions.sh and Azure NHC's azure_nccl_allreduce.nhc pass it), and an
    exclusion of the Mellanox devices the catalog knows are not the fabric (ND H200 v5's accelerated-
    networking VF mlx5_an0: an Ethernet port NCCL's IB transport would otherwise open as RoCE).
    Azure's MI300X: what Azure NHC's azure_rccl_allreduce.nhc passes (the profile's azure_image_env)."""
    if sku.provider != "azure":
        return []
    env: list[tuple[str, str]] = []
    env += list(pool.accelerator.azure_image_env)
    if pool.infiniband:
        env.append(("NCCL_SOCKET_IFNAME", sku.ethernet_interface))
        if sku.infiniband and sku.infiniband.exclude_hcas:
            env.append(("NCCL_IB_HCA", "^=" + ",".join(sku.infiniband.exclude_hcas)))
    return env


def nvlink_domain(pool: "ResolvedPool", sku: Sku, nodes: int) -> Optional[NvlinkDomain]:
    """The NVL72 settings of a pool whose NVLink domain spans VMs (None for every other SKU).

    The job forces MNNVL (``NCCL_MNNVL_ENABLE=1``): with the default (2) NCCL silently falls back to
    InfiniBand when IMEX is not up, and the acceptance test would pass on the wrong fabric.
    """
    if not sku.nvlink_spans_nodes:
        return None
    per_domain = mnnvl.domain_nodes(sku.nvlink_domain_gpus, sku.gpu.count)
    conf = dict(pool.nccl.node_conf)
    env = tuple((key, value) for key, value in (("NCCL_MNNVL_ENABLE", "1"),) if key not in conf)
    return NvlinkDomain(domain_gpus=sku.nvlink_domain_gpus, nodes_per_domain=per_domain,
                        segment=mnnvl.segment_size(nodes, per_domain), job_env=env,
                        setup_script=sku.provider != "crusoe", block_size=min(per_domain, nodes))


def required_files(pool: "ResolvedPool") -> tuple[str, ...]:
    conf = dict(pool.nccl.node_conf)
    return tuple(conf[key] for key in ("NCCL_TOPO_FILE", "NCCL_GRAPH_FILE") if conf.get(key))


# --------------------------------------------------------------------------- partitions

def is_crusoe_cluster(cluster: "ResolvedCore") -> bool:
    return "slurm" in cluster.platforms and any(p.sku.provider == "crusoe" for p in cluster.gpu_pools)


def _crusoe_module_version(settings: SlurmSettings) -> Optional[str]:
    return settings.crusoe.module_version if settings.crusoe else None


def partition_name(cluster: "ResolvedCore", settings: SlurmSettings, pool: "ResolvedPool") -> str:
    on_crusoe = pool.sku.provider == "crusoe" and "slurm" in cluster.platforms
    if on_crusoe and _crusoe_module_version(settings) not in (None, "v3.0.0"):
        return CRUSOE_LEGACY_PARTITION  # the module's slurm.conf names it; tfvars cannot rename it
    if pool.name in settings.partitions:
        return settings.partitions[pool.name]
    if "ccws" in cluster.platforms and not {"slurm", "azhop"} & set(cluster.platforms):
        return CCWS_GPU_PARTITION  # CCWS puts its GPU nodearray in the partition of that name
    return pool.name  # AzHOP: the queue name; Crusoe v3.0.0: the partitions entry hpcconf writes


def crusoe_partitions(cluster: "ResolvedCore", settings: SlurmSettings, skus: "PoolSkus") -> tuple[CrusoePartition, ...]:
    crusoe = settings.crusoe
    if crusoe is None:
        return ()
    pools = [p for p in cluster.gpu_pools if p.sku.provider == "crusoe"]
    partitions = []
    for index, pool in enumerate(pools):
        image, custom_image = _crusoe_image(pool)
        partitions.append(CrusoePartition(
            name=partition_name(cluster, settings, pool), pool=pool.name, count=pool.count, instance_type=pool.sku.name,
            ib_partition_id=crusoe.ib_partition_ids.get(pool.name) if pool.infiniband else None, image=image,
            default=index == 0, imex_support=skus[pool.name].nvlink_spans_nodes, custom_image=custom_image))
    return tuple(partitions)


def _crusoe_image(pool: "ResolvedPool") -> tuple[Optional[str], Optional[str]]:
    """(image, custom_image). GB200 and B200 run a custom image (the module's README): the
    pool's ``image`` goes to custom_image and ``image`` stays null, as in the module's GB200 example; without
    one custom_image stays null (SLURM005)."""
    if images.crusoe_needs_custom_image(pool.sku.name):
        return None, pool.image
    return pool.image or CRUSOE_DEFAULT_IMAGE, None


def test_nodes(settings: SlurmSettings, pool: "ResolvedPool") -> int:
    if pool.name in settings.test_nodes:
        return settings.test_nodes[pool.name]
    # Without InfiniBand a multi-node NCCL test only measures the Ethernet; jingchaozhang.github.io (2023) ran one node.
    return pool.count if pool.infiniband else 1


def tests_dir(settings: SlurmSettings, pool: "ResolvedPool", sku: Sku) -> str:
    """The spec's nccl_tests_dir when set, else where the pool's node image keeps the tests (Azure's MI300X
    image: /opt/rccl-tests, no build/), else where each library's tests are conventionally installed."""
    if "nccl_tests_dir" in settings.model_fields_set:
        return settings.nccl_tests_dir
    layout = images.layout(sku)
    if layout is not None:
        return layout.tests_dir
    return pool.collective.node_tests_dir


def modules(settings: SlurmSettings, sku: Sku) -> tuple[str, ...]:
    """The spec's modules when set, else the image's build of the MPI the test binaries were built against
    (Azure's HPC images: HPC-X, as mpi/hpcx-pmix for srun --mpi=pmix; without it no rank finds libmpi.so.40)."""
    if settings.modules is not None:
        return tuple(settings.modules)
    layout = images.layout(sku)
    module = layout.job_module() if layout is not None else None
    return (module,) if module else ()


def expected_busbw(sku: Sku, nodes: int) -> Optional[str]:
    """The measured bus bandwidth for this SKU and node count, when the catalog has one."""
    for bw in sku.busbw:
        if bw.kind == "measured" and bw.nodes == nodes:
            algo = f", {bw.algo}" if bw.algo else ""
            return f"~{bw.gbps:g} GB/s busbw at {bw.message_size} ({source_title(sku, bw.source)}{algo})"
    return None


def source_title(sku: Sku, key: str) -> str:
    """The page a SKU fact cites (its citation up to the first ':'), not the catalog's key for it."""
    citation = sku.sources.get(key, key)
    return citation.split(": ", 1)[0]


def resolve_partition(cluster: "ResolvedCore", settings: SlurmSettings, pool: "ResolvedPool", sku: Sku) -> SlurmPartition:
    masks, numa = pin_masks(sku)
    nodes = test_nodes(settings, pool)
    layout = images.layout(sku)
    return SlurmPartition(
        pool=pool.name, partition=partition_name(cluster, settings, pool), sku=pool.sku.name,
        nodes=nodes, ntasks_per_node=pool.gpus_per_node, gpus_per_node=pool.gpus_per_node,
        cpus_per_task=cpus_per_task(sku), pin_masks=masks, pin_numa=numa,
        nccl_env=nccl_job_env(pool, sku), required_files=required_files(pool), graph_opt_in=pool.nccl.graph_node_path,
        mpi_env=mpi_env(cluster, settings, pool, sku), nvlink=nvlink_domain(pool, sku, nodes),
        library=pool.collective_library, tests_dir=tests_dir(settings, pool, sku),
        sku_file=pool.sku_file[0] if pool.sku_file else None, modules=modules(settings, sku),
        library_dir=layout.library_dir if layout else None, launcher=layout.launcher if layout else "srun-pmix",
        mpirun=layout.mpirun if layout else None, image=layout.image if layout else None,
        image_source=layout.source if layout else None,
        runs=job_runs(cluster.nccl_test, sku, nodes, pool.gpus_per_node),
        rocm_path=pool.collective.rocm_path, expected_busbw=expected_busbw(sku, nodes),
        image_env=tuple(image_job_env(pool, sku)),
        gres_conf=tuple(slurm_gres.gres_conf_lines(sku, None, cores=True)),
        cgroup_conf=tuple(slurm_gres.cgroup_conf_lines()), slurm_conf=partition_slurm_conf(cluster, sku, layout),
    )


def partition_slurm_conf(cluster: "ResolvedCore", sku: Sku,
                         layout: Optional[images.ImageLayout]) -> tuple[slurm_gres.SlurmConfLine, ...]:
    """slurm.conf lines of a GPU partition; PMIx where the jobs launch with srun --mpi=pmix. A Slurm too old for an
    NVL72 size's lines gets none (the spec's own check refuses that version)."""
    launcher = layout.launcher if layout else "srun-pmix"
    try:
        return tuple(slurm_gres.slurm_conf_lines(sku, slurm_version=cluster.versions.slurm,
                                                 pmix=launcher == "srun-pmix"))
    except ValueError:
        return ()


def resolve_slurm(cluster: "ResolvedCore", spec_settings: Optional[SlurmSettings], skus: "PoolSkus") -> ResolvedSlurm:
    settings = spec_settings or SlurmSettings()
    partitions = tuple(resolve_partition(cluster, settings, pool, skus[pool.name]) for pool in cluster.gpu_pools)
    crusoe = is_crusoe_cluster(cluster)
    return ResolvedSlurm(partitions=partitions, time_limit=settings.time_limit,
                         nccl_tests_dir=settings.nccl_tests_dir, collectives=settings.collectives,
                         crusoe=resolved_crusoe(settings.crusoe) if crusoe and settings.crusoe else None,
                         crusoe_partitions=crusoe_partitions(cluster, settings, skus) if crusoe else (),
                         modules_from_spec=settings.modules is not None)
