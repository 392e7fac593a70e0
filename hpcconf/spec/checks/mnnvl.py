"""Version floors of what a pool whose NVLink domain spans VMs (GB200/GB300 NVL72) uses on Slurm.

The Slurm target compiles such a pool into a job that forces multi-node NVLink
(``NCCL_MNNVL_ENABLE=1``) and asks for ``--segment``, and a script that writes a ``topology/block``
topology.conf; a pinned NCCL or Slurm older than those features would ignore them or refuse the job.
The floors and their sources live in :mod:`hpcconf.knowledge.mnnvl`.
"""

from __future__ import annotations

from typing import Iterator

from ...catalog import Catalog, UnknownSku
from ...diagnostics import Diagnostic
from ...knowledge import mnnvl
from ...rules_registry import spec_rule
from ..load import LoadedSpec
from . import at


def _mnnvl_pool(loaded: LoadedSpec, catalog: Catalog) -> str | None:
    """The first pool compiled for Slurm whose NVLink domain spans VMs, or None."""
    if "slurm" not in loaded.cluster.platforms:
        return None
    for pool in loaded.cluster.pools:
        try:
            if catalog.get(pool.sku).nvlink_spans_nodes:
                return pool.name
        except UnknownSku:
            continue  # HPC006
    return None


@spec_rule(code="SPEC070", name="mnnvl-nccl-too-old", since="0.3.0")
def mnnvl_nccl_too_old(loaded: LoadedSpec, catalog: Catalog) -> Iterator[Diagnostic]:
    """A GB200/GB300 NVL72 pool on Slurm with a pinned NCCL older than 2.21.5, which ignores NCCL_MNNVL_ENABLE.

    ## What it catches
    ``versions.nccl`` below 2.21.5 in a spec with ``platforms: [slurm]`` and a pool whose NVLink domain
    spans VMs (``nvlink.domain_gpus`` larger than ``gpu.count``).

    ## Why is this bad?
    The generated job exports ``NCCL_MNNVL_ENABLE=1`` so that NCCL fails at init when it cannot use
    NVLink across the VMs, instead of running the test over InfiniBand. NCCL reads that name from
    2.21.5 on (NVIDIA/nccl ``src/init.cc`` @ v2.21.5-1); 2.20.x read ``NCCL_MNNVL`` (@ v2.20.3-1) and
    2.19 and older have no multi-node NVLink at all, so the test would pass on the wrong fabric.

    ## Example
    ```yaml
    platforms: [slurm]
    pools:
      - {name: gpu, sku: Standard_ND128isr_NDR_GB200_v6, count: 18}
    versions: {nccl: 2.20.5}
    ```

    ## Fix
    Pin the NCCL the nodes run, 2.21.5 or newer (GB200 images ship far newer ones).
    """
    pool = _mnnvl_pool(loaded, catalog)
    floor = mnnvl.nccl_gap(loaded.cluster.versions.nccl) if pool else None
    if floor is not None:
        yield at(loaded, ("versions", "nccl"),
                 f"pool '{pool}' spans an NVLink domain across VMs, but NCCL {loaded.cluster.versions.nccl} "
                 f"does not read {floor.feature} (NCCL {floor.version} and newer: {floor.source})",
                 f"Pin NCCL {floor.version} or newer.")


@spec_rule(code="SPEC071", name="mnnvl-slurm-too-old", since="0.3.0")
def mnnvl_slurm_too_old(loaded: LoadedSpec, catalog: Catalog) -> Iterator[Diagnostic]:
    """A GB200/GB300 NVL72 pool on a pinned Slurm older than 24.05 (no block topology, --segment or IMEX channels).

    ## What it catches
    ``versions.slurm`` below 24.05 in a spec with ``platforms: [slurm]`` and a pool whose NVLink domain
    spans VMs. Without ``versions.slurm`` nothing is reported.

    ## Why is this bad?
    The generated job asks for ``#SBATCH --segment`` and its setup script writes a ``topology/block``
    topology.conf and asks for ``SwitchType=switch/nvidia_imex``. The block plugin exists from Slurm
    23.11, ``--segment`` and ``switch/nvidia_imex`` from 24.05 (SchedMD/slurm, first in
    slurm-23-11-1-1 and slurm-24-05-1-1); an older sbatch rejects the option, and without the block
    plugin the job's nodes may land in different NVLink domains.

    ## Example
    ```yaml
    platforms: [slurm]
    pools:
      - {name: gpu, sku: Standard_ND128isr_GB300_v6, count: 18}
    versions: {slurm: 23.02.7}
    ```

    ## Fix
    Run Slurm 24.05 or newer on the cluster and pin it.
    """
    pool = _mnnvl_pool(loaded, catalog)
    floor = mnnvl.slurm_gap(loaded.cluster.versions.slurm) if pool else None
    if floor is not None:
        yield at(loaded, ("versions", "slurm"),
                 f"pool '{pool}' spans an NVLink domain across VMs, but Slurm {loaded.cluster.versions.slurm} "
                 f"has no {floor.feature} (Slurm {floor.version} and newer: {floor.source})",
                 "Run Slurm 24.05 or newer (block topology, --segment, switch/nvidia_imex) and pin it.")
