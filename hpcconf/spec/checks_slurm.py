"""Cross-field checks of the `slurm:` section and the MPI settings the Slurm jobs use.

Each problem is an error at the offending key: a setting that would be silently ignored
(a Crusoe block without Crusoe pools), a job that cannot start (more test nodes than the pool
has, coll/ucc on an Open MPI without it) or a value the consumer rejects (a UCC tune string
that does not parse, a UCX_TLS that leaves no transport).
"""

from __future__ import annotations

import re
from typing import Iterator

from ..catalog import Catalog, UnknownSku
from ..diagnostics import Diagnostic, Severity
from ..knowledge.grammars import check_nccl_algo, check_ucc_tune, check_ucx_tls
from ..knowledge.openmpi import has_coll_ucc
from ..knowledge.versions import Version
from .load import LoadedSpec

PARTITION_PATTERN = re.compile(r"^[A-Za-z0-9][A-Za-z0-9_-]{0,63}$")


def _error(loaded: LoadedSpec, path: tuple, code: str, name: str, message: str, hint: str,
           prefer_value: bool = True) -> Diagnostic:
    return loaded.document.diagnostic(Diagnostic(code=code, name=name, message=message, hint=hint),
                                      path, prefer_value=prefer_value)


def _sku_provider(catalog: Catalog, name: str) -> str | None:
    try:
        return catalog.get(name).provider
    except UnknownSku:
        return None  # reported by check_spec's own SKU check


def check_slurm(loaded: LoadedSpec, catalog: Catalog) -> Iterator[Diagnostic]:
    cluster = loaded.cluster
    if not {"slurm", "azhop"} & set(cluster.platforms):
        if cluster.slurm is not None and cluster.slurm.crusoe is not None:
            yield _error(loaded, ("slurm", "crusoe"), "HPC005", "invalid-value",
                         "slurm.crusoe is set but 'slurm' is not in platforms, so no tfvars are written",
                         "add slurm to platforms, or remove slurm.crusoe", prefer_value=False)
        return
    yield from _crusoe(loaded, catalog)
    yield from _nccl_algo(loaded, catalog)
    yield from _pool_maps(loaded)
    yield from _users(loaded)
    yield from _mpi(loaded)


def _crusoe(loaded: LoadedSpec, catalog: Catalog) -> Iterator[Diagnostic]:
    cluster = loaded.cluster
    crusoe_pools = [(i, p) for i, p in enumerate(cluster.pools) if _sku_provider(catalog, p.sku) == "crusoe"]
    settings = cluster.slurm.crusoe if cluster.slurm else None
    on_slurm = "slurm" in cluster.platforms
    if crusoe_pools and on_slurm and settings is None:
        i, pool = crusoe_pools[0]
        yield _error(loaded, ("pools", i, "sku"), "HPC004", "missing-field",
                     f"pool '{pool.name}' uses Crusoe instance type {pool.sku}; platform slurm on Crusoe needs slurm.crusoe",
                     "add slurm: {crusoe: {project_id, location, vpc_subnet_id, ib_network_id, ...}} (Terraform variables)")
    if settings is not None and not (crusoe_pools and on_slurm):
        yield _error(loaded, ("slurm", "crusoe"), "HPC005", "invalid-value",
                     "slurm.crusoe is set but no pool uses a Crusoe instance type on platform slurm; nothing reads it",
                     "use a Crusoe SKU (e.g. h100-80gb-sxm-ib.8x) or remove slurm.crusoe", prefer_value=False)
    if len(crusoe_pools) > 1:
        i, pool = crusoe_pools[1]
        yield _error(loaded, ("pools", i), "HPC005", "invalid-value",
                     f"Crusoe's Slurm module makes one compute node type; pool '{pool.name}' is a second Crusoe pool",
                     "keep one Crusoe GPU pool per cluster", prefer_value=False)
    if settings is not None and crusoe_pools and settings.ib_network_id is None:
        i, pool = crusoe_pools[0]
        sku = catalog.get(pool.sku)
        if sku.infiniband is not None and cluster.network.infiniband.enabled:
            yield _error(loaded, ("slurm", "crusoe"), "HPC004", "missing-field",
                         f"{pool.sku} has InfiniBand but slurm.crusoe.ib_network_id is not set: the nodes get no IB "
                         "partition and NCCL falls back to TCP sockets",
                         "set ib_network_id (`crusoe networking ib-networks list`), or network.infiniband.enabled: false",
                         prefer_value=False)


def _nccl_algo(loaded: LoadedSpec, catalog: Catalog) -> Iterator[Diagnostic]:
    """The SKU's recommended NCCL_ALGO (Crusoe: NVLSTree, seed 002) must exist in the spec's NCCL:
    the job exports it, and NCCL ignores (before 2.24) or rejects (2.24+) an unknown algorithm."""
    cluster = loaded.cluster
    if "NCCL_ALGO" in cluster.nccl_env:
        return  # the user's own value; the NCCL lint rules check it
    for _i, pool in enumerate(cluster.pools):
        try:
            algo = catalog.get(pool.sku).nccl.algo
        except UnknownSku:
            continue
        problems = [p for p in check_nccl_algo(algo, cluster.versions.nccl) if p.severity is Severity.ERROR] if algo else []
        if problems:
            yield _error(loaded, ("versions", "nccl"), "HPC005", "invalid-value",
                         f"pool '{pool.name}' ({pool.sku}) runs NCCL_ALGO={algo}, which NCCL {cluster.versions.nccl} "
                         f"does not have: {problems[0].message}",
                         f"{problems[0].hint}; or set nccl_env: {{NCCL_ALGO: Ring}}")


def _pool_maps(loaded: LoadedSpec) -> Iterator[Diagnostic]:
    cluster = loaded.cluster
    if cluster.slurm is None:
        return
    pools = {p.name: p for p in cluster.pools}
    names = ", ".join(pools)
    for field in ("partitions", "test_nodes"):
        for key, value in getattr(cluster.slurm, field).items():
            if key not in pools:
                yield _error(loaded, ("slurm", field, key), "HPC009", "unknown-pool",
                             f"slurm.{field}: '{key}' is not a pool of this spec", f"use one of: {names}", prefer_value=False)
            elif field == "partitions" and not PARTITION_PATTERN.match(value):
                yield _error(loaded, ("slurm", field, key), "HPC005", "invalid-value",
                             f"partition name '{value}' is not a plain Slurm partition name",
                             "letters, digits, '-' and '_', at most 64 characters")
            elif field == "test_nodes" and not 1 <= value <= pools[key].count:
                yield _error(loaded, ("slurm", field, key), "HPC005", "invalid-value",
                             f"test_nodes {value} for pool '{key}', which has {pools[key].count} node(s); the job would wait forever",
                             f"use 1 to {pools[key].count}")


def _users(loaded: LoadedSpec) -> Iterator[Diagnostic]:
    slurm = loaded.cluster.slurm
    if slurm is None or slurm.crusoe is None:
        return
    seen_names: dict[str, int] = {}
    seen_uids: dict[int, int] = {}
    for i, user in enumerate(slurm.crusoe.users):
        if user.name in seen_names:
            yield _error(loaded, ("slurm", "crusoe", "users", i, "name"), "HPC005", "invalid-value",
                         f"user '{user.name}' is already users[{seen_names[user.name]}]", "give each user one entry")
        if user.uid in seen_uids:
            yield _error(loaded, ("slurm", "crusoe", "users", i, "uid"), "HPC005", "invalid-value",
                         f"uid {user.uid} is already used by users[{seen_uids[user.uid]}]",
                         "uids must be unique: two names with one uid are one account to the file system")
        seen_names.setdefault(user.name, i)
        seen_uids.setdefault(user.uid, i)


def _mpi(loaded: LoadedSpec) -> Iterator[Diagnostic]:
    cluster = loaded.cluster
    openmpi = Version.parse_or_none(cluster.versions.openmpi)
    wants_ucc = cluster.slurm is not None and cluster.slurm.collectives == "ucc-nccl"
    if wants_ucc and openmpi is not None and not has_coll_ucc(openmpi):
        yield _error(loaded, ("versions", "openmpi"), "HPC005", "invalid-value",
                     f"collectives 'ucc-nccl' needs Open MPI's coll/ucc, which Open MPI {cluster.versions.openmpi} lacks "
                     "(OMPI_MCA_coll_ucc_* would be ignored)", "use Open MPI 4.1.4 or later, or collectives: ucx")
    for key, value in cluster.mpi_env.items():
        if re.fullmatch(r"UCC_(CL|TL)_[A-Z0-9]+_TUNE", key):
            problems = check_ucc_tune(value)
        elif key == "UCX_TLS":
            problems = check_ucx_tls(value, cluster.versions.ucx)
        else:
            continue
        for problem in problems:
            if problem.fatal or problem.severity is Severity.ERROR:
                yield _error(loaded, ("mpi_env", key), "HPC005", "invalid-value",
                             f"mpi_env {key}: {problem.message}", problem.hint)
