"""AzHOP checks on the spec: az-hop's schema gaps (research/azhop.md §2, G1-G8) caught before a build.

az-hop's own validation is its JSON schema; everything it misses fails later, in Bicep,
Ansible or at the first job. Each problem here points at the spec line to change and uses
the code of the lint rule that catches the same problem in a hand-written config.yml.
G1 (queue_manager values) is the ``Literal`` of ``azhop.queue_manager``, reported by the loader.
"""

from __future__ import annotations

from typing import Iterator

from ..catalog import Catalog, UnknownSku
from ..diagnostics import Diagnostic
from ..knowledge import azhop as kb
from ..knowledge.azhop_facts import ALL_USERS_GID
from ..resolve.azhop import explicit_size_problems, plan_subnets, slurm_versions, spec_queue_nodes
from .azhop import AzhopSettings
from .load import LoadedSpec


def check_azhop(loaded: LoadedSpec, catalog: Catalog) -> list[Diagnostic]:
    cluster = loaded.cluster
    if "azhop" not in cluster.platforms:
        return []
    settings = cluster.azhop or AzhopSettings()
    checks = (_queue_names, _slurm_versions, _subnets, _storage, _identities, _images, _gpu_queues, _queue_settings)
    return [d for check in checks for d in check(loaded, settings, catalog)]


def _diag(loaded: LoadedSpec, path: tuple, code: str, name: str, message: str, hint: str,
          prefer_value: bool = True) -> Diagnostic:
    if path[:1] == ("azhop",) and "azhop" not in (loaded.document.data or {}):
        path = ("platforms",)  # all defaults: point at the line that asked for AzHOP
    return loaded.document.diagnostic(Diagnostic(code=code, name=name, message=message, hint=hint), path, prefer_value)


def _sku(catalog: Catalog, name: str):
    try:
        return catalog.get(name)
    except UnknownSku:
        return None  # reported by check_spec (HPC006)


# -- G7: queue names -------------------------------------------------------------------------------

def _queue_names(loaded: LoadedSpec, settings: AzhopSettings, catalog: Catalog) -> Iterator[Diagnostic]:
    seen: dict[str, tuple] = {}
    entries = [(("pools", i, "name"), p.name, p.count, p.placement.colocate) for i, p in enumerate(loaded.cluster.pools)]
    entries += [(("azhop", "extra_queues", i, "name"), q.name, q.max_count or 0, q.colocate)
                for i, q in enumerate(settings.extra_queues)]
    for path, name, count, colocate in entries:
        if len(name) > kb.QUEUE_NAME_MAX:
            yield _diag(loaded, path, "AZH002", "azhop-queue-name",
                        f"queue name '{name}' is {len(name)} characters; az-hop queue names are at most {kb.QUEUE_NAME_MAX}",
                        "node hostnames are <queue>-pg0-<n> and AD domain join cuts hostnames at 15 characters (az-hop #1191): shorten it")
        else:
            host = kb.longest_hostname(name, count, colocate)
            if len(host) > kb.HOSTNAME_MAX:
                yield _diag(loaded, path, "AZH002", "azhop-queue-name",
                            f"node hostname '{host}' of queue '{name}' is {len(host)} characters; the limit is {kb.HOSTNAME_MAX}",
                            "shorten the queue name so <name>-pg0-<max nodes> fits in 15 characters")
        if name in seen and path[0] == "azhop":  # duplicate pool names are HPC008 (check_spec)
            yield _diag(loaded, path, "AZH002", "azhop-queue-name",
                        f"queue name '{name}' is used twice (pools and azhop.extra_queues share one namespace)",
                        "give every queue its own name: it is the nodearray and Slurm partition")
        seen.setdefault(name, path)
    default = settings.default_queue
    if default is not None and default not in {e[1] for e in entries}:
        yield _diag(loaded, ("azhop", "default_queue"), "AZH002", "azhop-queue-name",
                    f"default_queue '{default}' is not a pool or extra queue", f"use one of: {', '.join(e[1] for e in entries)}")


# -- G4: Slurm / cyclecloud-slurm pair -----------------------------------------------------------------

def _slurm_versions(loaded: LoadedSpec, settings: AzhopSettings, catalog: Catalog) -> Iterator[Diagnostic]:
    if settings.queue_manager != "slurm":
        return
    versions = loaded.cluster.versions
    pair = slurm_versions(versions.slurm, versions.cyclecloud_slurm)
    if pair.slurm not in kb.SLURM_VERSIONS:
        yield _diag(loaded, ("versions", "slurm"), "AZH004", "azhop-slurm-versions",
                    f"az-hop cannot install Slurm {pair.slurm}", f"use one of: {', '.join(kb.SLURM_VERSIONS)}")
        return
    if pair.cyclecloud_slurm not in kb.SLURM_PAIRS:
        yield _diag(loaded, ("versions", "cyclecloud_slurm"), "AZH004", "azhop-slurm-versions",
                    f"az-hop does not know cyclecloud-slurm {pair.cyclecloud_slurm}",
                    f"use one of: {', '.join(kb.SLURM_PAIRS)}")
        return
    if pair.slurm not in kb.SLURM_PAIRS[pair.cyclecloud_slurm]:
        fit = kb.cyclecloud_slurm_for(pair.slurm)
        yield _diag(loaded, ("versions", "cyclecloud_slurm"), "AZH004", "azhop-slurm-versions",
                    f"cyclecloud-slurm {pair.cyclecloud_slurm} does not support Slurm {pair.slurm} "
                    f"(it supports {', '.join(kb.SLURM_PAIRS[pair.cyclecloud_slurm])})",
                    f"set versions.cyclecloud_slurm: {fit}, or drop it and hpcconf picks the matching project")


# -- G2 / G3: subnets ---------------------------------------------------------------------------------

def _subnets(loaded: LoadedSpec, settings: AzhopSettings, catalog: Catalog) -> Iterator[Diagnostic]:
    nodes = spec_queue_nodes(loaded.cluster, settings)
    plan = plan_subnets(settings, nodes)
    problems = list(plan.problems)
    if settings.network.subnets is not None:
        problems += explicit_size_problems(settings, nodes)
    net = ("azhop", "network")
    for role, message, hint in problems:
        if settings.network.subnets is not None and role:
            path, code, name = net + ("subnets", role), _subnet_code(role, message), _subnet_name(role, message)
        elif settings.network.subnets is not None:
            path, code, name = net + ("subnets",), "AZH007", "azhop-conditional-sections"
        else:
            path, code, name = net + ("address_space",), _subnet_code(role, message), _subnet_name(role, message)
        yield _diag(loaded, path, code, name, message, hint, prefer_value=role != "")


def _subnet_code(role: str, message: str) -> str:
    if role == "compute" and "usable" in message:
        return "AZH006"
    if role == "lustre" and "AMLFS" in message:
        return "AZH009"
    return "AZH005"


def _subnet_name(role: str, message: str) -> str:
    return {"AZH006": "azhop-compute-subnet-size", "AZH009": "azhop-amlfs-size",
            "AZH005": "azhop-subnet-layout"}[_subnet_code(role, message)]


# -- G3 / G6: storage ----------------------------------------------------------------------------------

def _storage(loaded: LoadedSpec, settings: AzhopSettings, catalog: Catalog) -> Iterator[Diagnostic]:
    home = settings.storage.home
    home_path = ("azhop", "storage", "home")
    if home.type == "existing":
        for key in ("server", "export"):
            if not getattr(home, key):
                yield _diag(loaded, home_path + ("type",), "AZH008", "azhop-home-mount",
                            f"home type 'existing' needs {key}: the NFS {'server' if key == 'server' else 'export path'} to mount",
                            f"add {key}: under azhop.storage.home, or use type: azurefiles / anf to let az-hop create the storage")
    else:
        for key in ("server", "export"):
            if getattr(home, key):
                yield _diag(loaded, home_path + (key,), "AZH008", "azhop-home-mount",
                            f"{key} is only read for home type 'existing'; az-hop fills it from the {home.type} it creates",
                            f"remove {key}, or set type: existing")
    if home.type == "azurefiles" and home.options and not kb.nfs41_options(home.options):
        yield _diag(loaded, home_path + ("options",), "AZH008", "azhop-home-mount",
                    f"Azure Files NFS shares speak only NFS 4.1; options '{home.options}' do not ask for it",
                    "use vers=4,minorversion=1,sec=sys (az-hop #1200), or drop options to use az-hop's")
    lustre = settings.storage.lustre
    if lustre is not None:
        problem = kb.amlfs_capacity_problem(lustre.sku, lustre.capacity_tib)
        if problem:
            yield _diag(loaded, ("azhop", "storage", "lustre", "capacity_tib"), "AZH009", "azhop-amlfs-size", problem,
                        "AMLFS only accepts whole steps of its tier (bicep/amlfs.bicep)")
        if kb.amlfs_min_prefix(lustre.capacity_tib) is None:
            yield _diag(loaded, ("azhop", "storage", "lustre", "capacity_tib"), "AZH009", "azhop-amlfs-size",
                        f"{lustre.capacity_tib} TiB is past the AMLFS subnet table (400 TiB on a /23)",
                        "size the lustre subnet from Azure's amlfs-prerequisites page and give it in network.subnets")


# -- G6: users and groups -------------------------------------------------------------------------------

def _identities(loaded: LoadedSpec, settings: AzhopSettings, catalog: Catalog) -> Iterator[Diagnostic]:
    names = {g.name for g in settings.groups}
    seen_gid: dict[int, int] = {}
    for i, group in enumerate(settings.groups):
        if group.gid in seen_gid:
            yield _diag(loaded, ("azhop", "groups", i, "gid"), "AZH013", "azhop-users-groups",
                        f"gid {group.gid} is already used by groups[{seen_gid[group.gid]}]", "give each group its own gid")
        seen_gid.setdefault(group.gid, i)
    if ALL_USERS_GID not in seen_gid and settings.groups:
        yield _diag(loaded, ("azhop", "groups"), "AZH013", "azhop-users-groups",
                    "no group has gid 5000, az-hop's all-users group", "keep az-hop's built-in gids 5000, 5001 and 5002 (rename them if you like)", False)
    seen_uid: dict[int, int] = {}
    seen_name: dict[str, int] = {}
    for i, user in enumerate(settings.users):
        if user.uid in seen_uid:
            yield _diag(loaded, ("azhop", "users", i, "uid"), "AZH013", "azhop-users-groups",
                        f"uid {user.uid} is already used by users[{seen_uid[user.uid]}]", "give each user its own uid")
        if user.name in seen_name:
            yield _diag(loaded, ("azhop", "users", i, "name"), "AZH013", "azhop-users-groups",
                        f"user '{user.name}' is listed twice", "list each user once")
        seen_uid.setdefault(user.uid, i)
        seen_name.setdefault(user.name, i)
        for j, group in enumerate(user.groups):
            if group not in names:
                yield _diag(loaded, ("azhop", "users", i, "groups", j), "AZH013", "azhop-users-groups",
                            f"user '{user.name}' joins group '{group}', which azhop.groups does not define",
                            f"define it in azhop.groups, or use one of: {', '.join(sorted(names))}")


# -- G5 / G8: images ---------------------------------------------------------------------------------------

def _image_refs(loaded: LoadedSpec, settings: AzhopSettings):
    images = (loaded.document.data or {}).get("azhop", {}) or {}
    given = images.get("images", {}) if isinstance(images, dict) else {}
    for key in ("gpu", "cpu", "linux_base", "windows_base"):
        yield (("azhop", "images", key) if key in (given or {}) else ("azhop",)), getattr(settings.images, key)
    for i, pool in enumerate(loaded.cluster.pools):
        if pool.image:
            yield ("pools", i, "image"), pool.image
    for i, queue in enumerate(settings.extra_queues):
        if queue.image:
            yield ("azhop", "extra_queues", i, "image"), queue.image


def _images(loaded: LoadedSpec, settings: AzhopSettings, catalog: Catalog) -> Iterator[Diagnostic]:
    for path, image in _image_refs(loaded, settings):
        _, problem = kb.parse_image(image)
        if problem:
            yield _diag(loaded, path, "AZH010", "azhop-image-reference", f"image '{image}': {problem}",
                        "az-hop splits marketplace images on ':' into publisher, offer, sku and version")
    for i, pool in enumerate(loaded.cluster.pools):
        image = pool.image or settings.images.gpu
        has_driver, why = kb.gpu_driver_verdict(image)
        if has_driver is False:
            path = ("pools", i, "image") if pool.image else ("azhop", "images", "gpu")
            yield _diag(loaded, path, "AZH011", "azhop-gpu-queue",
                        f"GPU pool '{pool.name}' would boot image '{image}', which has no NVIDIA driver ({why})",
                        "use an HPC image with the driver, e.g. microsoft-dsvm:ubuntu-hpc:2204:latest or almalinux:almalinux-hpc:8_10-hpc-gen2:latest")


# -- G8: GPU queues --------------------------------------------------------------------------------------

def _gpu_queues(loaded: LoadedSpec, settings: AzhopSettings, catalog: Catalog) -> Iterator[Diagnostic]:
    for i, pool in enumerate(loaded.cluster.pools):
        sku = _sku(catalog, pool.sku)
        if sku is None:
            continue
        if sku.provider != "azure":
            yield _diag(loaded, ("pools", i, "sku"), "AZH011", "azhop-gpu-queue",
                        f"pool '{pool.name}' uses {sku.provider} SKU {sku.name}; AzHOP deploys Azure VM sizes only",
                        "use an Azure size for AzHOP pools, or drop azhop from platforms")
            continue
        # The size's InfiniBand decides, not network.infiniband.enabled: AZH011 judges config.yml by the size name.
        if sku.infiniband is None or pool.count < 2:
            continue
        if not pool.placement.colocate:
            yield _diag(loaded, ("pools", i, "placement", "colocate"), "AZH011", "azhop-gpu-queue",
                        f"pool '{pool.name}' runs multi-node InfiniBand jobs on {pool.count} x {sku.name} but is not colocated",
                        "set placement.colocate: true (az-hop ColocateNodes): InfiniBand only connects VMs of one scale set / placement group")
        elif settings.queue_manager != "slurm":
            yield _diag(loaded, ("azhop", "queue_manager"), "AZH011", "azhop-gpu-queue",
                        f"pool '{pool.name}' needs colocated nodes for InfiniBand, but az-hop's OpenPBS template ignores ColocateNodes",
                        "use queue_manager: slurm for multi-node InfiniBand pools")


def _queue_settings(loaded: LoadedSpec, settings: AzhopSettings, catalog: Catalog) -> Iterator[Diagnostic]:
    for i, queue in enumerate(settings.extra_queues):
        path = ("azhop", "extra_queues", i)
        if queue.idle_timeout is not None and queue.idle_timeout >= settings.autoscale_idle_timeout:
            yield _diag(loaded, path + ("idle_timeout",), "AZH012", "azhop-queue-limits",
                        f"idle_timeout {queue.idle_timeout} is not below autoscale_idle_timeout {settings.autoscale_idle_timeout}",
                        "a queue's idle_timeout must be lower than the cluster-wide one to have an effect")
        if queue.type == "login" and settings.queue_manager != "slurm":
            yield _diag(loaded, path + ("type",), "AZH012", "azhop-queue-limits",
                        "login queues exist only with Slurm; the OpenPBS template would create execute nodes",
                        "use queue_manager: slurm or drop the login queue")
        if queue.type == "login" and queue.initial_count is None:
            yield _diag(loaded, path + ("type",), "AZH012", "azhop-queue-limits",
                        "a login queue needs initial_count (az-hop has no default for it)", "add initial_count: 1")
    if settings.slurm_accounting and settings.queue_manager != "slurm":
        yield _diag(loaded, ("azhop", "slurm_accounting"), "AZH007", "azhop-conditional-sections",
                    "slurm_accounting is on but queue_manager is openpbs", "turn it off, or use queue_manager: slurm")
