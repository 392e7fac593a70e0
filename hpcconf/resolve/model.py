"""The cluster as resolved before its platform sections (:class:`ResolvedCore`), which the per-platform
resolvers (``resolve/aks.py``, ``azhop.py``, ``slurm.py``, ``ccws.py``) read; :class:`hpcconf.resolve.ResolvedCluster`
adds their sections. Kept apart so the platform modules and the cluster that holds them form no import loop.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Optional

from .collective import ResolvedTestImage, TestImageBuild
from .compat import ResolvedVersions
from .health import ResolvedHealthChecks
from .network import ResolvedInfiniband
from .pool import ResolvedPool
from .test_passes import ResolvedNcclTest


@dataclass(frozen=True)
class ResolvedCore:
    """The cluster resolved before its platform sections: what each platform's resolver reads."""

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

    @property
    def gpu_pools(self) -> tuple[ResolvedPool, ...]:
        return tuple(p for p in self.pools if p.has_gpus)

    def pool(self, name: str) -> ResolvedPool:
        return next(p for p in self.pools if p.name == name)
