"""AKS cross-field checks: what the AKS artifacts need beyond each field's own validation."""

from __future__ import annotations

import ipaddress
from typing import Iterable, Iterator

from ..catalog import Catalog, UnknownSku
from ..diagnostics import Diagnostic, Severity
from ..knowledge import charts
from ..knowledge.volcano import WORKER_TASK
from .load import LoadedSpec

MAX_POD_NAME = 63  # pod names are DNS labels; Volcano names pods <job>-<task>-<index>


def check_aks(loaded: LoadedSpec, catalog: Catalog) -> Iterable[Diagnostic]:
    cluster = loaded.cluster
    if "aks" not in cluster.platforms:
        return []
    return [*_ofed_tag(loaded, catalog), *_pod_names(loaded, catalog), *_ipam_range(loaded, catalog)]


def _test_pool(loaded: LoadedSpec, catalog: Catalog):
    cluster = loaded.cluster
    for pool in cluster.pools:
        if cluster.nccl_test.pool in (None, pool.name):
            try:
                sku = catalog.get(pool.sku)
            except UnknownSku:
                return None, None
            if cluster.nccl_test.pool or sku.gpu.count > 0:
                return pool, sku
    return None, None


def _uses_ib(loaded: LoadedSpec, catalog: Catalog) -> bool:
    pool, sku = _test_pool(loaded, catalog)
    return bool(sku and sku.infiniband and loaded.cluster.network.infiniband.enabled)


def _ofed_tag(loaded: LoadedSpec, catalog: Catalog) -> Iterator[Diagnostic]:
    cluster = loaded.cluster
    version = cluster.versions.network_operator
    if charts.network_operator_renders_ncp(version) or not _uses_ib(loaded, catalog):
        return
    if charts.network_operator_operand_tag(version) is None:
        yield loaded.document.diagnostic(Diagnostic(
            code="HPC005", name="invalid-value",
            message=f"network-operator {version} needs a NicClusterPolicy manifest, and hpcconf knows its operand images "
                    f"only from {charts.NCP_OPERAND_TAGS_SINCE} on (network-operator-v<release> tags)",
            hint=f"pin network_operator to 24.7.0 (chart-rendered policy) or to {charts.NCP_OPERAND_TAGS_SINCE} or newer"),
            ("versions", "network_operator"), prefer_value=True)
        return
    if cluster.versions.doca_ofed or charts.doca_driver_default(version):
        return
    known = ", ".join(f"{r}: {t}" for r, t in charts.DOCA_DRIVER_BY_RELEASE.items())
    yield loaded.document.diagnostic(Diagnostic(
        code="HPC004", name="missing-field", severity=Severity.ERROR,
        message=f"network-operator {version} needs the doca-driver version in the NicClusterPolicy; the spec sets none "
                "and hpcconf does not know NVIDIA's pairing for this release",
        hint=f"set versions.doca_ofed to the doca-driver tag (NVIDIA's pairings: {known})"), ("versions", "network_operator"), prefer_value=True)


def _pod_names(loaded: LoadedSpec, catalog: Catalog) -> Iterator[Diagnostic]:
    cluster = loaded.cluster
    job = (cluster.aks.job_name if cluster.aks else None) or f"nccl-{cluster.nccl_test.collective.replace('_', '')}-job1"
    pool, _ = _test_pool(loaded, catalog)
    count = pool.count if pool is not None else 1
    pod = f"{job}-{WORKER_TASK}-{count - 1}"
    if len(pod) > MAX_POD_NAME:
        path = ("aks", "job_name") if cluster.aks and cluster.aks.job_name else ("nccl_test", "collective")
        yield loaded.document.diagnostic(Diagnostic(
            code="HPC005", name="invalid-value",
            message=f"worker pod name '{pod}' is {len(pod)} characters; Volcano rejects pod names over {MAX_POD_NAME}",
            hint=f"shorten aks.job_name to at most {MAX_POD_NAME - len(pod) + len(job)} characters"), path, prefer_value=True)


def _ipam_range(loaded: LoadedSpec, catalog: Catalog) -> Iterator[Diagnostic]:
    pool, sku = _test_pool(loaded, catalog)
    if not _uses_ib(loaded, catalog):
        return
    ib = loaded.cluster.network.infiniband
    size = ipaddress.ip_network(ib.ipam_range).num_addresses
    needed = pool.count * sku.infiniband.count
    if size < needed:
        yield loaded.document.diagnostic(Diagnostic(
            code="HPC005", name="invalid-value",
            message=f"ipam_range {ib.ipam_range} has {size} addresses; {pool.count} nodes x {sku.infiniband.count} IB NICs need {needed}",
            hint="use a larger range, e.g. 192.168.0.0/16"), ("network", "infiniband", "ipam_range"), prefer_value=True)
