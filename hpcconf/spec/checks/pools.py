"""Pools and the references to them: unique names, known SKUs, sections a platform needs."""

from __future__ import annotations

from typing import TYPE_CHECKING, Iterator

from ...catalog_errors import UnknownSku
from ...diagnostics import Diagnostic
from ...rules_registry import spec_rule
from . import at

if TYPE_CHECKING:  # the pydantic models: registering these rules must not import them
    from ...catalog import Catalog
    from ..load import LoadedSpec


@spec_rule(code="HPC006", name="unknown-sku")
def unknown_sku(loaded: LoadedSpec, catalog: Catalog) -> Iterator[Diagnostic]:
    """A pool names a VM size the SKU catalog does not have; the message suggests close names.

    ## What it catches
    Misspelt sizes (``Standard_ND96asr_v5``) and sizes hpcconf has no facts for.

    ## Why is this bad?
    Every derived value (GPUs per node, NCCL topology, IB NICs, pin masks) comes from the
    catalog; without an entry hpcconf would have to invent hardware facts.

    ## Example
    ```yaml
    pools:
      - {name: gpu, sku: Standard_ND96asr_v5, count: 2}
    ```

    ## Fix
    Use a name from ``hpcconf skus`` (short names and any case work: ``nd96asr_v4``), or add
    your own SKU file with ``sku_dirs`` / ``--sku-dir``.
    """
    for i, pool in enumerate(loaded.cluster.pools):
        try:
            catalog.get(pool.sku)
        except UnknownSku as exc:
            close = ", ".join(exc.suggestions)
            hint = f"did you mean {close}?" if close else "run `hpcconf skus` to list known SKUs"
            yield at(loaded, ("pools", i, "sku"), f"unknown SKU '{pool.sku}' in pool '{pool.name}'",
                     hint + " (add your own with sku_dirs or --sku-dir)")


@spec_rule(code="HPC008", name="duplicate-pool")
def duplicate_pool(loaded: LoadedSpec, catalog: Catalog) -> Iterator[Diagnostic]:
    """Two pools have the same name.

    ## What it catches
    A pool ``name`` used twice in ``pools``.

    ## Why is this bad?
    The name becomes the AKS node pool, the Slurm partition and the AzHOP queue, and the
    directory of the pool's NCCL files; two pools would overwrite each other's artifacts and
    ``az aks nodepool add`` fails on the second.

    ## Example
    ```yaml
    pools:
      - {name: gpu, sku: Standard_ND96asr_v4, count: 2}
      - {name: gpu, sku: Standard_NC48ads_A100_v4, count: 1}
    ```

    ## Fix
    Give each pool its own name.
    """
    seen: dict[str, int] = {}
    for i, pool in enumerate(loaded.cluster.pools):
        if pool.name in seen:
            yield at(loaded, ("pools", i, "name"), f"pool name '{pool.name}' is already used by pools[{seen[pool.name]}]",
                     "Pool names become AKS node pools, Slurm partitions and AzHOP queues: give each pool its own name.")
        seen.setdefault(pool.name, i)


@spec_rule(code="HPC009", name="unknown-pool")
def unknown_pool(loaded: LoadedSpec, catalog: Catalog) -> Iterator[Diagnostic]:
    """A setting refers to a pool the spec does not have.

    ## What it catches
    ``nccl_test.pool``, ``slurm.partitions`` or ``slurm.test_nodes`` naming a pool that is not in
    ``pools``.

    ## Why is this bad?
    The NCCL test would run on a different pool than intended, or not at all.

    ## Example
    ```yaml
    nccl_test:
      pool: gpus        # the pool is called gpu
    ```

    ## Fix
    Use one of the pool names the hint lists.
    """
    cluster = loaded.cluster
    names = [p.name for p in cluster.pools]
    listed = ", ".join(names)
    if cluster.nccl_test.pool and cluster.nccl_test.pool not in names:
        yield at(loaded, ("nccl_test", "pool"), f"nccl_test.pool '{cluster.nccl_test.pool}' is not a pool of this spec",
                 f"use one of: {listed}")
    if cluster.slurm is None or not {"slurm", "azhop"} & set(cluster.platforms):
        return  # the slurm section is read by these platforms only (SPEC006 reports a stray one)
    for field in ("partitions", "test_nodes"):
        for key in getattr(cluster.slurm, field):
            if key not in names:
                yield at(loaded, ("slurm", field, key), f"slurm.{field}: '{key}' is not a pool of this spec",
                         f"use one of: {listed}", prefer_value=False)


@spec_rule(code="SPEC001", name="aks-test-image-missing", since="0.2.0", formerly=("HPC004",))
def aks_test_image_missing(loaded: LoadedSpec, catalog: Catalog) -> Iterator[Diagnostic]:
    """Platform ``aks`` is asked for but the spec has no ``test_image`` for the NCCL job.

    ## What it catches
    ``platforms: [aks]`` (with or without other platforms) and no ``test_image:`` section.
    Reported as HPC004 (missing-field) before 0.2.0.

    ## Why is this bad?
    The Volcano NCCL job hpcconf writes for AKS runs ``test_image``; without it the job would pull
    an image nobody built, and the pods stay in ``ImagePullBackOff``.

    ## Example
    ```yaml
    platforms: [aks]
    pools:
      - {name: gpu, sku: Standard_ND96asr_v4, count: 2}
    ```

    ## Fix
    ```yaml
    test_image:
      registry: myacr.azurecr.io
      tag: "2024.05"
    ```
    """
    if "aks" in loaded.cluster.platforms and loaded.cluster.test_image is None:
        yield at(loaded, ("platforms",), "platform 'aks' needs a test_image (the NCCL job runs it)",
                 "add test_image: {registry: <acr>.azurecr.io, tag: <tag>}", prefer_value=False)
