"""Cross-field checks of the `slurm:` section and the MPI settings the Slurm jobs use.

Each problem is an error at the offending key: a setting that would be silently ignored
(a Crusoe block without Crusoe pools), a job that cannot start (more test nodes than the pool
has, coll/ucc on an Open MPI without it) or a value the consumer rejects (a UCC tune string
that does not parse, a UCX_TLS that leaves no transport).
"""

from __future__ import annotations

import re
from typing import TYPE_CHECKING, Iterator

from ...catalog_errors import UnknownSku
from ...diagnostics import Diagnostic, Severity
from ...knowledge.grammars import check_nccl_algo, check_ucc_tune, check_ucx_tls
from ...knowledge.openmpi import has_coll_ucc
from ...knowledge.versions import Version
from ...rules_registry import spec_rule
from . import at

if TYPE_CHECKING:  # the pydantic models: registering these rules must not import them
    from ...catalog import Catalog
    from ..load import LoadedSpec
    from ..model import NodePool
    from ..slurm import CrusoeSlurm

PARTITION_PATTERN = re.compile(r"[A-Za-z0-9][A-Za-z0-9_-]{0,63}")  # fullmatch: no trailing newline


def _sku_provider(catalog: Catalog, name: str) -> str | None:
    try:
        return catalog.get(name).provider
    except UnknownSku:
        return None  # reported by HPC006


def _slurm_platform(loaded: LoadedSpec) -> bool:
    """The `slurm:` section is read for platforms slurm and azhop (az-hop's queues are Slurm's)."""
    return bool({"slurm", "azhop"} & set(loaded.cluster.platforms))


def _crusoe_pools(loaded: LoadedSpec, catalog: Catalog) -> list[tuple[int, NodePool]]:
    return [(i, p) for i, p in enumerate(loaded.cluster.pools) if _sku_provider(catalog, p.sku) == "crusoe"]


# crusoecloud/slurm versions with one compute node type (slurm_compute_node_type/_count): before the
# v3.0.0 `partitions` list (variables.tf at 9f57d5e and b115d0c).
CRUSOE_ONE_NODE_TYPE = ("9f57d5e", "b115d0c")
CRUSOE_IB_NETWORK_VERSIONS = ("b115d0c",)  # slurm_compute_node_ib_network_id: the module creates the partition
CRUSOE_IB_PARTITION_VERSIONS = ("v3.0.0", "9f57d5e")  # an ib_partition_id per partition / for the compute nodes


def _crusoe_settings(loaded: LoadedSpec) -> CrusoeSlurm | None:
    slurm = loaded.cluster.slurm
    return slurm.crusoe if slurm is not None and _slurm_platform(loaded) else None


def _crusoe_ib_pools(loaded: LoadedSpec, catalog: Catalog) -> list[tuple[int, NodePool]]:
    """Crusoe pools whose instance type has InfiniBand, when the spec runs with InfiniBand."""
    if not loaded.cluster.network.infiniband.enabled:
        return []
    return [(i, p) for i, p in _crusoe_pools(loaded, catalog) if catalog.get(p.sku).infiniband is not None]


@spec_rule(code="SPEC006", name="crusoe-settings-unused", since="0.2.0", formerly=("HPC005",))
def crusoe_settings_unused(loaded: LoadedSpec, catalog: Catalog) -> Iterator[Diagnostic]:
    """``slurm.crusoe`` is set, but nothing reads it: no platform slurm, or no Crusoe pool.

    ## What it catches
    A ``slurm.crusoe`` block when ``slurm`` is not in ``platforms`` (no Terraform variables are
    written), or when no pool uses a Crusoe instance type. Reported as HPC005 (invalid-value) before 0.2.0.

    ## Why is this bad?
    The settings look applied but are silently dropped: the project id, subnet and IB network you
    wrote reach no file, and the cluster you get is not the one you described.

    ## Example
    ```yaml
    platforms: [aks]
    slurm:
      crusoe: {project_id: 5a1e..., location: us-east1-a, vpc_subnet_id: 9b2f...}
    ```

    ## Fix
    Add ``slurm`` to ``platforms`` and use a Crusoe SKU (``h100-80gb-sxm-ib.8x``), or remove ``slurm.crusoe``.
    """
    cluster = loaded.cluster
    if cluster.slurm is None or cluster.slurm.crusoe is None:
        return
    if not _slurm_platform(loaded):
        yield at(loaded, ("slurm", "crusoe"), "slurm.crusoe is set but 'slurm' is not in platforms, so no tfvars are written",
                 "add slurm to platforms, or remove slurm.crusoe", prefer_value=False)
    elif not (_crusoe_pools(loaded, catalog) and "slurm" in cluster.platforms):
        yield at(loaded, ("slurm", "crusoe"),
                 "slurm.crusoe is set but no pool uses a Crusoe instance type on platform slurm; nothing reads it",
                 "use a Crusoe SKU (e.g. h100-80gb-sxm-ib.8x) or remove slurm.crusoe", prefer_value=False)


@spec_rule(code="SPEC007", name="crusoe-settings-missing", since="0.2.0", formerly=("HPC004",))
def crusoe_settings_missing(loaded: LoadedSpec, catalog: Catalog) -> Iterator[Diagnostic]:
    """A pool uses a Crusoe instance type on platform slurm, but ``slurm.crusoe`` is missing.

    ## What it catches
    ``platforms: [slurm]`` with a Crusoe SKU and no ``slurm.crusoe`` block.
    Reported as HPC004 (missing-field) before 0.2.0.

    ## Why is this bad?
    On Crusoe the Slurm cluster is created by Crusoe's Terraform module, which needs the project,
    location, VPC subnet and IB network; hpcconf cannot invent them, and Terraform stops at
    ``plan`` with "No value for required variable".

    ## Example
    ```yaml
    platforms: [slurm]
    pools:
      - {name: gpu, sku: h100-80gb-sxm-ib.8x, count: 2}
    ```

    ## Fix
    Add ``slurm: {crusoe: {project_id, location, vpc_subnet_id, ib_network_id, ...}}``.
    """
    crusoe_pools = _crusoe_pools(loaded, catalog)
    settings = loaded.cluster.slurm.crusoe if loaded.cluster.slurm else None
    if crusoe_pools and "slurm" in loaded.cluster.platforms and settings is None:
        i, pool = crusoe_pools[0]
        yield at(loaded, ("pools", i, "sku"),
                 f"pool '{pool.name}' uses Crusoe instance type {pool.sku}; platform slurm on Crusoe needs slurm.crusoe",
                 "add slurm: {crusoe: {project_id, location, vpc_subnet_id, ib_network_id, ...}} (Terraform variables)")


@spec_rule(code="SPEC008", name="crusoe-second-pool", since="0.2.0", formerly=("HPC005",))
def crusoe_second_pool(loaded: LoadedSpec, catalog: Catalog) -> Iterator[Diagnostic]:
    """Two Crusoe pools with a pre-v3 Crusoe Slurm module, which makes one compute node type.

    ## What it catches
    A second pool with a Crusoe SKU when ``slurm`` or ``azhop`` is in ``platforms`` and
    ``slurm.crusoe.module_version`` is ``9f57d5e`` or ``b115d0c``. The default ``v3.0.0`` takes
    a ``partitions`` list, one Slurm partition per pool, so any number of pools is fine there.
    Reported as HPC005 (invalid-value) before 0.2.0.

    ## Why is this bad?
    Before v3.0.0 Crusoe's Slurm Terraform module (github.com/crusoecloud/slurm, variables.tf at
    9f57d5e and b115d0c) takes one ``slurm_compute_node_type`` and one count; a second pool would
    be silently dropped from the tfvars hpcconf writes.

    ## Example
    ```yaml
    pools:
      - {name: h100, sku: h100-80gb-sxm-ib.8x, count: 2}
      - {name: l40s, sku: l40s-48gb.8x, count: 1}
    ```

    ## Fix
    Use the module's v3.0.0 (``module_version: v3.0.0``, the default), or keep one Crusoe GPU
    pool per cluster and make a second cluster spec for the other type.
    """
    settings = _crusoe_settings(loaded)
    version = settings.module_version if settings is not None else "v3.0.0"
    crusoe_pools = _crusoe_pools(loaded, catalog)
    if _slurm_platform(loaded) and version in CRUSOE_ONE_NODE_TYPE and len(crusoe_pools) > 1:
        i, pool = crusoe_pools[1]
        yield at(loaded, ("pools", i),
                 f"Crusoe's Slurm module at {version} makes one compute node type; pool '{pool.name}' is a "
                 "second Crusoe pool",
                 "use module_version: v3.0.0 (one Slurm partition per pool), or keep one Crusoe GPU pool per "
                 "cluster", prefer_value=False)


@spec_rule(code="SPEC009", name="crusoe-ib-network-missing", since="0.2.0", formerly=("HPC004",))
def crusoe_ib_network_missing(loaded: LoadedSpec, catalog: Catalog) -> Iterator[Diagnostic]:
    """A Crusoe InfiniBand pool has no ``slurm.crusoe.ib_network_id`` (module ``b115d0c``).

    ## What it catches
    ``slurm.crusoe`` with ``module_version: b115d0c`` and without ``ib_network_id`` while the
    Crusoe pool's instance type has InfiniBand and ``network.infiniband.enabled`` is true. Later
    module versions take an IB partition instead (SPEC016). Reported as HPC004 (missing-field) before 0.2.0.

    ## Why is this bad?
    The module at b115d0c creates the compute nodes' IB partition in the IB network given as
    ``slurm_compute_node_ib_network_id`` (github.com/crusoecloud/slurm variables.tf at b115d0c,
    default null); without it the nodes have no IB partition and NCCL falls back to TCP sockets
    at a fraction of the bandwidth, with no error.

    ## Example
    ```yaml
    slurm:
      crusoe: {module_version: b115d0c, project_id: 5a1e..., location: us-east1-a, vpc_subnet_id: 9b2f...}
    ```

    ## Fix
    Add ``ib_network_id`` (from ``crusoe networking ib-networks list``), or set
    ``network.infiniband.enabled: false`` if you mean to run without InfiniBand.
    """
    settings = _crusoe_settings(loaded)
    if settings is None or settings.module_version not in CRUSOE_IB_NETWORK_VERSIONS or settings.ib_network_id:
        return
    crusoe_pools = _crusoe_pools(loaded, catalog)
    if not crusoe_pools:
        return
    _, pool = crusoe_pools[0]  # this module version makes one compute node type (SPEC008)
    if catalog.get(pool.sku).infiniband is not None and loaded.cluster.network.infiniband.enabled:
        yield at(loaded, ("slurm", "crusoe"),
                 f"{pool.sku} has InfiniBand but slurm.crusoe.ib_network_id is not set: the nodes get no IB "
                 "partition and NCCL falls back to TCP sockets",
                 "set ib_network_id (`crusoe networking ib-networks list`), or network.infiniband.enabled: false",
                 prefer_value=False)


@spec_rule(code="SPEC016", name="crusoe-ib-partition-missing", since="0.2.0")
def crusoe_ib_partition_missing(loaded: LoadedSpec, catalog: Catalog) -> Iterator[Diagnostic]:
    """A Crusoe InfiniBand pool has no ``slurm.crusoe.ib_partition_ids`` entry (module v3.0.0, 9f57d5e).

    ## What it catches
    A pool whose Crusoe instance type has InfiniBand, with ``network.infiniband.enabled`` true,
    when ``slurm.crusoe.module_version`` is ``v3.0.0`` (the default) or ``9f57d5e`` and
    ``slurm.crusoe.ib_partition_ids`` has no entry for that pool. (Module ``b115d0c`` takes an IB
    network instead: SPEC009.)

    ## Why is this bad?
    These module versions attach an instance to InfiniBand only through the IB partition id they
    are given: v3.0.0 per ``partitions`` entry (``ib_partition_id``, null gives the instance no
    ``host_channel_adapters``), 9f57d5e as ``slurm_compute_node_ib_partition_id`` (default null;
    github.com/crusoecloud/slurm main.tf and variables.tf at those refs). Without it the nodes come
    up with no IB partition and NCCL runs over TCP sockets at a fraction of the bandwidth, with no error.

    ## Example
    ```yaml
    pools:
      - {name: h100, sku: h100-80gb-sxm-ib.8x, count: 2}
    slurm:
      crusoe: {project_id: 5a1e..., location: us-east1-a, vpc_subnet_id: 9b2f...}
    ```

    ## Fix
    Create an IB partition in your IB network and name it per pool:
    ``ib_partition_ids: {h100: <id from crusoe networking ib-partitions list>}``, or set
    ``network.infiniband.enabled: false`` if you mean to run without InfiniBand.
    """
    settings = _crusoe_settings(loaded)
    if settings is None or settings.module_version not in CRUSOE_IB_PARTITION_VERSIONS:
        return
    pools = _crusoe_ib_pools(loaded, catalog)
    if settings.module_version in CRUSOE_ONE_NODE_TYPE:
        crusoe = _crusoe_pools(loaded, catalog)
        pools = [p for p in pools if p == crusoe[0]]  # the one node type the tfvars describe (others: SPEC008)
    for _, pool in pools:
        if settings.ib_partition_ids.get(pool.name):
            continue
        where = ("slurm", "crusoe", "ib_partition_ids") if settings.ib_partition_ids else ("slurm", "crusoe")
        yield at(loaded, where,
                 f"pool '{pool.name}' ({pool.sku}) has InfiniBand but slurm.crusoe.ib_partition_ids has no "
                 f"'{pool.name}' entry: module {settings.module_version} creates its nodes without an IB partition "
                 "and NCCL falls back to TCP sockets",
                 f"add ib_partition_ids: {{{pool.name}: <id>}} (`crusoe networking ib-partitions list`), "
                 "or network.infiniband.enabled: false", prefer_value=False)


@spec_rule(code="SPEC010", name="sku-nccl-algo-unknown", since="0.2.0", formerly=("HPC005",))
def sku_nccl_algo_unknown(loaded: LoadedSpec, catalog: Catalog) -> Iterator[Diagnostic]:
    """A pool's SKU recommends an ``NCCL_ALGO`` the spec's NCCL version does not have.

    ## What it catches
    On platforms slurm/azhop, without ``NCCL_ALGO`` in ``nccl_env`` (the cluster's or the pool's): a SKU whose catalog entry sets
    an algorithm (Crusoe H100: ``NVLSTree``) that ``versions.nccl`` does not know.
    Reported as HPC005 (invalid-value) before 0.2.0.

    ## Why is this bad?
    The Slurm job exports the SKU's ``NCCL_ALGO``. NCCL ignores an unknown algorithm before 2.24
    and rejects it from 2.24 on (``src/enqueue.cc`` parses the list and fails on an unknown name),
    so the job either runs untuned or does not run.

    ## Example
    ```yaml
    versions: {nccl: 2.17.1}     # NVLSTree arrived in 2.18
    pools:
      - {name: gpu, sku: h100-80gb-sxm-ib.8x, count: 2}
    ```

    ## Fix
    Use an NCCL that has the algorithm, or set ``nccl_env: {NCCL_ALGO: Ring}``.
    """
    cluster = loaded.cluster
    if not _slurm_platform(loaded):
        return
    for pool in cluster.pools:
        if "NCCL_ALGO" in {**cluster.nccl_env, **pool.nccl_env}:
            continue  # the user's own value: the NCCL lint rules check it
        try:
            algo = catalog.get(pool.sku).nccl.algo
        except UnknownSku:
            continue
        problems = [p for p in check_nccl_algo(algo, cluster.versions.nccl) if p.severity is Severity.ERROR] if algo else []
        if problems:
            yield at(loaded, ("versions", "nccl"),
                     f"pool '{pool.name}' ({pool.sku}) runs NCCL_ALGO={algo}, which NCCL {cluster.versions.nccl} "
                     f"does not have: {problems[0].message}",
                     f"{problems[0].hint}; or set nccl_env: {{NCCL_ALGO: Ring}}")


@spec_rule(code="SPEC011", name="slurm-partition-name", since="0.2.0", formerly=("HPC005",))
def slurm_partition_name(loaded: LoadedSpec, catalog: Catalog) -> Iterator[Diagnostic]:
    """A ``slurm.partitions`` name is not a plain Slurm partition name.

    ## What it catches
    Partition names with characters other than letters, digits, ``-`` and ``_``, or longer than 64.
    Reported as HPC005 (invalid-value) before 0.2.0.

    ## Why is this bad?
    The name goes into ``slurm.conf`` (``PartitionName=``) and every ``sbatch -p``; spaces, commas
    or ``=`` split the line, and ``slurmctld`` refuses to start on the malformed entry.

    ## Example
    ```yaml
    slurm:
      partitions: {gpu: "gpu nodes"}
    ```

    ## Fix
    ```yaml
    slurm:
      partitions: {gpu: gpu-nodes}
    ```
    """
    slurm = loaded.cluster.slurm
    if slurm is None or not _slurm_platform(loaded):
        return
    pools = {p.name for p in loaded.cluster.pools}
    for key, value in slurm.partitions.items():
        if key in pools and not PARTITION_PATTERN.fullmatch(value):
            yield at(loaded, ("slurm", "partitions", key), f"partition name '{value}' is not a plain Slurm partition name",
                     "letters, digits, '-' and '_', at most 64 characters")


@spec_rule(code="SPEC012", name="slurm-test-nodes-range", since="0.2.0", formerly=("HPC005",))
def slurm_test_nodes_range(loaded: LoadedSpec, catalog: Catalog) -> Iterator[Diagnostic]:
    """``slurm.test_nodes`` asks for more nodes than the pool has (or fewer than one).

    ## What it catches
    A ``slurm.test_nodes`` entry outside 1 to the pool's ``count``. Reported as HPC005 (invalid-value) before 0.2.0.

    ## Why is this bad?
    ``sbatch --nodes=N`` with N above the partition's node count is accepted but never scheduled:
    the job stays pending with reason ``PartitionNodeLimit`` / ``Resources`` forever.

    ## Example
    ```yaml
    pools:
      - {name: gpu, sku: Standard_ND96asr_v4, count: 2}
    slurm:
      test_nodes: {gpu: 4}
    ```

    ## Fix
    Use 1 to the pool's ``count`` (here 2).
    """
    slurm = loaded.cluster.slurm
    if slurm is None or not _slurm_platform(loaded):
        return
    pools = {p.name: p for p in loaded.cluster.pools}
    for key, value in slurm.test_nodes.items():
        if key in pools and not 1 <= value <= pools[key].count:
            yield at(loaded, ("slurm", "test_nodes", key),
                     f"test_nodes {value} for pool '{key}', which has {pools[key].count} node(s); the job would wait forever",
                     f"use 1 to {pools[key].count}")


@spec_rule(code="SPEC013", name="crusoe-duplicate-user", since="0.2.0", formerly=("HPC005",))
def crusoe_duplicate_user(loaded: LoadedSpec, catalog: Catalog) -> Iterator[Diagnostic]:
    """Two ``slurm.crusoe.users`` entries share a name or a uid.

    ## What it catches
    A user name listed twice, or a ``uid`` given to two users. Reported as HPC005 (invalid-value) before 0.2.0.

    ## Why is this bad?
    The users are created on every node with these uids; two names with one uid are one account to
    the shared file system (each can read and delete the other's files), and a name listed twice
    makes ``useradd`` fail on the second entry during provisioning.

    ## Example
    ```yaml
    slurm:
      crusoe:
        users:
          - {name: alice, uid: 2001, ssh_key: ssh-ed25519 AAAA...}
          - {name: bob, uid: 2001, ssh_key: ssh-ed25519 AAAA...}
    ```

    ## Fix
    Give every user one entry and a uid of their own.
    """
    slurm = loaded.cluster.slurm
    if slurm is None or slurm.crusoe is None or not _slurm_platform(loaded):
        return
    seen_names: dict[str, int] = {}
    seen_uids: dict[int, int] = {}
    for i, user in enumerate(slurm.crusoe.users):
        if user.name in seen_names:
            yield at(loaded, ("slurm", "crusoe", "users", i, "name"),
                     f"user '{user.name}' is already users[{seen_names[user.name]}]", "give each user one entry")
        if user.uid in seen_uids:
            yield at(loaded, ("slurm", "crusoe", "users", i, "uid"),
                     f"uid {user.uid} is already used by users[{seen_uids[user.uid]}]",
                     "uids must be unique: two names with one uid are one account to the file system")
        seen_names.setdefault(user.name, i)
        seen_uids.setdefault(user.uid, i)


@spec_rule(code="SPEC014", name="ucc-needs-openmpi", since="0.2.0", formerly=("HPC005",))
def ucc_needs_openmpi(loaded: LoadedSpec, catalog: Catalog) -> Iterator[Diagnostic]:
    """``slurm.collectives: ucc-nccl`` with an Open MPI that has no coll/ucc component.

    ## What it catches
    ``versions.openmpi`` older than 4.1.4 (and not 5.x) with ``collectives: ucc-nccl``.
    Reported as HPC005 (invalid-value) before 0.2.0.

    ## Why is this bad?
    Open MPI's coll/ucc arrived in v5.0 (open-mpi/ompi#8969) and was backported to 4.1.4
    (open-mpi/ompi#10171). On an older Open MPI the ``OMPI_MCA_coll_ucc_*`` variables the job sets
    are ignored and collectives run over the default components, not UCC/NCCL.

    ## Example
    ```yaml
    versions: {openmpi: 4.1.2}
    slurm: {collectives: ucc-nccl}
    ```

    ## Fix
    Use Open MPI 4.1.4 or later, or ``collectives: ucx``.
    """
    cluster = loaded.cluster
    if not _slurm_platform(loaded):
        return
    openmpi = Version.parse_or_none(cluster.versions.openmpi)
    wants_ucc = cluster.slurm is not None and cluster.slurm.collectives == "ucc-nccl"
    if wants_ucc and openmpi is not None and not has_coll_ucc(openmpi):
        yield at(loaded, ("versions", "openmpi"),
                 f"collectives 'ucc-nccl' needs Open MPI's coll/ucc, which Open MPI {cluster.versions.openmpi} lacks "
                 "(OMPI_MCA_coll_ucc_* would be ignored)", "use Open MPI 4.1.4 or later, or collectives: ucx")


@spec_rule(code="SPEC015", name="mpi-env-invalid", since="0.2.0", formerly=("HPC005",))
def mpi_env_invalid(loaded: LoadedSpec, catalog: Catalog) -> Iterator[Diagnostic]:
    """An ``mpi_env`` UCC tune string or ``UCX_TLS`` value the library rejects.

    ## What it catches
    ``UCC_CL_*_TUNE`` / ``UCC_TL_*_TUNE`` strings that do not parse as UCC's tune grammar, and a
    ``UCX_TLS`` that leaves no usable transport for the spec's UCX version.
    Reported as HPC005 (invalid-value) before 0.2.0.

    ## Why is this bad?
    UCC parses the tune string when the team is created and fails the collective init on a syntax
    error (``ucc_tl_*`` "failed to parse tune string"); UCX with no transport fails ``ucp_init`` and
    every rank aborts before the first message.

    ## Example
    ```yaml
    mpi_env:
      UCX_TLS: rdma                          # not a UCX transport: nothing is left
      UCC_TL_NCCL_TUNE: "allreduce:0-inf:fast"
    ```

    ## Fix
    ```yaml
    mpi_env:
      UCX_TLS: rc,sm,self
      UCC_TL_NCCL_TUNE: "allreduce:0-inf:inf"
    ```
    """
    if not _slurm_platform(loaded):
        return
    cluster = loaded.cluster
    for key, value in cluster.mpi_env.items():
        if re.fullmatch(r"UCC_(CL|TL)_[A-Z0-9]+_TUNE", key):
            problems = check_ucc_tune(value)
        elif key == "UCX_TLS":
            problems = check_ucx_tls(value, cluster.versions.ucx)
        else:
            continue
        for problem in problems:
            if problem.fatal or problem.severity is Severity.ERROR:
                yield at(loaded, ("mpi_env", key), f"mpi_env {key}: {problem.message}", problem.hint)
