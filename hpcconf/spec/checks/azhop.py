"""AzHOP settings of a spec.

AZH002, AZH010, AZH012 and AZH013 are config.yml rules (:mod:`hpcconf.lint.rules.azhop_*`) whose
spec side (``@spec_rule(file_rule=True)``) fills the typed views of :mod:`hpcconf.knowledge.azhop_view`, so both
sides call one judgement. SPEC040-SPEC046 judge what only the spec decides (hpcconf plans the
subnets, pairs the Slurm versions, places the pools) with the same knowledge
(:mod:`hpcconf.knowledge.azhop`); they are spec rules of their own, formerly reported as
AZH004-AZH009 and AZH011, which now judge a hand-written config.yml only.
G1 (queue_manager values) is the ``Literal`` of ``azhop.queue_manager``, reported by the loader.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, Iterable, Iterator

from ...catalog_errors import UnknownSku
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
from ...rules_registry import spec_rule
from ...yamlpos import value_at
from ..azhop_plan import explicit_size_problems, plan_subnets, slurm_versions, spec_queue_nodes
from . import at

if TYPE_CHECKING:  # the pydantic models: registering these rules must not import them
    from ...catalog import Catalog, Sku
    from ..azhop import AzhopSettings
    from ..load import LoadedSpec


def _settings(loaded: LoadedSpec) -> AzhopSettings | None:
    """The spec's AzHOP settings (az-hop's defaults when the section is absent), or None off AzHOP."""
    if "azhop" not in loaded.cluster.platforms:
        return None
    from ..azhop import AzhopSettings  # loaded with the spec already; not when the registry loads

    return loaded.cluster.azhop or AzhopSettings()


def _path(loaded: LoadedSpec, path: tuple[Any, ...]) -> tuple[Any, ...]:
    if path[:1] == ("azhop",) and "azhop" not in (loaded.document.data or {}):
        return ("platforms",)  # all defaults: point at the line that asked for AzHOP
    return path


def _report(loaded: LoadedSpec, findings: Iterable[Finding], default: Severity) -> Iterator[Diagnostic]:
    for finding in findings:
        yield at(loaded, _path(loaded, finding.path), finding.message, finding.hint, finding.prefer_value,
                 finding.severity or default)


def _diag(loaded: LoadedSpec, path: tuple[Any, ...], message: str, hint: str, prefer_value: bool = True) -> Diagnostic:
    return at(loaded, _path(loaded, path), message, hint, prefer_value)


def _sku(catalog: Catalog, name: str) -> Sku | None:
    try:
        return catalog.get(name)
    except UnknownSku:
        return None  # reported by HPC006


def _given(loaded: LoadedSpec, *path: str | int) -> bool:
    """Whether the spec file itself writes the key at ``path`` (not a default)."""
    missing = object()
    return value_at(loaded.document.data, path, missing) is not missing


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
    images: list[tuple[str, tuple[Any, ...]]] = [(getattr(settings.images, key), ("azhop", "images", key) if _given(loaded, "azhop", "images", key) else ("azhop",))
              for key in ("gpu", "cpu", "linux_base", "windows_base")]
    images += [(p.image, ("pools", i, "image")) for i, p in enumerate(loaded.cluster.pools) if p.image]
    images += [(q.image, ("azhop", "extra_queues", i, "image")) for i, q in enumerate(settings.extra_queues) if q.image]
    return ImageRefsView(images=tuple(images))


# -- adapters sharing the config.yml judgement ---------------------------------------------------------

@spec_rule(code="AZH002", name="azhop-queue-name", severity=Severity.ERROR, file_rule=True)
def queue_names(loaded: LoadedSpec, catalog: Catalog) -> Iterator[Diagnostic]:
    settings = _settings(loaded)
    if settings is not None:
        yield from _report(loaded, judge_queue_names(queues_view(loaded, settings, catalog)), Severity.ERROR)


@spec_rule(code="AZH012", name="azhop-queue-limits", severity=Severity.WARNING, file_rule=True)
def queue_limits(loaded: LoadedSpec, catalog: Catalog) -> Iterator[Diagnostic]:
    """In a spec these are errors: hpcconf would write a queue setting it knows has no effect
    (config.yml, written by hand, gets the rule's warning)."""
    settings = _settings(loaded)
    if settings is not None:
        yield from _report(loaded, judge_queue_limits(queues_view(loaded, settings, catalog)), Severity.ERROR)


@spec_rule(code="AZH010", name="azhop-image-reference", severity=Severity.ERROR, file_rule=True)
def image_references(loaded: LoadedSpec, catalog: Catalog) -> Iterator[Diagnostic]:
    settings = _settings(loaded)
    if settings is not None:
        yield from _report(loaded, judge_image_refs(image_refs_view(loaded, settings)), Severity.ERROR)


@spec_rule(code="AZH013", name="azhop-users-groups", severity=Severity.ERROR, file_rule=True)
def users_groups(loaded: LoadedSpec, catalog: Catalog) -> Iterator[Diagnostic]:
    settings = _settings(loaded)
    if settings is not None:
        yield from _report(loaded, judge_identities(identities_view(loaded, settings)), Severity.ERROR)


# -- rules of their own: what the spec decides itself ---------------------------------------------------
# hpcconf plans the subnets, pairs the versions and places the pools itself, so these judge the spec's
# own fields and plan, not a config.yml: each is a spec rule with its own code and page. ``formerly``
# names the AZH code they were reported under (``hpcconf explain AZH00N`` and selectors lead here);
# the AZH code lives on as the config.yml rule.

@spec_rule(code="SPEC040", name="azhop-spec-slurm-pair", since="0.2.0", formerly=("AZH004",))
def slurm_version_pair(loaded: LoadedSpec, catalog: Catalog) -> Iterator[Diagnostic]:
    """``versions.slurm`` and ``versions.cyclecloud_slurm`` are not a pair az-hop can install.

    ## What it catches
    On AzHOP with ``queue_manager: slurm``: a Slurm release az-hop does not install, a cyclecloud-slurm
    project it does not know, and a cyclecloud-slurm project given with a Slurm release it does not
    support (2.7.x: 20.11.9 / 22.05.3; 3.0.4: 22.05.9 / 23.02.5). When ``versions.cyclecloud_slurm``
    is left out hpcconf picks the matching project, so only a pair the spec writes can be wrong.
    Until 0.2.0 this was reported as AZH004 (``hpcconf explain AZH004`` points here); AZH004 now only judges
    a hand-written config.yml.

    ## Why is this bad?
    az-hop's ``config.schema.json`` checks each version against its own list, never the pair, and the
    playbooks (``playbooks/cccluster.yml``, ``roles/cyclecloud_cluster/vars/main.yml`` at 826f7906)
    install the cyclecloud-slurm project named, whatever the Slurm release: a project that does not
    support the release leaves the scheduler without nodes. PR #1752 documents the supported pairs.

    ## Example
    ```yaml
    platforms: [azhop]
    versions:
      slurm: 20.11.9
      cyclecloud_slurm: 3.0.4
    ```

    ## Fix
    ```yaml
    versions:
      slurm: 20.11.9
      cyclecloud_slurm: 2.7.2     # or drop it: hpcconf picks the project that supports the release
    ```
    """
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

SUBNET_LAYOUT, COMPUTE_SUBNET, FEATURE_NEEDS, AMLFS_SIZE = "SPEC041", "SPEC042", "SPEC043", "SPEC045"


def _subnet_problems(loaded: LoadedSpec, settings: AzhopSettings) -> Iterator[tuple[str, tuple[Any, ...], str, str, bool]]:
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
            yield FEATURE_NEEDS, net + ("subnets",), message, hint, False
        else:
            yield _subnet_code(role, message), net + ("address_space",), message, hint, role != ""


def _subnet_code(role: str, message: str) -> str:
    if role == "compute" and "usable" in message:
        return COMPUTE_SUBNET
    if role == "lustre" and "AMLFS" in message:
        return AMLFS_SIZE
    return SUBNET_LAYOUT


def _subnet_findings(loaded: LoadedSpec, code: str) -> Iterator[Diagnostic]:
    settings = _settings(loaded)
    if settings is None:
        return
    for found, path, message, hint, prefer_value in _subnet_problems(loaded, settings):
        if found == code:
            yield _diag(loaded, path, message, hint, prefer_value)


@spec_rule(code="SPEC041", name="azhop-spec-subnet-plan", since="0.2.0", formerly=("AZH005",))
def subnet_layout(loaded: LoadedSpec, catalog: Catalog) -> Iterator[Diagnostic]:
    """The AzHOP subnets hpcconf would plan (or the ones the spec gives) do not fit the VNet.

    ## What it catches
    ``azhop.network.subnets`` that overlap, lie outside ``address_space`` or are smaller than their
    role needs (bastion /26), and an ``address_space`` with no room for the subnets hpcconf plans
    for the enabled features. Until 0.2.0 this was reported as AZH005 (``hpcconf explain AZH005`` points here);
    AZH005 now only judges a hand-written config.yml.

    ## Why is this bad?
    az-hop's ``config.schema.json`` types prefixes as plain strings, and Azure refuses overlapping or
    out-of-space subnets when Bicep creates the VNet, after the deployer has started. Azure Bastion
    needs an AzureBastionSubnet of /26 or larger (Microsoft Learn, "Azure Bastion configuration
    settings", Subnet).

    ## Example
    ```yaml
    azhop:
      network:
        address_space: 10.101.0.0/23
        subnets:
          frontend: 10.101.0.0/29
          admin: 10.101.0.0/28      # overlaps frontend and ad
          compute: 10.101.1.0/24
    ```

    ## Fix
    ```yaml
          admin: 10.101.0.16/28
    ```
    Or drop ``subnets`` and let hpcconf plan them inside ``address_space``.
    """
    yield from _subnet_findings(loaded, SUBNET_LAYOUT)


@spec_rule(code="SPEC042", name="azhop-spec-compute-subnet", since="0.2.0", formerly=("AZH006",))
def compute_subnet_size(loaded: LoadedSpec, catalog: Catalog) -> Iterator[Diagnostic]:
    """The AzHOP compute subnet has fewer usable addresses than the spec's pools and queues can start nodes.

    ## What it catches
    A compute subnet (given in ``azhop.network.subnets`` or planned by hpcconf in ``address_space``)
    whose usable addresses (its size minus the 5 Azure keeps) are fewer than the nodes of all pools
    and ``extra_queues`` together. Until 0.2.0 this was reported as AZH006 (``hpcconf explain AZH006`` points here);
    AZH006 now only judges a hand-written config.yml.

    ## Why is this bad?
    Every node takes an address in the compute subnet, and Azure keeps the first four and the last
    address of every subnet (Microsoft Learn, "Azure Virtual Network FAQ": "Azure reserves the first
    four addresses and the last address in each subnet"). Once the subnet is full CycleCloud cannot
    start more nodes and jobs stay pending.

    ## Example
    ```yaml
    pools:
      - {name: ndv5, sku: Standard_ND96isr_H100_v5, count: 300}
    azhop:
      network: {address_space: 10.101.0.0/23}
    ```

    ## Fix
    Give a larger address space (a /24 compute subnet holds 251 nodes), or fewer nodes:
    ```yaml
      network: {address_space: 10.101.0.0/22}
    ```
    """
    yield from _subnet_findings(loaded, COMPUTE_SUBNET)


@spec_rule(code="SPEC043", name="azhop-spec-feature-needs", since="0.2.0", formerly=("AZH007",))
def conditional_sections(loaded: LoadedSpec, catalog: Catalog) -> Iterator[Diagnostic]:
    """An AzHOP feature the spec turns on lacks what it needs: a subnet in the given layout, or Slurm.

    ## What it catches
    ``azhop.network.subnets`` without the subnet a feature of the spec needs (database for
    ``slurm_accounting``, netapp for an ANF home, lustre for AMLFS, bastion, gateway), and
    ``slurm_accounting: true`` with ``queue_manager: openpbs``. Until 0.2.0 this was reported as
    AZH007 (``hpcconf explain AZH007`` points here); AZH007 now only judges a hand-written config.yml.

    ## Why is this bad?
    az-hop's ``config.schema.json`` has no conditional requirements, and ``bicep/azhop.bicep`` reads
    the subnet of each enabled feature without a fallback, so the deployment fails with a template
    error (az-hop #1906). Accounting is a Slurm setting: ``config.schema.json`` (826f7906) has it as
    ``slurm.accounting_enabled`` only, so under OpenPBS it configures nothing.

    ## Example
    ```yaml
    azhop:
      queue_manager: slurm
      slurm_accounting: true
      network:
        address_space: 10.101.0.0/23
        subnets: {frontend: 10.101.0.0/29, ad: 10.101.0.8/29, admin: 10.101.0.16/28, compute: 10.101.1.0/24}
    ```

    ## Fix
    ```yaml
        subnets: {frontend: 10.101.0.0/29, ad: 10.101.0.8/29, admin: 10.101.0.16/28,
                  database: 10.101.0.32/28, compute: 10.101.1.0/24}
    ```
    Or drop ``subnets`` and let hpcconf plan every subnet the features need.
    """
    yield from _subnet_findings(loaded, FEATURE_NEEDS)
    settings = _settings(loaded)
    if settings is not None and settings.slurm_accounting and settings.queue_manager != "slurm":
        yield _diag(loaded, ("azhop", "slurm_accounting"), "slurm_accounting is on but queue_manager is openpbs",
                    "turn it off, or use queue_manager: slurm")


@spec_rule(code="SPEC044", name="azhop-spec-home-storage", since="0.2.0", formerly=("AZH008",))
def home_mount(loaded: LoadedSpec, catalog: Catalog) -> Iterator[Diagnostic]:
    """``azhop.storage.home`` gives the NFS server and export for the wrong home type, or NFS options Azure Files refuses.

    ## What it catches
    ``type: existing`` without ``server`` or ``export``; ``server`` or ``export`` with a type az-hop
    creates itself (azurefiles, anf), where they are ignored; an Azure Files home whose ``options``
    do not ask for NFS 4.1. Until 0.2.0 this was reported as AZH008 (``hpcconf explain AZH008`` points here);
    AZH008 now only judges a hand-written config.yml.

    ## Why is this bad?
    ``bicep/azhop.bicep`` (826f7906) fills the home server and export from the ANF or Azure Files
    storage it creates; for an existing NFS server nothing fills them, and every node fails its
    home mount at boot. Azure Files NFS shares speak NFS 4.1 only (Microsoft Learn, "NFS file shares
    in Azure Files"); az-hop #1200: a home mounted with other options timed out.

    ## Example
    ```yaml
    azhop:
      storage:
        home: {type: existing, mountpoint: /anfhome}
    ```

    ## Fix
    ```yaml
        home: {type: existing, mountpoint: /anfhome, server: 10.0.2.4, export: /home}
    ```
    """
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


@spec_rule(code="SPEC045", name="azhop-spec-amlfs-size", since="0.2.0", formerly=("AZH009",))
def amlfs_size(loaded: LoadedSpec, catalog: Catalog) -> Iterator[Diagnostic]:
    """The spec's AMLFS capacity is not a whole number of its tier's steps, or its lustre subnet is too small.

    ## What it catches
    ``azhop.storage.lustre.capacity_tib`` below or not a multiple of its tier's step (48 TiB for
    AMLFS-Durable-Premium-40, 16 for -125, 8 for -250, 4 for -500), a capacity past the AMLFS subnet
    table, and a given lustre subnet smaller than the capacity needs. Until 0.2.0 this was reported
    as AZH009 (``hpcconf explain AZH009`` points here); AZH009 now only judges a hand-written config.yml.

    ## Why is this bad?
    Azure rejects other capacities when ``bicep/amlfs.bicep`` (826f7906) creates the file system, and
    an AMLFS needs one address per server: Microsoft Learn's "Azure Managed Lustre network
    prerequisites" table gives the smallest subnet per capacity (4-16 TiB /27, 20-40 /26, 44-92 /25,
    96-196 /24, 200-400 /23).

    ## Example
    ```yaml
    azhop:
      storage:
        lustre: {sku: AMLFS-Durable-Premium-250, capacity_tib: 12}
    ```

    ## Fix
    ```yaml
        lustre: {sku: AMLFS-Durable-Premium-250, capacity_tib: 16}
    ```
    """
    yield from _subnet_findings(loaded, AMLFS_SIZE)
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


@spec_rule(code="SPEC046", name="azhop-spec-gpu-pool", since="0.2.0", formerly=("AZH011",))
def gpu_queue(loaded: LoadedSpec, catalog: Catalog) -> Iterator[Diagnostic]:
    """An AzHOP pool cannot run its GPU jobs as placed: no NVIDIA driver, or InfiniBand without colocation.

    ## What it catches
    A pool whose image (its own, or ``azhop.images.gpu``) is known to have no NVIDIA driver; a
    multi-node pool of an InfiniBand size with ``placement.colocate: false``,
    or under ``queue_manager: openpbs``. Until 0.2.0 this was reported as AZH011 (``hpcconf explain AZH011`` points here);
    AZH011 now only judges a hand-written config.yml.

    ## Why is this bad?
    Without the driver ``nvidia-smi`` and NCCL fail on the node. InfiniBand only connects VMs of one
    scale set / placement group (Microsoft Learn, "HPC VM sizes", InfiniBand), and az-hop creates
    placement groups for Slurm only: ``config.schema.json`` (826f7906) describes ColocateNodes as
    "Whether to create placement groups (SLURM only)". Without one, multi-node jobs land on
    unconnected VMs and NCCL falls back to TCP. (A non-Azure size is SPEC080.)

    ## Example
    ```yaml
    pools:
      - name: ndv4
        sku: Standard_ND96asr_v4
        count: 2
        placement: {colocate: false}
    ```

    ## Fix
    ```yaml
        placement: {colocate: true}    # or leave it out: InfiniBand sizes are colocated by default
    ```
    """
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
        return  # SPEC080: AzHOP deploys Azure VM sizes only
    # The size's InfiniBand decides, not network.infiniband.enabled: as AZH011 judges config.yml by the size name.
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
