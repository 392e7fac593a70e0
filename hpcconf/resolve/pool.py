"""A resolved node pool: its SKU facts, accelerator profile, NCCL settings, health plan and test passes' inputs."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Mapping, Optional

from ..catalog import Sku
from ..knowledge.accelerators import AcceleratorProfile
from .collective import PoolCollective
from .health import PoolHealth
from .nccl import PoolNccl
from .sku import ResolvedSku

PoolSkus = Mapping[str, Sku]  # pool name -> its catalog entry (an input of resolve, never a field of the model)


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
    def collective_library(self) -> str:
        """``nccl`` (NVIDIA) or ``rccl`` (AMD): which library reads the pool's ``NCCL_*`` settings."""
        return self.collective.library
