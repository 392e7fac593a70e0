"""Node health checks per GPU pool: ``health/<pool>/nhc.conf``, Azure's NHC conf generated from the catalog.

The platforms run it where they set nodes up: the Slurm and AzHOP installers (``slurm`` and ``azhop``
targets) write it to the nodes, the AKS DaemonSet mounts it from a ConfigMap. Every file comes from
:mod:`hpcconf.targets._health`.
"""

from __future__ import annotations

from ..artifacts import Artifact
from ..resolve import ResolvedCluster
from . import _health


def render(cluster: ResolvedCluster) -> list[Artifact]:
    if not _health.enabled(cluster):
        return []
    return [_health.conf_artifact(cluster, pool) for pool in cluster.gpu_pools if pool.health is not None]
