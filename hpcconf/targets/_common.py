"""What the targets share, kept out of the targets themselves so that no target imports another.

``Target`` and :func:`platform_target` describe a target; the NCCL file helpers are used by the
node-side ``nccl`` target, by the AzHOP cluster-init (which installs the same files) and by the test
image (which copies the topology), so the three cannot drift apart.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Callable, Optional, TypeVar

from ..artifacts import Artifact, Kind
from ..parsers.nccl_conf import render_nccl_conf
from ..resolve import ResolvedCluster, ResolvedPool
from ..templating import generated_by
from .nccl_topology import render_graph_xml, render_topology_xml

Section = TypeVar("Section")


@dataclass(frozen=True)
class Target:
    name: str
    platforms: Optional[frozenset[str]]
    render: Callable[[ResolvedCluster], list[Artifact]]

    def applies_to(self, cluster: ResolvedCluster) -> bool:
        return self.platforms is None or bool(self.platforms & set(cluster.platforms))


def platform_target(name: str, platforms: frozenset[str], section: Callable[[ResolvedCluster], Optional[Section]],
                    render: Callable[[ResolvedCluster, Section], list[Artifact]]) -> Target:
    """A target for some platforms; ``render`` receives the resolved section they imply, never ``None``."""

    def render_with_section(cluster: ResolvedCluster) -> list[Artifact]:
        resolved = section(cluster)
        if resolved is None:  # resolve() builds the section for every platform the spec names
            raise RuntimeError(f"target {name}: the cluster's platforms {cluster.platforms} imply a resolved section it lacks")
        return render(cluster, resolved)

    return Target(name, platforms, render_with_section)


def topology_artifacts(pool: ResolvedPool, directory: str, target: str, with_graph: bool = True) -> list[Artifact]:
    """The pool's topology (and opt-in graph) files under ``directory`` (shared with the test image's build context)."""
    out = []
    topology = render_topology_xml(pool.sku) if pool.nccl.topo_file else None
    if topology is not None:
        out.append(Artifact(f"{directory}/{pool.nccl.topo_file}", topology, Kind.NCCL_TOPOLOGY, target))
    graph = render_graph_xml(pool.sku) if with_graph and pool.nccl.graph_file else None
    if graph is not None:
        out.append(Artifact(f"{directory}/{pool.nccl.graph_file}", graph, Kind.NCCL_GRAPH, target))
    return out


def nccl_conf(pool: ResolvedPool, cluster: ResolvedCluster) -> Artifact:
    header = [generated_by(cluster.spec_file), f"/etc/nccl.conf for pool '{pool.name}' ({pool.sku.name})."]
    if pool.nccl.graph_node_path:
        header.append(f"Graph file: opt in per job that gets all {pool.sku.gpu_count} GPUs "
                      f"(export NCCL_GRAPH_FILE={pool.nccl.graph_node_path}); with fewer GPUs NCCL fails at init.")
    text = render_nccl_conf(dict(pool.nccl.node_conf), header_comment_lines=header)
    return Artifact(f"nccl/{pool.name}/nccl.conf", text, Kind.NCCL_CONF, "nccl")


# -- keeping nccl.conf across reboots --------------------------------------------------------------

KEPT_NCCL_CONF = "/etc/hpcconf/nccl.conf"  # no image writes here; the boot unit copies it to /etc/nccl.conf
NCCL_BOOT_UNIT = "hpcconf-nccl-conf.service"
# The upstream snapshots the boot unit's comment was checked against (sku-customizations.service and
# the per-SKU scripts; NCCL's conf-file precedence).
AZHPC_IMAGES_COMMIT = "8e9d055fb9e1f7385da734969793861c447958a1"
NCCL_PARAM_COMMIT = "5067397c2676d5aed50042fc39e5c8ee96eb0027"


def nccl_boot_unit(heredoc_end: str) -> dict[str, str]:
    """Template context of ``nccl/boot-unit.sh.j2``, which both node installers include."""
    return {"unit": NCCL_BOOT_UNIT, "kept": KEPT_NCCL_CONF, "kept_dir": KEPT_NCCL_CONF.rsplit("/", 1)[0],
            "end": heredoc_end, "azhpc_commit": AZHPC_IMAGES_COMMIT, "nccl_commit": NCCL_PARAM_COMMIT}
