"""AzHOP settings of a spec, judged by the same rules as a hand-written az-hop config.yml.

Each function here is the spec side of an AZH rule (``@spec_adapter``): the rule page, code and
severity are the config.yml rule's (:mod:`hpcconf.lint.rules.azhop_*`). AZH002, AZH010, AZH012 and
AZH013 fill the typed views of :mod:`hpcconf.knowledge.azhop_view` and share their judgement with
config.yml; the others check what the spec decides itself (hpcconf plans the subnets, so AZH005-007
judge the plan) with the same knowledge (:mod:`hpcconf.knowledge.azhop`).
G1 (queue_manager values) is the ``Literal`` of ``azhop.queue_manager``, reported by the loader.
"""

from __future__ import annotations

from typing import Iterable, Iterator

from ...catalog import Catalog, UnknownSku
from ...diagnostics import Diagnostic, Severity
from ...knowledge import azhop as kb
from ...knowledge.azhop_view import (
    Finding,
    GroupView,
    IdentitiesView,
    ImageRefsView,
    QueuesView,
    QueueView,
    UserView,
    judge_identities,
    judge_image_refs,
    judge_queue_limits,
    judge_queue_names,
)
from ...rules_registry import spec_adapter
from ..azhop import AzhopSettings
from ..azhop_plan import explicit_size_problems, plan_subnets, slurm_versions, spec_queue_nodes
from ..load import LoadedSpec
from . import at


def _settings(loaded: LoadedSpec) -> AzhopSettings | None:
    """The spec's AzHOP settings (az-hop's defaults when the section is absent), or None off AzHOP."""
    if "azhop" not in loaded.cluster.platforms:
        return None
    return loaded.cluster.azhop or AzhopSettings()


def _path(loaded: LoadedSpec, path: tuple) -> tuple:
    if path[:1] == ("azhop",) and "azhop" not in (loaded.document.data or {}):
        return ("platforms",)  # all defaults: point at the line that asked for AzHOP
    return path


def _report(loaded: LoadedSpec, findings: Iterable[Finding], default: Severity) -> Iterator[Diagnostic]:
    for finding in findings:
        yield at(loaded, _path(loaded, finding.path), finding.message, finding.hint, finding.prefer_value,
                 finding.severity or default)


def _diag(loaded: LoadedSpec, path: tuple, message: str, hint: str, prefer_value: bool = True) -> Diagnostic:
    return at(loaded, _path(loaded, path), message, hint, prefer_value)


def _sku(catalog: Catalog, name: str):
    try:
        return catalog.get(name)
    except UnknownSku:
        return None  # reported by HPC006


def _given(loaded: LoadedSpec, *path: str | int) -> bool:
    """Whether the spec file itself writes the key at ``path`` (not a default)."""
    node = loaded.document.data
    for key in path:
        if isinstance(node, dict) and key in node:
            node = node[key]
        elif isinstance(node, list) and isinstance(key, int) and 0 <= key < len(node):
            node = node[key]
        else:
            return False
    return True


# -- views ------------------------------------------------------------------------------------------

_EXTRA_QUEUE_FIELDS = ("name", "max_count", "max_core_count", "initial_count", "idle_timeout", "type", "colocate")


def _sku_has_infiniband(catalog: Catalog, name: str) -> bool:
    sku = _sku(catalog, name)
    return sku is not None and sku.infiniband is not None


def queues_view(loaded: LoadedSpec, settings: AzhopSettings, catalog: Catalog) -> QueuesView:
    # hpcconf writes ColocateNodes for Slurm only (resolve.azhop), so under OpenPBS nothing is colocated.
    slurm = settings.queue_manager == "slurm"
    queues = [QueueView(name=p.name, label=f"pools[{i}]", path=("pools", i), keys={"name": ("pools", i, "name")},
                        max_nodes=p.count, max_count=p.count,
                        colocate=slurm and p.placement.colocated(_sku_has_infiniband(catalog, p.sku)),
                        duplicate_reported_elsewhere=True)  # two pools with one name are HPC008
              for i, p in enumerate(loaded.cluster.pools)]
    for i, q in enumerate(settings.extra_queues):
        base = ("azhop", "extra_queues", i)
        limits = {"vm_size": q.vm_size, "max_count": q.max_count, "max_core_count": q.max_core_count}
        queues.append(QueueView(
            name=q.name, label=f"extra_queues[{i}]", path=base,
            keys={f: base + (f,) for f in _EXTRA_QUEUE_FIELDS if _given(loaded, *base, f)},
            max_nodes=kb.queue_max_nodes({k: v for k, v in limits.items() if v is not None}),
            max_count=q.max_count, max_core_count=q.max_core_count, initial_count=q.initial_count,
            idle_timeout=q.idle_timeout, type=q.type, colocate=slurm and q.colocate))
    default = (settings.default_queue, ("azhop", "default_queue")) if settings.default_queue is not None else None
    return QueuesView(queues=tuple(queues), queue_manager=settings.queue_manager,
                      autoscale_idle_timeout=settings.autoscale_idle_timeout,
                      idle_timeout_key="azhop.autoscale_idle_timeout", default_queue=default)


def identities_view(loaded: LoadedSpec, settings: AzhopSettings) -> IdentitiesView:
    groups = tuple(GroupView(name=g.name, gid=g.gid, label=f"groups[{i}]", gid_path=("azhop", "groups", i, "gid"))
                   for i, g in enumerate(settings.groups))
    users = tuple(UserView(name=u.name, uid=u.uid, label=f"users[{i}]", name_path=("azhop", "users", i, "name"),
                           uid_path=("azhop", "users", i, "uid"),
                           groups=tuple((g, ("azhop", "users", i, "groups", j)) for j, g in enumerate(u.groups)))
                  for i, u in enumerate(settings.users))
    return IdentitiesView(groups=groups, users=users,
                          groups_path=("azhop", "groups") if _given(loaded, "azhop", "groups") else None,
                          group_ref="name", groups_key="azhop.groups")


def image_refs_view(loaded: LoadedSpec, settings: AzhopSettings) -> ImageRefsView:
    images: list[tuple[str, tuple]] = [(getattr(settings.images, key), ("azhop", "images", key) if _given(loaded, "azhop", "images", key) else ("azhop",))
              for key in ("gpu", "cpu", "linux_base", "windows_base")]
    images += [(p.image, ("pools", i, "image")) for i, p in enumerate(loaded.cluster.pools) if p.image]
    images += [(q.image, ("azhop", "extra_queues", i, "image")) for i, q in enumerate(settings.extra_queues) if q.image]
    return ImageRefsView(images=tuple(images))


# -- adapters sharing the config.yml judgement ---------------------------------------------------------

@spec_adapter(code="AZH002", name="azhop-queue-name", severity=Severity.ERROR)
def queue_names(loaded: LoadedSpec, catalog: Catalog) -> Iterator[Diagnostic]:
    settings = _settings(loaded)
    if settings is not None:
        yield from _report(loaded, judge_queue_names(queues_view(loaded, settings, catalog)), Severity.ERROR)


@spec_adapter(code="AZH012", name="azhop-queue-limits", severity=Severity.WARNING)
def queue_limits(loaded: LoadedSpec, catalog: Catalog) -> Iterator[Diagnostic]:
    """In a spec these are errors: hpcconf would write a queue setting it knows has no effect
    (config.yml, written by hand, gets the rule's warning)."""
    settings = _settings(loaded)
    if settings is not None:
        yield from _report(loaded, judge_queue_limits(queues_view(loaded, settings, catalog)), Severity.ERROR)


@spec_adapter(code="AZH010", name="azhop-image-reference", severity=Severity.ERROR)
def image_references(loaded: LoadedSpec, catalog: Catalog) -> Iterator[Diagnostic]:
    settings = _settings(loaded)
    if settings is not None:
        yield from _report(loaded, judge_image_refs(image_refs_view(loaded, settings)), Severity.ERROR)


@spec_adapter(code="AZH013", name="azhop-users-groups", severity=Severity.ERROR)
def users_groups(loaded: LoadedSpec, catalog: Catalog) -> Iterator[Diagnostic]:
    settings = _settings(loaded)
    if settings is not None:
        yield from _report(loaded, judge_identities(identities_view(loaded, settings)), Severity.ERROR)


# -- adapters judging what the spec decides itself ----------------------------------------------------

@spec_adapter(code="AZH004", name="azhop-slurm-versions", severity=Severity.ERROR)
def slurm_version_pair(loaded: LoadedSpec, catalog: Catalog) -> Iterator[Diagnostic]:
    settings = _settings(loaded)
    if settings is None or settings.queue_manager != "slurm":
        return
    versions = loaded.cluster.versions
    pair = slurm_versions(versions.slurm, versions.cyclecloud_slurm)
    if pair.slurm not in kb.SLURM_VERSIONS:
        yield _diag(loaded, ("versions", "slurm"), f"az-hop cannot install Slurm {pair.slurm}", f"use one of: {', '.join(kb.SLURM_VERSIONS)}")
        return
    if pair.cyclecloud_slurm not in kb.SLURM_PAIRS:
        yield _diag(loaded, ("versions", "cyclecloud_slurm"), f"az-hop does not know cyclecloud-slurm {pair.cyclecloud_slurm}",
                    f"use one of: {', '.join(kb.SLURM_PAIRS)}")
        return
    if pair.slurm not in kb.SLURM_PAIRS[pair.cyclecloud_slurm]:
        fit = kb.cyclecloud_slurm_for(pair.slurm)
        yield _diag(loaded, ("versions", "cyclecloud_slurm"), f"cyclecloud-slurm {pair.cyclecloud_slurm} does not support Slurm {pair.slurm} "
                    f"(it supports {', '.join(kb.SLURM_PAIRS[pair.cyclecloud_slurm])})",
                    f"set versions.cyclecloud_slurm: {fit}, or drop it and hpcconf picks the matching project")




# The planned layout's problems, by the code whose judgement each one is (one plan, several rules).

def _subnet_problems(loaded: LoadedSpec, settings: AzhopSettings) -> Iterator[tuple[str, tuple, str, str, bool]]:
    """(code, path, message, hint, prefer_value) for each problem of the subnet layout hpcconf plans."""
    nodes = spec_queue_nodes(loaded.cluster, settings)
    problems = list(plan_subnets(settings, nodes).problems)
    given = settings.network.subnets is not None
    if given:
        problems += explicit_size_problems(settings, nodes)
    net = ("azhop", "network")
    for role, message, hint in problems:
        if given and role:
            yield _subnet_code(role, message), net + ("subnets", role), message, hint, True
        elif given:
            yield "AZH007", net + ("subnets",), message, hint, False
        else:
            yield _subnet_code(role, message), net + ("address_space",), message, hint, role != ""


def _subnet_code(role: str, message: str) -> str:
    if role == "compute" and "usable" in message:
        return "AZH006"
    if role == "lustre" and "AMLFS" in message:
        return "AZH009"
    return "AZH005"


def _subnet_findings(loaded: LoadedSpec, code: str) -> Iterator[Diagnostic]:
    settings = _settings(loaded)
    if settings is None:
        return
    for found, path, message, hint, prefer_value in _subnet_problems(loaded, settings):
        if found == code:
            yield _diag(loaded, path, message, hint, prefer_value)


@spec_adapter(code="AZH005", name="azhop-subnet-layout", severity=Severity.ERROR)
def subnet_layout(loaded: LoadedSpec, catalog: Catalog) -> Iterator[Diagnostic]:
    yield from _subnet_findings(loaded, "AZH005")


@spec_adapter(code="AZH006", name="azhop-compute-subnet-size", severity=Severity.ERROR)
def compute_subnet_size(loaded: LoadedSpec, catalog: Catalog) -> Iterator[Diagnostic]:
    yield from _subnet_findings(loaded, "AZH006")


@spec_adapter(code="AZH007", name="azhop-conditional-sections", severity=Severity.ERROR)
def conditional_sections(loaded: LoadedSpec, catalog: Catalog) -> Iterator[Diagnostic]:
    yield from _subnet_findings(loaded, "AZH007")
    settings = _settings(loaded)
    if settings is not None and settings.slurm_accounting and settings.queue_manager != "slurm":
        yield _diag(loaded, ("azhop", "slurm_accounting"), "slurm_accounting is on but queue_manager is openpbs",
                    "turn it off, or use queue_manager: slurm")


@spec_adapter(code="AZH008", name="azhop-home-mount", severity=Severity.ERROR)
def home_mount(loaded: LoadedSpec, catalog: Catalog) -> Iterator[Diagnostic]:
    settings = _settings(loaded)
    if settings is None:
        return
    home = settings.storage.home
    home_path = ("azhop", "storage", "home")
    if home.type == "existing":
        for key in ("server", "export"):
            if not getattr(home, key):
                yield _diag(loaded, home_path + ("type",),
                            f"home type 'existing' needs {key}: the NFS {'server' if key == 'server' else 'export path'} to mount",
                            f"add {key}: under azhop.storage.home, or use type: azurefiles / anf to let az-hop create the storage")
    else:
        for key in ("server", "export"):
            if getattr(home, key):
                yield _diag(loaded, home_path + (key,),
                            f"{key} is only read for home type 'existing'; az-hop fills it from the {home.type} it creates",
                            f"remove {key}, or set type: existing")
    if home.type == "azurefiles" and home.options and not kb.nfs41_options(home.options):
        yield _diag(loaded, home_path + ("options",),
                    f"Azure Files NFS shares speak only NFS 4.1; options '{home.options}' do not ask for it",
                    "use vers=4,minorversion=1,sec=sys (az-hop #1200), or drop options to use az-hop's")


@spec_adapter(code="AZH009", name="azhop-amlfs-size", severity=Severity.ERROR)
def amlfs_size(loaded: LoadedSpec, catalog: Catalog) -> Iterator[Diagnostic]:
    yield from _subnet_findings(loaded, "AZH009")
    settings = _settings(loaded)
    lustre = settings.storage.lustre if settings is not None else None
    if lustre is None:
        return
    path = ("azhop", "storage", "lustre", "capacity_tib")
    problem = kb.amlfs_capacity_problem(lustre.sku, lustre.capacity_tib)
    if problem:
        yield _diag(loaded, path, problem, "AMLFS only accepts whole steps of its tier (bicep/amlfs.bicep)")
    if kb.amlfs_min_prefix(lustre.capacity_tib) is None:
        yield _diag(loaded, path, f"{lustre.capacity_tib} TiB is past the AMLFS subnet table (400 TiB on a /23)",
                    "size the lustre subnet from Azure's amlfs-prerequisites page and give it in network.subnets")


@spec_adapter(code="AZH011", name="azhop-gpu-queue", severity=Severity.ERROR)
def gpu_queue(loaded: LoadedSpec, catalog: Catalog) -> Iterator[Diagnostic]:
    settings = _settings(loaded)
    if settings is None:
        return
    for i, pool in enumerate(loaded.cluster.pools):
        image = pool.image or settings.images.gpu
        has_driver, why = kb.gpu_driver_verdict(image)
        if has_driver is False:
            path = ("pools", i, "image") if pool.image else ("azhop", "images", "gpu")
            yield _diag(loaded, path, f"GPU pool '{pool.name}' would boot image '{image}', which has no NVIDIA driver ({why})",
                        "use an HPC image with the driver, e.g. microsoft-dsvm:ubuntu-hpc:2204:latest or "
                        "almalinux:almalinux-hpc:8_10-hpc-gen2:latest")
        yield from _gpu_pool_placement(loaded, settings, catalog, i)


def _gpu_pool_placement(loaded: LoadedSpec, settings: AzhopSettings, catalog: Catalog, i: int) -> Iterator[Diagnostic]:
    pool = loaded.cluster.pools[i]
    sku = _sku(catalog, pool.sku)
    if sku is None:
        return
    if sku.provider != "azure":
        yield _diag(loaded, ("pools", i, "sku"), f"pool '{pool.name}' uses {sku.provider} SKU {sku.name}; AzHOP deploys Azure VM sizes only",
                    "use an Azure size for AzHOP pools, or drop azhop from platforms")
        return
    # The size's InfiniBand decides, not network.infiniband.enabled: AZH011 judges config.yml by the size name.
    if sku.infiniband is None or pool.count < 2:
        return
    if pool.placement.colocate is False:  # unset means colocated for an InfiniBand size
        yield _diag(loaded, ("pools", i, "placement", "colocate"),
                    f"pool '{pool.name}' runs multi-node InfiniBand jobs on {pool.count} x {sku.name} but is not colocated",
                    "set placement.colocate: true (az-hop ColocateNodes): InfiniBand only connects VMs of one scale set / placement group")
    elif settings.queue_manager != "slurm":
        yield _diag(loaded, ("azhop", "queue_manager"),
                    f"pool '{pool.name}' needs colocated nodes for InfiniBand, but az-hop's OpenPBS template ignores ColocateNodes",
                    "use queue_manager: slurm for multi-node InfiniBand pools")
