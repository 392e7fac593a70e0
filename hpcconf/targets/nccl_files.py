"""NCCL files per cluster: a topology (and graph, where it helps) per SKU, an nccl.conf per GPU pool.

Paths: ``nccl/<sku>-topo.xml``, ``nccl/<sku>-graph.xml`` (only NC96ads_A100_v4; installed for jobs
to opt in, never named in nccl.conf) and ``nccl/<pool>/nccl.conf``. The nccl.conf holds the node view (topology under
/opt/hpcconf/nccl); the AKS job passes the image view as environment instead.
"""

from __future__ import annotations

from ..artifacts import Artifact, Kind
from ..parsers.nccl_conf import render_nccl_conf
from ..resolve import ResolvedCluster, ResolvedPool
from ..templating import generated_by
from .nccl_topology import render_graph_xml, render_topology_xml


def topology_artifacts(pool: ResolvedPool, directory: str, target: str, with_graph: bool = True) -> list[Artifact]:
    """The pool's topology (and opt-in graph) files under ``directory`` (shared with the test image's build context)."""
    out = []
    if pool.nccl.topo_file:
        out.append(Artifact(f"{directory}/{pool.nccl.topo_file}", render_topology_xml(pool.sku), Kind.NCCL_TOPOLOGY, target))
    if with_graph and pool.nccl.graph_file:
        out.append(Artifact(f"{directory}/{pool.nccl.graph_file}", render_graph_xml(pool.sku), Kind.NCCL_GRAPH, target))
    return out


def nccl_conf(pool: ResolvedPool, cluster: ResolvedCluster) -> Artifact:
    header = [generated_by(cluster.spec_file), f"/etc/nccl.conf for pool '{pool.name}' ({pool.sku.name})."]
    if pool.nccl.graph_node_path:
        header.append(f"Graph file: opt in per job that gets all {pool.sku.gpu.count} GPUs "
                      f"(export NCCL_GRAPH_FILE={pool.nccl.graph_node_path}); with fewer GPUs NCCL fails at init.")
    text = render_nccl_conf(dict(pool.nccl.node_conf), header_comment_lines=header)
    return Artifact(f"nccl/{pool.name}/nccl.conf", text, Kind.NCCL_CONF, "nccl")


def render(cluster: ResolvedCluster) -> list[Artifact]:
    artifacts: list[Artifact] = []
    for pool in cluster.gpu_pools:
        artifacts += topology_artifacts(pool, "nccl", "nccl")
        artifacts.append(nccl_conf(pool, cluster))
    return artifacts
