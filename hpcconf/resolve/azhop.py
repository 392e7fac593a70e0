"""Derived values of the AzHOP deployment: subnet layout, queues, versions, storage, identities.

The subnet planner and the version pairing are pure functions of the spec settings
(:mod:`hpcconf.spec.azhop_plan`), shared with the spec checks (``hpcconf.spec.checks.azhop``), so
a layout the checks accepted is exactly the layout the config.yml gets.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Optional

from ..catalog import Sku
from ..knowledge import azhop as kb
from ..knowledge import compat
from ..spec.azhop import AzhopSettings, ExtraQueue
from ..spec.azhop_plan import plan_subnets, slurm_versions
from .compat import supported_azhop_images

if TYPE_CHECKING:
    from .model import ResolvedCore
    from .pool import PoolSkus, ResolvedPool

# GPU families whose sizes accept EnableAcceleratedNetworking (az-hop's config.tpl.yml enables it on
# its NC24ads_A100_v4 gpu queue; Azure's ND A100 v4 / ND H100 v5 / ND H200 v5 size pages list it, and
# MicrosoftDocs/azure-compute-docs sizes/gpu-accelerated/ncadsh100v5-series.md @05e75b14 lists
# "Accelerated Networking: Supported" for NCads H100 v5).
MAX_SCALE_SET_DEFAULT = 100
ACCELNET_FAMILIES = frozenset({"NC A100 v4", "NCads H100 v5", "ND A100 v4", "NDm A100 v4", "ND H100 v5", "ND H200 v5"})


# -- queues ---------------------------------------------------------------------------------------

@dataclass(frozen=True)
class AzhopQueue:
    name: str
    vm_size: str
    image: str
    max_count: Optional[int]
    max_core_count: Optional[int]
    colocate: Optional[bool]  # None: not written (OpenPBS ignores ColocateNodes)
    accelerated_networking: bool
    spot: bool = False
    type: Optional[str] = None  # written only when not plain compute
    initial_count: Optional[int] = None
    idle_timeout: Optional[int] = None
    max_scale_set_size: Optional[int] = None  # written only above Azure's default of 100
    pool: Optional[str] = None  # the GPU pool this queue runs, if any
    note: str = ""  # provenance comment

    @property
    def max_nodes(self) -> int:
        limits = []
        if self.max_count is not None:
            limits.append(self.max_count)
        size = kb.parse_vm_size(self.vm_size)
        if self.max_core_count is not None and size is not None:
            limits.append(self.max_core_count // size.vcpus)
        return min(limits) if limits else 0


def _pool_queue(pool: "ResolvedPool", sku: Sku, settings: AzhopSettings) -> AzhopQueue:
    image = pool.image or settings.images.gpu
    ib = f", {sku.infiniband.count}x {sku.infiniband.rate} InfiniBand" if pool.infiniband and sku.infiniband else ""
    note = f"pool {pool.name}: {pool.count} x {sku.name} ({pool.gpus_per_node} GPUs{ib})"
    if not pool.image:
        note += "; image from azhop.images.gpu"
    return AzhopQueue(
        name=pool.name, vm_size=sku.name, image=image, max_count=pool.count, max_core_count=None,
        colocate=pool.colocate if settings.queue_manager == "slurm" else None,
        accelerated_networking=sku.family in ACCELNET_FAMILIES, pool=pool.name, note=note,
        # One colocated scale set must hold a whole multi-node job (az-hop #1016); above 100 VMs it needs a quota raise.
        max_scale_set_size=pool.count if pool.colocate and pool.count > MAX_SCALE_SET_DEFAULT else None)


def _extra_queue(queue: ExtraQueue, settings: AzhopSettings) -> AzhopQueue:
    return AzhopQueue(
        name=queue.name, vm_size=queue.vm_size, image=queue.image or settings.images.cpu,
        max_count=queue.max_count, max_core_count=queue.max_core_count,
        colocate=queue.colocate if settings.queue_manager == "slurm" else None,
        accelerated_networking=queue.accelerated_networking, spot=queue.spot,
        type=None if queue.type == "compute" else queue.type, initial_count=queue.initial_count,
        idle_timeout=queue.idle_timeout, note="azhop.extra_queues" + ("" if queue.image else "; image from azhop.images.cpu"))


def order_queues(queues: list[AzhopQueue], default: Optional[str]) -> list[AzhopQueue]:
    """The default partition first: az-hop's Slurm template marks the first queue default_partition."""
    if default is None:
        return queues
    first = [q for q in queues if q.name == default]
    return first + [q for q in queues if q.name != default]


# -- the spec's settings, as resolve's own types ------------------------------------------------------

@dataclass(frozen=True)
class AzhopSubnets:
    """``azhop.network.subnets``: the ranges the spec gives (None: carved from the address space)."""

    frontend: Optional[str]
    admin: Optional[str]
    compute: Optional[str]
    ad: Optional[str]
    netapp: Optional[str]
    lustre: Optional[str]
    database: Optional[str]
    bastion: Optional[str]
    gateway: Optional[str]


@dataclass(frozen=True)
class AzhopNetwork:
    vnet_name: str
    address_space: str
    subnets: Optional[AzhopSubnets]
    bastion: bool
    vpn_gateway: bool
    public_ip: bool
    nat_gateway: bool


@dataclass(frozen=True)
class AzhopHome:
    type: str  # azurefiles, anf, existing
    mountpoint: str
    size_gib: int
    size_tib: int
    service_level: str
    server: Optional[str]
    export: Optional[str]
    options: Optional[str]


@dataclass(frozen=True)
class AzhopLustre:
    sku: str
    capacity_tib: int
    hsm_storage_account: Optional[str]
    hsm_storage_container: Optional[str]


@dataclass(frozen=True)
class AzhopStorage:
    home: AzhopHome
    lustre: Optional[AzhopLustre]


@dataclass(frozen=True)
class AzhopUser:
    name: str
    uid: int
    groups: tuple[str, ...]
    shell: Optional[str]


@dataclass(frozen=True)
class AzhopGroup:
    name: str
    gid: int
    description: Optional[str]


@dataclass(frozen=True)
class AzhopVmSizes:
    scheduler: str
    ondemand: str
    cyclecloud: str
    ad: str
    grafana: str
    deployer: str


@dataclass(frozen=True)
class AzhopImages:
    gpu: str
    cpu: str
    linux_base: str
    windows_base: str


@dataclass(frozen=True)
class AzhopExtraQueue:
    name: str
    vm_size: str
    max_count: Optional[int]
    max_core_count: Optional[int]
    image: Optional[str]
    colocate: bool
    spot: bool
    accelerated_networking: bool
    type: str
    initial_count: Optional[int]
    idle_timeout: Optional[int]


@dataclass(frozen=True)
class ResolvedAzhopSettings:
    """The spec's ``azhop`` section with end-of-life default images replaced (resolve.compat), as config.yml reads it."""

    project_name: Optional[str]
    admin_user: str
    queue_manager: str  # slurm, openpbs
    slurm_accounting: bool
    slurm_cluster_name: Optional[str]
    database_fqdn: Optional[str]
    user_auth: str
    access: str
    network: AzhopNetwork
    storage: AzhopStorage
    users: tuple[AzhopUser, ...]
    groups: tuple[AzhopGroup, ...]
    vm_sizes: AzhopVmSizes
    images: AzhopImages
    extra_queues: tuple[AzhopExtraQueue, ...]
    default_queue: Optional[str]
    autoscale_idle_timeout: int
    monitoring: bool
    tags: dict[str, str]


def resolved_azhop_settings(settings: AzhopSettings) -> ResolvedAzhopSettings:
    network, storage = settings.network, settings.storage
    subnets = network.subnets
    return ResolvedAzhopSettings(**{
        **settings.model_dump(),
        "network": AzhopNetwork(**{**network.model_dump(),
                                   "subnets": AzhopSubnets(**subnets.model_dump()) if subnets is not None else None}),
        "storage": AzhopStorage(home=AzhopHome(**storage.home.model_dump()),
                                lustre=AzhopLustre(**storage.lustre.model_dump()) if storage.lustre is not None else None),
        "users": tuple(AzhopUser(**{**user.model_dump(), "groups": tuple(user.groups)}) for user in settings.users),
        "groups": tuple(AzhopGroup(**group.model_dump()) for group in settings.groups),
        "vm_sizes": AzhopVmSizes(**settings.vm_sizes.model_dump()),
        "images": AzhopImages(**settings.images.model_dump()),
        "extra_queues": tuple(AzhopExtraQueue(**queue.model_dump()) for queue in settings.extra_queues),
        "tags": dict(settings.tags),
    })


# -- the resolved section ----------------------------------------------------------------------------

@dataclass(frozen=True)
class AzhopSubnet:
    """One subnet of the plan (hpcconf.spec.azhop_plan, which the spec checks judged): config.yml writes it."""

    role: str  # az-hop's key under network.vnet.subnets
    name: str
    cidr: str
    source: str  # why it is there / where the range came from (a comment in config.yml)


@dataclass(frozen=True)
class AzhopSlurmVersions:
    """Slurm and the cyclecloud-slurm project az-hop installs, always both (az-hop's runtime defaults differ)."""

    slurm: str
    cyclecloud_slurm: str
    source: str  # which spec field or default chose them

@dataclass(frozen=True)
class NcclInstall:
    """What the node-setup script of one GPU queue installs (the nccl target's files)."""

    queue: str
    files: tuple[tuple[str, str], ...]  # (artifact path under the build, path on the node)
    conf_artifact: str  # nccl/<pool>/nccl.conf
    conf_node_path: str  # /etc/nccl.conf


@dataclass(frozen=True)
class GpuCountOverride:
    """The autoscale.json ``slurm_gpus`` override for the GPU sizes cyclecloud-slurm may count wrong."""

    sizes: tuple[dict[str, Any], ...]  # vm_size, gpus and the partitions of each affected size
    fixed_in: str  # the cyclecloud-slurm release that fixes every affected size
    azhop_newest: str  # the newest cyclecloud-slurm az-hop pins


@dataclass(frozen=True)
class ResolvedAzhop:
    settings: ResolvedAzhopSettings
    project_name: str
    subnets: tuple[AzhopSubnet, ...]
    slurm: AzhopSlurmVersions
    queues: tuple[AzhopQueue, ...]
    gids: dict[str, int]
    nccl_installs: tuple[NcclInstall, ...]
    home: dict[str, Any]  # config.yml's mounts.home: the spec's export, or az-hop's placeholders for its share
    amlfs_note: Optional[str] = None  # the Lustre capacity in the SKU's steps
    gpu_count_override: Optional[GpuCountOverride] = None

    @property
    def queue_manager(self) -> str:
        return self.settings.queue_manager


def _nccl_install(pool: "ResolvedPool") -> NcclInstall:
    files = []
    if pool.nccl.topo_node_path:  # set exactly when topo_file is
        files.append((f"nccl/{pool.nccl.topo_file}", pool.nccl.topo_node_path))
    if pool.nccl.graph_node_path:
        files.append((f"nccl/{pool.nccl.graph_file}", pool.nccl.graph_node_path))
    return NcclInstall(queue=pool.name, files=tuple(files), conf_artifact=f"nccl/{pool.name}/nccl.conf",
                       conf_node_path="/etc/nccl.conf")


def home_mount(settings: AzhopSettings) -> dict[str, Any]:
    home = settings.storage.home
    if home.type == "existing":
        options = home.options or "rw,hard,rsize=262144,wsize=262144,vers=3,tcp,_netdev"
        return {"type": "existing", "mountpoint": home.mountpoint, "server": home.server, "export": home.export,
                "options": options, "note": "an NFS export that already exists (azhop.storage.home)"}
    return {"type": home.type, "mountpoint": home.mountpoint, "server": kb.HOME_PLACEHOLDERS["server"],
            "export": kb.HOME_PLACEHOLDERS["export"], "options": home.options or kb.HOME_PLACEHOLDERS["options"],
            "note": f"az-hop fills the {{{{anf_home_*}}}} values from the {home.type} share it creates"}


def amlfs_note(settings: AzhopSettings) -> Optional[str]:
    lustre = settings.storage.lustre
    if lustre is None:
        return None
    step = kb.AMLFS_STEP_TIB[lustre.sku]
    return f"{lustre.capacity_tib} TiB = {lustre.capacity_tib // step} x {step} TiB steps of {lustre.sku}"


def gpu_count_override(cluster: "ResolvedCore", queues: list[AzhopQueue]) -> Optional[GpuCountOverride]:
    """For the GPU sizes cyclecloud-slurm may count wrong (knowledge/compat cyclecloud_slurm gpu_count): the
    documented autoscale.json ``slurm_gpus`` override, which the scheduler-side script writes and checks."""
    fixes = {pool.sku.name: fix for pool in cluster.gpu_pools if (fix := compat.cyclecloud_slurm_gpu_count_fixed_for(pool.sku.name))}
    if not fixes:
        return None
    affected = [pool for pool in cluster.gpu_pools if pool.sku.name in fixes]
    sizes = tuple({"vm_size": size, "gpus": gpus, "partitions": sorted(q.name for q in queues if q.vm_size == size)}
                  for size, gpus in sorted({(pool.sku.name, pool.gpus_per_node) for pool in affected}))
    fixed_in = max((fixes[pool.sku.name].fixed_in for pool in affected), key=lambda v: tuple(int(x) for x in v.split(".")))
    return GpuCountOverride(sizes=sizes, fixed_in=fixed_in, azhop_newest=kb.CYCLECLOUD_SLURM_VERSIONS[-1])


def _slurm_versions(slurm: Optional[str], cyclecloud_slurm: Optional[str]) -> AzhopSlurmVersions:
    pair = slurm_versions(slurm, cyclecloud_slurm)
    return AzhopSlurmVersions(slurm=pair.slurm, cyclecloud_slurm=pair.cyclecloud_slurm, source=pair.source)


def resolve_azhop(cluster: "ResolvedCore", spec_settings: Optional[AzhopSettings], skus: "PoolSkus") -> ResolvedAzhop:
    settings = supported_azhop_images(spec_settings or AzhopSettings())  # no end-of-life infra image
    queues = [_pool_queue(p, skus[p.name], settings) for p in cluster.pools]
    queues += [_extra_queue(q, settings) for q in settings.extra_queues]
    queues = order_queues(queues, settings.default_queue or (cluster.pools[0].name if cluster.pools else None))
    plan = plan_subnets(settings, sum(q.max_nodes for q in queues))
    return ResolvedAzhop(
        settings=resolved_azhop_settings(settings),
        project_name=settings.project_name or cluster.name,
        subnets=tuple(AzhopSubnet(role=s.role, name=s.name, cidr=s.cidr, source=s.source) for s in plan.subnets),
        slurm=_slurm_versions(cluster.versions.slurm, cluster.versions.cyclecloud_slurm),
        queues=tuple(queues),
        gids={g.name: g.gid for g in settings.groups},
        nccl_installs=tuple(_nccl_install(p) for p in cluster.gpu_pools),
        home=home_mount(settings),
        amlfs_note=amlfs_note(settings),
        gpu_count_override=gpu_count_override(cluster, queues),
    )
