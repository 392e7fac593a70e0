"""NCCL files per cluster: a topology (and graph, where it helps) per SKU, an nccl.conf per GPU pool.

Paths: ``nccl/<sku>-topo.xml``, ``nccl/<sku>-graph.xml`` (only NC96ads_A100_v4; installed for jobs
to opt in, never named in nccl.conf) and ``nccl/<pool>/nccl.conf``, for NCCL pools only: an AMD pool's
RCCL reads ``/etc/rccl.conf`` (ROCm/rccl src/misc/param.cc), and its Slurm job exports the settings. The nccl.conf holds the node view (topology under
/opt/hpcconf/nccl); the AKS job passes the image view as environment instead.
"""

from __future__ import annotations

from ..artifacts import Artifact
from ..resolve import ResolvedCluster
from ._common import nccl_conf, topology_artifacts


def render(cluster: ResolvedCluster) -> list[Artifact]:
    artifacts: list[Artifact] = []
    for pool in cluster.gpu_pools:
        if not pool.collective.reads_nccl_conf:
            continue  # RCCL reads /etc/rccl.conf, never /etc/nccl.conf; its job exports the settings instead
        artifacts += topology_artifacts(pool, "nccl", "nccl")
        artifacts.append(nccl_conf(pool, cluster))
    return artifacts
