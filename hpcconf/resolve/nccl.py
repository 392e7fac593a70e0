"""Per-pool NCCL settings: SKU defaults + topology file paths + the spec's overrides.

Two places read NCCL settings and they must agree except for where the topology file
lives: a node's ``/etc/nccl.conf`` (AzHOP, Slurm) and a container's environment (the
AKS job, whose image carries the file under ``/workspace``).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Mapping, Optional

from ..catalog import Sku
from ..knowledge.nccl_algo import per_collective_algo

IMAGE_WORKDIR = "/workspace"  # WORKDIR of NVIDIA's PyTorch images, where the 2023 NDm_v4 AKS walkthroughs (jingchaozhang.github.io, Azure HPC blog) put the topo file
NODE_NCCL_DIR = "/opt/hpcconf/nccl"  # where the node setup step installs hpcconf's topology files


@dataclass(frozen=True)
class PoolNccl:
    topo_file: Optional[str]  # file name of the generated topology, e.g. "nd96amsr-a100-v4-topo.xml"
    graph_file: Optional[str]  # installed on nodes for jobs that opt in; never named in node_conf
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


def sku_file_stem(sku: Sku) -> str:
    """A file-name stem unique to the SKU: Standard_ND96amsr_A100_v4 -> nd96amsr-a100-v4.

    Topology files are named per SKU, not per azhpc-images family: SKUs of one family differ
    (ND96asr_v4 and ND96amsr_A100_v4 in GPU memory, ND H100 v5 and ND H200 v5 in GPUs), and two
    pools of one family in one cluster must not claim one file name.
    """
    return sku.name.removeprefix("Standard_").lower().replace("_", "-")


def topology_file_names(sku: Sku) -> tuple[Optional[str], Optional[str]]:
    if not sku.nccl.topo_family or sku.topology is None:
        return None, None
    stem = sku_file_stem(sku)
    return f"{stem}-topo.xml", (f"{stem}-graph.xml" if sku.nccl.graph else None)


def provider_algo(sku: Sku, nccl_version: Optional[str]) -> Optional[str]:
    """The provider's algorithm (Crusoe: NVLSTree) only for the functions that can run it.

    A global NCCL_ALGO=NVLSTree (Crusoe's /etc/nccl.conf) leaves single-node jobs and Broadcast,
    AllGather and ReduceScatter with no algorithm; see :mod:`hpcconf.knowledge.nccl_algo`.
    """
    if not sku.nccl.algo:
        return None
    return per_collective_algo(sku.nccl.algo, nccl_version)


def _settings(sku: Sku, infiniband: bool, topo: Optional[str],
              overrides: Mapping[str, str], socket_ifname: Optional[str] = None,
              nccl_version: Optional[str] = None) -> tuple[tuple[str, str], ...]:
    entries: dict[str, str] = {}
    entries.update(sku.nccl.conf)
    entries.pop("NCCL_ALGO", None)  # the provider's global value; replaced by a per-function one below
    if topo:
        entries["NCCL_TOPO_FILE"] = topo
    if not infiniband:
        # Without IB, NCCL would look for it on every init; say so explicitly (jingchaozhang.github.io's NCv4 runs, 2023).
        entries["NCCL_IB_DISABLE"] = "1"
    algo = provider_algo(sku, nccl_version)
    if algo:
        entries["NCCL_ALGO"] = algo
    if socket_ifname:
        entries.setdefault("NCCL_SOCKET_IFNAME", socket_ifname)
    entries.update(overrides)  # the spec has the last word
    return tuple(entries.items())


def resolve_pool_nccl(sku: Sku, infiniband: bool, overrides: Mapping[str, str],
                      nccl_version: Optional[str] = None) -> PoolNccl:
    topo, graph = topology_file_names(sku)
    # A provider's own topology file (Crusoe remaps PCI addresses per hypervisor) exists only on its nodes.
    node_topo = f"{NODE_NCCL_DIR}/{topo}" if topo else sku.nccl.vendor_topo_file
    # The graph file (NC96ads_A100_v4) is never named in nccl.conf: it describes all 4 GPUs, so a job
    # given fewer dies at init ("dev N not found"), and it gains nothing (28.1 vs 28.2 GB/s, jingchaozhang.github.io, 2023).
    # Nodes get the file for a job to opt in with NCCL_GRAPH_FILE; the test image does not carry it.
    node_conf = _settings(sku, infiniband, node_topo, overrides, nccl_version=nccl_version)
    # A pod has eth0 plus one net<N> per IB NIC: pin NCCL's bootstrap to eth0 as the 2023 NDm_v4 AKS walkthroughs (jingchaozhang.github.io, Azure HPC blog) do.
    # Nodes keep the image's choice (Azure's and Crusoe's /etc/nccl.conf set no interface).
    image_env = _settings(sku, infiniband, topo and f"{IMAGE_WORKDIR}/{topo}", overrides,
                          socket_ifname=sku.ethernet_interface, nccl_version=nccl_version)
    return PoolNccl(topo_file=topo, graph_file=graph, node_conf=node_conf, image_env=image_env)
