"""The targets: one module per artifact family, each ``render(cluster) -> list[Artifact]``.

A target declares which platforms it serves; ``None`` means it serves every spec.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Callable, Optional

from ..artifacts import Artifact
from ..resolve import ResolvedCluster


@dataclass(frozen=True)
class Target:
    name: str
    platforms: Optional[frozenset[str]]
    render: Callable[[ResolvedCluster], list[Artifact]]

    def applies_to(self, cluster: ResolvedCluster) -> bool:
        return self.platforms is None or bool(self.platforms & set(cluster.platforms))


def all_targets() -> list[Target]:
    # Imported here so a target module can import this package without a cycle.
    from . import nccl_files, test_image

    targets = [
        # Node-side NCCL files (/etc/nccl.conf, /opt/hpcconf/nccl) exist only where hpcconf sets nodes up;
        # on AKS the test image carries the topology and the job passes the settings.
        Target("nccl", frozenset({"azhop", "slurm"}), nccl_files.render),
        Target("test-image", None, test_image.render),
    ]
    targets += _optional_targets()
    return targets


def _optional_targets() -> list[Target]:
    """Platform targets, registered by their modules' TARGETS lists as they land."""
    import importlib

    found: list[Target] = []
    for module_name in ("aks", "azhop", "slurm"):
        try:
            module = importlib.import_module(f"{__name__}.{module_name}")
        except ModuleNotFoundError as exc:
            if exc.name != f"{__name__}.{module_name}":
                raise
            continue
        found += list(getattr(module, "TARGETS", []))
    return found


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
