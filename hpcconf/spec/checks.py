"""Checks that need more than one field or the SKU catalog; each points at the offending key.

Pydantic checks each field on its own; here we check what relates fields (unique pool
names, references between sections, SKUs that exist) so the error lands on the exact line.
"""

from __future__ import annotations

from typing import Iterator

from ..catalog import Catalog, UnknownSku
from ..diagnostics import Diagnostic
from .checks_aks import check_aks
from .checks_azhop import check_azhop
from .checks_slurm import check_slurm
from .load import LoadedSpec


def check_spec(loaded: LoadedSpec, catalog: Catalog) -> list[Diagnostic]:
    return [*_pool_names(loaded), *_skus(loaded, catalog), *_test_references(loaded, catalog),
            *check_slurm(loaded, catalog), *check_aks(loaded, catalog), *check_azhop(loaded, catalog)]


def _pool_names(loaded: LoadedSpec) -> Iterator[Diagnostic]:
    seen: dict[str, int] = {}
    for i, pool in enumerate(loaded.cluster.pools):
        if pool.name in seen:
            yield loaded.document.diagnostic(Diagnostic(
                code="HPC008", name="duplicate-pool", message=f"pool name '{pool.name}' is already used by pools[{seen[pool.name]}]",
                hint="Pool names become AKS node pools, Slurm partitions and AzHOP queues: give each pool its own name."),
                ("pools", i, "name"), prefer_value=True)
        seen.setdefault(pool.name, i)


def _skus(loaded: LoadedSpec, catalog: Catalog) -> Iterator[Diagnostic]:
    for i, pool in enumerate(loaded.cluster.pools):
        try:
            catalog.get(pool.sku)
        except UnknownSku as exc:
            close = ", ".join(exc.suggestions)
            hint = f"did you mean {close}?" if close else "run `hpcconf skus` to list known SKUs"
            yield loaded.document.diagnostic(Diagnostic(
                code="HPC006", name="unknown-sku", message=f"unknown SKU '{pool.sku}' in pool '{pool.name}'",
                hint=hint + " (add your own with sku_dirs or --sku-dir)"), ("pools", i, "sku"), prefer_value=True)


def _test_references(loaded: LoadedSpec, catalog: Catalog) -> Iterator[Diagnostic]:
    cluster = loaded.cluster
    names = [p.name for p in cluster.pools]
    if cluster.nccl_test.pool and cluster.nccl_test.pool not in names:
        yield loaded.document.diagnostic(Diagnostic(
            code="HPC009", name="unknown-pool", message=f"nccl_test.pool '{cluster.nccl_test.pool}' is not a pool of this spec",
            hint=f"use one of: {', '.join(names)}"), ("nccl_test", "pool"), prefer_value=True)
    if "aks" in cluster.platforms and cluster.test_image is None:
        yield loaded.document.diagnostic(Diagnostic(
            code="HPC004", name="missing-field", message="platform 'aks' needs a test_image (the NCCL job runs it)",
            hint="add test_image: {registry: <acr>.azurecr.io, tag: <tag>}"), ("platforms",))
