"""Resolve: spec + SKU catalog → one fully derived model that every target reads.

Every value that depends on more than one input (ranks = nodes × GPUs, NIC counts,
resource names, file paths inside the image, per-pool NCCL settings) is computed here
once, so two artifacts can never disagree about it. Targets never read the raw spec.
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from pathlib import Path
from typing import TYPE_CHECKING, Mapping, Optional

from ..catalog import Catalog, Sku
from ..knowledge.accelerators import AcceleratorProfile, profile
from ..knowledge.accelerators import GpuOperator as GpuOperator  # the profile's types are the model's: targets read them here
from ..safe_io import read_text
from ..spec.model import Cluster, NodePool
from .collective import (
    PoolCollective,
    ResolvedTestImage,
    TestImageBuild,
    pool_collective,
    resolve_test_image,
    resolved_test_image,
)
from .compat import ResolvedVersions, derived_versions
from .health import PoolHealth, ResolvedHealthChecks, pool_health, resolve_health_checks
from .nccl import PoolNccl, resolve_pool_nccl
from .network import ResolvedInfiniband, resolved_infiniband
from .sku import ResolvedSku, resolve_sku
from .test_passes import ResolvedNcclTest, resolved_nccl_test

PoolSkus = Mapping[str, Sku]  # pool name -> its catalog entry (an input of resolve, never a field of the model)

if TYPE_CHECKING:  # platform sections are resolved by their own modules
    from .aks import ResolvedAks
    from .azhop import ResolvedAzhop
    from .ccws import ResolvedCcws
    from .slurm import ResolvedSlurm


@dataclass(frozen=True)
class ResolvedPool:
    name: str
    sku: ResolvedSku  # the facts targets read (resolve's sub-resolvers get the catalog entry as PoolSkus)
    count: int
    image: Optional[str]
    colocate: bool
    os_disk_gb: int
    infiniband: bool  # the SKU has IB and the spec did not turn it off
    nccl: PoolNccl
    accelerator: AcceleratorProfile  # the row of data/accelerators.yaml for the SKU's GPU vendor
    collective: PoolCollective  # the library its GPUs run (the profile's), and where its tests live
    # (file name, text) of the SKU file when it is the user's, not hpcconf's: jobs that judge their own
    # run on the nodes (hpcconf nccl-report --sku) need that definition there, so it ships with them.
    sku_file: Optional[tuple[str, str]] = None
    health: Optional[PoolHealth] = None  # Azure's node health checks for the pool (GPU pools, when enabled)

    @property
    def gpus_per_node(self) -> int:
        return self.sku.gpu_count

    @property
    def ranks(self) -> int:
        return self.count * self.gpus_per_node

    @property
    def ib_nics_per_node(self) -> int:
        return self.sku.ib_nics if self.infiniband else 0

    @property
    def has_gpus(self) -> bool:
        return self.gpus_per_node > 0

    @property
    def gpu_vendor(self) -> str:
        return self.accelerator.vendor

    @property
    def collective_library(self) -> str:
        """``nccl`` (NVIDIA) or ``rccl`` (AMD): which library reads the pool's ``NCCL_*`` settings."""
        return self.collective.library


@dataclass(frozen=True)
class ResolvedCluster:
    spec_file: str
    name: str
    location: str
    resource_group: str
    platforms: tuple[str, ...]
    pools: tuple[ResolvedPool, ...]
    test_pool: Optional[ResolvedPool]
    versions: ResolvedVersions
    ib_network: ResolvedInfiniband
    ib_resource: str  # "nvidia.com/<resource_name>": the one name the device plugin, network and job share
    test_image: Optional[ResolvedTestImage]
    test_image_ref: Optional[str]  # registry/name:tag
    nccl_test: ResolvedNcclTest
    mpi_env: tuple[tuple[str, str], ...]
    health_checks: ResolvedHealthChecks
    test_image_build: Optional[TestImageBuild] = None  # set with test_image and a GPU test pool
    aks: Optional["ResolvedAks"] = None
    azhop: Optional["ResolvedAzhop"] = None
    slurm: Optional["ResolvedSlurm"] = None
    ccws: Optional["ResolvedCcws"] = None

    @property
    def gpu_pools(self) -> tuple[ResolvedPool, ...]:
        return tuple(p for p in self.pools if p.has_gpus)

    def pool(self, name: str) -> ResolvedPool:
        return next(p for p in self.pools if p.name == name)


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
        test_image=resolved_test_image(image),
        test_image_ref=f"{image.registry}/{image.name}:{image.tag}" if image else None,
        nccl_test=resolved_nccl_test(spec.nccl_test),
        mpi_env=tuple(sorted(spec.mpi_env.items())),
        health_checks=resolve_health_checks(spec.health_checks),
    )
    if image is not None and test_pool is not None:
        build = resolve_test_image(test_pool.collective, spec.nccl_test.collective, cluster.versions.nccl_tests,
                                   "aks" in spec.platforms, test_pool.sku.arch)
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
    from . import aks, azhop, ccws, slurm

    if "aks" in cluster.platforms:
        cluster = replace(cluster, aks=aks.resolve_aks(cluster, spec.aks, skus))
    if "azhop" in cluster.platforms:
        cluster = replace(cluster, azhop=azhop.resolve_azhop(cluster, spec.azhop, skus))
    if {"slurm", "azhop"} & set(cluster.platforms):  # AzHOP queues are Slurm partitions too
        cluster = replace(cluster, slurm=slurm.resolve_slurm(cluster, spec.slurm, skus))
    if "ccws" in cluster.platforms:
        cluster = replace(cluster, ccws=ccws.resolve_ccws(cluster, spec.ccws, skus))
    return cluster
