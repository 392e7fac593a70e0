"""The targets: one module per artifact family, each ``render(cluster) -> list[Artifact]``.

A target declares which platforms it serves; ``None`` means it serves every spec. This package is the
registry; what targets share lives in ``_common`` (no target imports another, nor this registry).
"""

from __future__ import annotations

from ..artifacts import Artifact
from ..resolve import ResolvedCluster
from . import aks, azhop, ccws, health, nccl_files, slurm, test_image
from ._common import Target

__all__ = ["Target", "all_targets", "render_all"]


def all_targets() -> list[Target]:
    return [
        # Node-side NCCL files (/etc/nccl.conf, /opt/hpcconf/nccl) exist only where hpcconf sets nodes up;
        # on AKS the test image carries the topology and the job passes the settings.
        Target("nccl", frozenset({"azhop", "ccws", "slurm"}), nccl_files.render),
        Target("test-image", None, test_image.render),
        Target("health", None, health.render),
        *aks.TARGETS, *azhop.TARGETS, *ccws.TARGETS, *slurm.TARGETS,
    ]


def render_all(cluster: ResolvedCluster) -> list[Artifact]:
    artifacts: list[Artifact] = []
    for target in all_targets():
        if target.applies_to(cluster):
            artifacts += target.render(cluster)
    return _unique_by_path(artifacts)


def _unique_by_path(artifacts: list[Artifact]) -> list[Artifact]:
    """Two targets may emit the same file (a topology shared by pools); never two versions of it."""
    seen: dict[str, Artifact] = {}
    for artifact in artifacts:
        other = seen.get(artifact.path)
        if other is not None and other.content != artifact.content:
            raise RuntimeError(f"two targets write {artifact.path} with different content ({other.target}, {artifact.target})")
        seen[artifact.path] = artifact
    return [seen[path] for path in sorted(seen)]
