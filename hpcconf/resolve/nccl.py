"""Per-pool NCCL settings: SKU defaults + topology file paths + the spec's overrides.

Two places read NCCL settings and they must agree except for where the topology file
lives: a node's ``/etc/nccl.conf`` (AzHOP, Slurm) and a container's environment (the
AKS job, whose image carries the file under ``/workspace``).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Mapping, Optional

from ..catalog import Sku

IMAGE_WORKDIR = "/workspace"  # WORKDIR of NVIDIA's PyTorch images, where seed 000/003 put the topo file
NODE_NCCL_DIR = "/opt/hpcconf/nccl"  # where the node setup step installs hpcconf's topology files


@dataclass(frozen=True)
class PoolNccl:
    topo_file: Optional[str]  # file name of the generated topology, e.g. "ndv4-topo.xml"
    graph_file: Optional[str]
    node_conf: tuple[tuple[str, str], ...]  # /etc/nccl.conf lines on the node, in order
    image_env: tuple[tuple[str, str], ...]  # the same settings for a container using the test image

    @property
    def topo_image_path(self) -> Optional[str]:
        return f"{IMAGE_WORKDIR}/{self.topo_file}" if self.topo_file else None

    @property
    def topo_node_path(self) -> Optional[str]:
        return f"{NODE_NCCL_DIR}/{self.topo_file}" if self.topo_file else None

    @property
    def graph_node_path(self) -> Optional[str]:
        return f"{NODE_NCCL_DIR}/{self.graph_file}" if self.graph_file else None

    def setting(self, key: str) -> Optional[str]:
        return dict(self.node_conf).get(key)


def topology_file_names(sku: Sku) -> tuple[Optional[str], Optional[str]]:
    family = sku.nccl.topo_family
    if not family or sku.topology is None:
        return None, None
    return f"{family}-topo.xml", (f"{family}-graph.xml" if sku.nccl.graph else None)


def _settings(sku: Sku, infiniband: bool, topo: Optional[str], graph: Optional[str],
              overrides: Mapping[str, str], socket_ifname: Optional[str] = None) -> tuple[tuple[str, str], ...]:
    entries: dict[str, str] = {}
    entries.update(sku.nccl.conf)
    if topo:
        entries["NCCL_TOPO_FILE"] = topo
    if graph:
        entries["NCCL_GRAPH_FILE"] = graph
    if not infiniband:
        # Without IB, NCCL would probe for it on every init; say so explicitly (seed 000 NCv4 runs).
        entries["NCCL_IB_DISABLE"] = "1"
    if sku.nccl.algo:
        entries["NCCL_ALGO"] = sku.nccl.algo
    if socket_ifname:
        entries.setdefault("NCCL_SOCKET_IFNAME", socket_ifname)
    entries.update(overrides)  # the spec has the last word
    return tuple(entries.items())


def resolve_pool_nccl(sku: Sku, infiniband: bool, overrides: Mapping[str, str]) -> PoolNccl:
    topo, graph = topology_file_names(sku)
    # A provider's own topology file (Crusoe remaps PCI addresses per hypervisor) exists only on its nodes.
    node_topo = f"{NODE_NCCL_DIR}/{topo}" if topo else sku.nccl.vendor_topo_file
    node_conf = _settings(sku, infiniband, node_topo, graph and f"{NODE_NCCL_DIR}/{graph}", overrides)
    # A pod has eth0 plus one net<N> per IB NIC: pin NCCL's bootstrap to eth0 as seeds 000/003 do.
    # Nodes keep the image's choice (Azure's and Crusoe's /etc/nccl.conf set no interface).
    image_env = _settings(sku, infiniband, topo and f"{IMAGE_WORKDIR}/{topo}",
                          graph and f"{IMAGE_WORKDIR}/{graph}", overrides, socket_ifname=sku.ethernet_interface)
    return PoolNccl(topo_file=topo, graph_file=graph, node_conf=node_conf, image_env=image_env)
