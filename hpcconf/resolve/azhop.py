"""Derived values of the AzHOP deployment: subnet layout, queues, versions, storage, identities.

The subnet planner and the version pairing are pure functions of the spec, shared with the
spec checks (``hpcconf.spec.checks_azhop``), so a layout the checks accepted is exactly the
layout the config.yml gets.
"""

from __future__ import annotations

import ipaddress
from dataclasses import dataclass
from typing import TYPE_CHECKING, Optional

from ..knowledge import azhop as kb
from ..spec.azhop import AzhopSettings, ExtraQueue
from .compat import supported_azhop_images

if TYPE_CHECKING:
    from ..spec.model import Cluster
    from . import ResolvedCluster, ResolvedPool

# GPU families whose sizes accept EnableAcceleratedNetworking (az-hop's config.tpl.yml enables it on
# its NC24ads_A100_v4 gpu queue; Azure's ND A100 v4 / ND H100 v5 / ND H200 v5 size pages list it).
MAX_SCALE_SET_DEFAULT = 100
ACCELNET_FAMILIES = frozenset({"NC A100 v4", "ND A100 v4", "NDm A100 v4", "ND H100 v5", "ND H200 v5"})


# -- subnets ----------------------------------------------------------------------------------

@dataclass(frozen=True)
class Subnet:
    role: str  # az-hop's key under network.vnet.subnets
    name: str
    cidr: str
    source: str  # why it is there / where the range came from (a comment in config.yml)


@dataclass(frozen=True)
class SubnetPlan:
    subnets: tuple[Subnet, ...]
    problems: tuple[tuple[str, str, str], ...]  # (role or "", message, hint)

    def get(self, role: str) -> Optional[Subnet]:
        return next((s for s in self.subnets if s.role == role), None)


def required_subnets(settings: AzhopSettings) -> dict[str, str]:
    """Subnets this deployment needs (role -> why), in az-hop's order (research/azhop.md G3)."""
    needed = {"frontend": "OnDemand and the deployer", "admin": "scheduler, CycleCloud, Grafana"}
    if settings.user_auth == "ad":
        needed["ad"] = "user_auth: ad deploys an AD VM"
    if settings.storage.home.type == "anf":
        needed["netapp"] = "the ANF home volume"
    if settings.storage.lustre is not None:
        needed["lustre"] = "the AMLFS file system"
    if settings.queue_manager == "slurm" and settings.slurm_accounting and not settings.database_fqdn:
        needed["database"] = "the Slurm accounting database"
    if settings.network.bastion:
        needed["bastion"] = "Azure Bastion"
    if settings.network.vpn_gateway:
        needed["gateway"] = "the VPN gateway"
    needed["compute"] = "every queue's nodes"
    return needed


def subnet_prefix(role: str, settings: AzhopSettings) -> int:
    if role == "lustre" and settings.storage.lustre is not None:
        return kb.amlfs_min_prefix(settings.storage.lustre.capacity_tib) or 23
    return dict(kb.INFRA_SUBNETS)[role]


def _first_fit(space: ipaddress.IPv4Network, prefix: int, taken: list[ipaddress.IPv4Network]) -> Optional[ipaddress.IPv4Network]:
    if prefix < space.prefixlen:
        return None
    for candidate in space.subnets(new_prefix=prefix):
        if not any(candidate.overlaps(t) for t in taken):
            return candidate
    return None


def plan_subnets(settings: AzhopSettings, compute_nodes: int) -> SubnetPlan:
    """Carve the subnets from the address space, or check the explicit ones for what is missing."""
    space = ipaddress.IPv4Network(settings.network.address_space)
    needed = required_subnets(settings)
    explicit = settings.network.subnets.given() if settings.network.subnets else None
    if explicit is not None:
        return _explicit_plan(settings, space, needed, explicit)
    return _carved_plan(settings, space, needed, compute_nodes)


def _carved_plan(settings: AzhopSettings, space: ipaddress.IPv4Network, needed: dict[str, str],
                 compute_nodes: int) -> SubnetPlan:
    problems = []
    if space.prefixlen >= 31:
        return SubnetPlan((), (("", f"address space {space} is too small for az-hop", "use a /23 or larger"),))
    compute = list(space.subnets(prefixlen_diff=1))[1]
    lower = list(space.subnets(prefixlen_diff=1))[0]
    # netapp is carved even without ANF, as az-hop's template does, so a volume can be added later (seed 000).
    roles = [r for r, _ in kb.INFRA_SUBNETS if r in needed or r == "netapp"]
    taken: list[ipaddress.IPv4Network] = []
    subnets = []
    for role in roles:
        block = _first_fit(lower, subnet_prefix(role, settings), taken)
        if block is None:
            if role in needed:
                problems.append((role, f"the lower half of {space} ({lower}) has no room for the {role} subnet "
                                       f"(/{subnet_prefix(role, settings)}, for {needed[role]})",
                                 f"use a larger address_space (one prefix shorter than /{space.prefixlen}), or give network.subnets"))
            continue
        taken.append(block)
        why = needed.get(role, "reserved for an ANF volume added later, as az-hop's template does")
        subnets.append(Subnet(role, _subnet_name(role), str(block), f"carved: {why}"))
    subnets.append(Subnet("compute", "compute", str(compute), f"carved: upper half of {space}, {kb.usable_ips(str(compute))} node addresses"))
    problems += _size_problems(settings, {s.role: s.cidr for s in subnets}, compute_nodes)
    return SubnetPlan(tuple(subnets), tuple(problems))


def _explicit_plan(settings: AzhopSettings, space: ipaddress.IPv4Network, needed: dict[str, str],
                   explicit: dict[str, str]) -> SubnetPlan:
    problems = []
    nets = {role: ipaddress.IPv4Network(cidr) for role, cidr in explicit.items()}
    for role, net in nets.items():
        if not net.subnet_of(space):
            problems.append((role, f"subnet {role} {net} is outside the VNet address space {space}",
                             f"pick a range inside {space}"))
    roles = list(nets)
    for i, a in enumerate(roles):
        for b in roles[i + 1:]:
            if nets[a].overlaps(nets[b]):
                problems.append((b, f"subnet {b} {nets[b]} overlaps subnet {a} {nets[a]}", "give each subnet its own range"))
    taken = [n for n in nets.values() if n.subnet_of(space)]
    for role, why in needed.items():
        if role not in nets:
            free = _first_fit(space, subnet_prefix(role, settings) if role != "compute" else 24, taken)
            suggestion = f"add `{role}: {free}`" if free else f"add a {role} subnet (the address space has no free room: enlarge it)"
            problems.append(("", f"network.subnets has no {role} subnet, which {why} needs", suggestion))
    subnets = tuple(Subnet(role, _subnet_name(role), cidr, "given in the spec") for role, cidr in
                    sorted(explicit.items(), key=lambda kv: _role_order(kv[0])))
    return SubnetPlan(subnets, tuple(problems))


def _size_problems(settings: AzhopSettings, cidrs: dict[str, str], compute_nodes: int) -> list[tuple[str, str, str]]:
    problems = []
    if "compute" in cidrs and kb.usable_ips(cidrs["compute"]) < compute_nodes:
        problems.append(("compute", f"compute subnet {cidrs['compute']} has {kb.usable_ips(cidrs['compute'])} usable "
                                    f"addresses (Azure keeps 5) but the queues can grow to {compute_nodes} nodes",
                         "enlarge the compute subnet / address_space, or lower the pools' count"))
    lustre = settings.storage.lustre
    if lustre is not None and "lustre" in cidrs:
        need = kb.amlfs_min_prefix(lustre.capacity_tib)
        have = ipaddress.IPv4Network(cidrs["lustre"]).prefixlen
        if need is None or have > need:
            want = f"/{need} or larger" if need else "a larger subnet than the AMLFS table covers"
            problems.append(("lustre", f"lustre subnet {cidrs['lustre']} is too small for {lustre.capacity_tib} TiB of AMLFS (needs {want})",
                             "size it from the AMLFS table: 4-16 TiB /27, 20-40 /26, 44-92 /25, 96-196 /24, 200-400 /23"))
    if "bastion" in cidrs and ipaddress.IPv4Network(cidrs["bastion"]).prefixlen > kb.BASTION_MIN_PREFIX:
        problems.append(("bastion", f"bastion subnet {cidrs['bastion']} is smaller than the /26 AzureBastionSubnet needs", "use a /26"))
    if "gateway" in cidrs and ipaddress.IPv4Network(cidrs["gateway"]).prefixlen > kb.GATEWAY_MIN_PREFIX:
        problems.append(("gateway", f"gateway subnet {cidrs['gateway']} is smaller than /27", "use a /27 or /26"))
    return problems


def explicit_size_problems(settings: AzhopSettings, compute_nodes: int) -> list[tuple[str, str, str]]:
    explicit = settings.network.subnets.given() if settings.network.subnets else {}
    return _size_problems(settings, explicit, compute_nodes)


def _subnet_name(role: str) -> str:
    return kb.FIXED_SUBNET_NAMES.get(role, role)


def _role_order(role: str) -> int:
    order = [r for r, _ in kb.INFRA_SUBNETS] + ["compute"]
    return order.index(role) if role in order else len(order)


# -- Slurm versions -------------------------------------------------------------------------------

@dataclass(frozen=True)
class SlurmVersions:
    slurm: str
    cyclecloud_slurm: str
    source: str


def slurm_versions(slurm: Optional[str], cyclecloud_slurm: Optional[str]) -> SlurmVersions:
    """Both versions, always: az-hop's runtime defaults differ from its schema's (research D2)."""
    if slurm and cyclecloud_slurm:
        return SlurmVersions(slurm, cyclecloud_slurm, "versions.slurm and versions.cyclecloud_slurm")
    if slurm:
        cc = kb.cyclecloud_slurm_for(slurm) or kb.DEFAULT_CYCLECLOUD_SLURM_VERSION
        return SlurmVersions(slurm, cc, f"versions.slurm; cyclecloud-slurm {cc} is the newest project supporting it")
    if cyclecloud_slurm:
        sl = kb.slurm_for(cyclecloud_slurm) or kb.DEFAULT_SLURM_VERSION
        return SlurmVersions(sl, cyclecloud_slurm, f"versions.cyclecloud_slurm; Slurm {sl} is the newest it supports")
    return SlurmVersions(kb.DEFAULT_SLURM_VERSION, kb.DEFAULT_CYCLECLOUD_SLURM_VERSION,
                         "hpcconf default: the newest pair az-hop supports")


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


def _pool_queue(pool: "ResolvedPool", settings: AzhopSettings) -> AzhopQueue:
    image = pool.image or settings.images.gpu
    ib = f", {pool.sku.infiniband.count}x {pool.sku.infiniband.rate} InfiniBand" if pool.infiniband and pool.sku.infiniband else ""
    note = f"pool {pool.name}: {pool.count} x {pool.sku.name} ({pool.gpus_per_node} GPUs{ib})"
    if not pool.image:
        note += "; image from azhop.images.gpu"
    return AzhopQueue(
        name=pool.name, vm_size=pool.sku.name, image=image, max_count=pool.count, max_core_count=None,
        colocate=pool.colocate if settings.queue_manager == "slurm" else None,
        accelerated_networking=pool.sku.family in ACCELNET_FAMILIES, pool=pool.name, note=note,
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


def spec_queue_nodes(spec: "Cluster", settings: AzhopSettings) -> int:
    """Nodes every queue together can grow to, from the spec alone (for subnet sizing)."""
    total = sum(p.count for p in spec.pools)
    for q in settings.extra_queues:
        queue = _extra_queue(q, settings)
        total += queue.max_nodes
    return total


# -- the resolved section ----------------------------------------------------------------------------

@dataclass(frozen=True)
class NcclInstall:
    """What the node-setup script of one GPU queue installs (the nccl target's files)."""

    queue: str
    files: tuple[tuple[str, str], ...]  # (artifact path under the build, path on the node)
    conf_artifact: str  # nccl/<pool>/nccl.conf
    conf_node_path: str  # /etc/nccl.conf


@dataclass(frozen=True)
class ResolvedAzhop:
    settings: AzhopSettings
    project_name: str
    subnets: tuple[Subnet, ...]
    slurm: SlurmVersions
    queues: tuple[AzhopQueue, ...]
    gids: dict[str, int]
    nccl_installs: tuple[NcclInstall, ...]

    @property
    def queue_manager(self) -> str:
        return self.settings.queue_manager


def _nccl_install(pool: "ResolvedPool") -> NcclInstall:
    files = []
    if pool.nccl.topo_file:
        files.append((f"nccl/{pool.nccl.topo_file}", pool.nccl.topo_node_path))
    if pool.nccl.graph_file:
        files.append((f"nccl/{pool.nccl.graph_file}", pool.nccl.graph_node_path))
    return NcclInstall(queue=pool.name, files=tuple(files), conf_artifact=f"nccl/{pool.name}/nccl.conf",
                       conf_node_path="/etc/nccl.conf")


def resolve_azhop(cluster: "ResolvedCluster") -> ResolvedAzhop:
    settings = supported_azhop_images(cluster.spec.azhop or AzhopSettings())  # no end-of-life infra image
    queues = [_pool_queue(p, settings) for p in cluster.pools]
    queues += [_extra_queue(q, settings) for q in settings.extra_queues]
    queues = order_queues(queues, settings.default_queue or (cluster.pools[0].name if cluster.pools else None))
    plan = plan_subnets(settings, sum(q.max_nodes for q in queues))
    return ResolvedAzhop(
        settings=settings,
        project_name=settings.project_name or cluster.name,
        subnets=plan.subnets,
        slurm=slurm_versions(cluster.versions.slurm, cluster.versions.cyclecloud_slurm),
        queues=tuple(queues),
        gids={g.name: g.gid for g in settings.groups},
        nccl_installs=tuple(_nccl_install(p) for p in cluster.gpu_pools),
    )
