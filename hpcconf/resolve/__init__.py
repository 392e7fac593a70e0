"""Resolve: spec + SKU catalog → one fully derived model that every target reads.

Every value that depends on more than one input (ranks = nodes × GPUs, NIC counts,
resource names, file paths inside the image, per-pool NCCL settings) is computed here
once, so two artifacts can never disagree about it. Targets never read the raw spec.
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from pathlib import Path
from typing import Optional

from ..catalog import Catalog, Sku
from ..knowledge.accelerators import GpuOperator as GpuOperator  # the profile's types are the model's: targets read them here
from ..knowledge.accelerators import profile
from ..safe_io import read_text
from ..spec.model import Cluster, NodePool
from . import aks, azhop, ccws, slurm
from .aks import ResolvedAks
from .azhop import ResolvedAzhop
from .ccws import ResolvedCcws
from .collective import pool_collective, resolve_test_image, resolved_test_image
from .compat import derived_versions
from .health import pool_health, resolve_health_checks
from .model import ResolvedCore
from .nccl import resolve_pool_nccl
from .network import resolved_infiniband
from .pool import PoolSkus as PoolSkus  # re-exported: the model's names are resolve's
from .pool import ResolvedPool as ResolvedPool
from .sku import resolve_sku
from .slurm import ResolvedSlurm
from .test_passes import resolved_nccl_test


@dataclass(frozen=True)
class ResolvedCluster(ResolvedCore):
    """The whole resolved model: the core and each platform's section (None where not targeted)."""

    aks: Optional["ResolvedAks"] = None
    azhop: Optional["ResolvedAzhop"] = None
    slurm: Optional["ResolvedSlurm"] = None
    ccws: Optional["ResolvedCcws"] = None


def resolve(spec: Cluster, catalog: Catalog, spec_file: str = "") -> ResolvedCluster:
    """Derive everything; assumes :func:`hpcconf.spec.checks.check_spec` passed."""
    skus = pool_skus(spec, catalog)
    pools = tuple(_resolve_pool(spec, pool, skus[pool.name], catalog.user_file(pool.sku)) for pool in spec.pools)
    test_pool = _test_pool(spec, pools)
    image = spec.test_image
    cluster = ResolvedCluster(
        spec_file=spec_file,
        name=spec.metadata.name,
        location=spec.metadata.location,
        resource_group=spec.metadata.resource_group or f"{spec.metadata.name}-rg",
        platforms=tuple(spec.platforms),
        pools=pools,
        test_pool=test_pool,
        versions=derived_versions(spec, pools, skus),  # NCCL from the base image, legacy GPU drivers
        ib_network=resolved_infiniband(spec.network.infiniband),
        ib_resource=f"nvidia.com/{spec.network.infiniband.resource_name}",
        test_image=resolved_test_image(image, test_pool.accelerator if test_pool is not None else None),
        test_image_ref=f"{image.registry}/{image.name}:{image.tag}" if image else None,
        nccl_test=resolved_nccl_test(spec.nccl_test),
        mpi_env=tuple(sorted(spec.mpi_env.items())),
        health_checks=resolve_health_checks(spec.health_checks),
    )
    if image is not None and test_pool is not None:
        build = resolve_test_image(test_pool.accelerator, test_pool.collective, spec.nccl_test.collective,
                                   cluster.versions, "aks" in spec.platforms, test_pool.sku.arch)
        cluster = replace(cluster, test_image_build=build)
    return _with_platforms(cluster, spec, skus)


def pool_skus(spec: Cluster, catalog: Catalog) -> PoolSkus:
    """Each pool's catalog entry, by pool name: resolve's input for the decisions a SKU's full facts make."""
    return {pool.name: catalog.get(pool.sku) for pool in spec.pools}


def pool_nccl_env(spec: Cluster, pool: NodePool) -> dict[str, str]:
    """The cluster-level nccl_env with the pool's own keys on top (pool-level wins)."""
    return {**spec.nccl_env, **pool.nccl_env}


def _resolve_pool(spec: Cluster, pool: NodePool, sku: Sku, user_file: Optional[Path] = None) -> ResolvedPool:
    infiniband = bool(sku.infiniband) and spec.network.infiniband.enabled
    return ResolvedPool(
        sku_file=(user_file.name, read_text(user_file, "sku", tree=user_file.parent)) if user_file else None,
        name=pool.name, sku=resolve_sku(sku), count=pool.count, image=pool.image, colocate=pool.placement.colocated(bool(sku.infiniband)),
        os_disk_gb=pool.os_disk_gb, infiniband=infiniband,
        nccl=resolve_pool_nccl(sku, infiniband=infiniband, overrides=pool_nccl_env(spec, pool), nccl_version=spec.versions.nccl),
        accelerator=profile(sku.gpu.vendor), health=pool_health(sku, spec.health_checks),
        collective=pool_collective(profile(sku.gpu.vendor)),
    )


def _test_pool(spec: Cluster, pools: tuple[ResolvedPool, ...]) -> Optional[ResolvedPool]:
    if spec.nccl_test.pool:
        return next(p for p in pools if p.name == spec.nccl_test.pool)
    return next((p for p in pools if p.has_gpus), None)


def _with_platforms(cluster: ResolvedCluster, spec: Cluster, skus: PoolSkus) -> ResolvedCluster:
    """Each platform's section, from the cluster resolved so far and the spec's settings for that platform."""
    if "aks" in cluster.platforms:
        cluster = replace(cluster, aks=aks.resolve_aks(cluster, spec.aks, skus))
    if "azhop" in cluster.platforms:
        cluster = replace(cluster, azhop=azhop.resolve_azhop(cluster, spec.azhop, skus))
    # AzHOP queues are Slurm partitions too, and so is CCWS's gpu partition (its NCCL test job is the Slurm one)
    if {"slurm", "azhop", "ccws"} & set(cluster.platforms):
        cluster = replace(cluster, slurm=slurm.resolve_slurm(cluster, spec.slurm, skus))
    if "ccws" in cluster.platforms:
        cluster = replace(cluster, ccws=ccws.resolve_ccws(cluster, spec.ccws, skus))
    return cluster
