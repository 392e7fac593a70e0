"""The AzHOP subnet plan and Slurm version pair: pure functions of a spec's AzHOP settings.

They live with the spec (below ``resolve``) because both the spec checks
(:mod:`hpcconf.spec.checks.azhop`) and the resolver (:mod:`hpcconf.resolve.azhop`) need them:
the layout the checks accepted is exactly the layout the config.yml gets.
"""

from __future__ import annotations

import ipaddress
from dataclasses import dataclass
from typing import TYPE_CHECKING, Optional

from ..knowledge import azhop as kb

if TYPE_CHECKING:
    from .azhop import AzhopSettings
    from .model import Cluster


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
    """Subnets this deployment needs (role -> why), in az-hop's order."""
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
    # netapp is carved even without ANF, as az-hop's template does, so a volume can be added later (jingchaozhang.github.io, 2023).
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
    """Both versions, always: az-hop's runtime defaults differ from its schema's."""
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


def spec_queue_nodes(spec: "Cluster", settings: AzhopSettings) -> int:
    """Nodes every queue together can grow to, from the spec alone (for subnet sizing)."""
    total = sum(p.count for p in spec.pools)
    for q in settings.extra_queues:
        limits = {"vm_size": q.vm_size, "max_count": q.max_count, "max_core_count": q.max_core_count}
        total += kb.queue_max_nodes({k: v for k, v in limits.items() if v is not None}) or 0
    return total
