"""The SKU facts the targets read, as a resolved type of hpcconf's own (the catalog's :class:`hpcconf.catalog.Sku`
stays with resolve): the name, provider, host architecture, GPU count, sizes and links, the NCCL settings the
provider's image writes, the InfiniBand links, and the NCCL topology and graph as element trees.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Optional

from ..catalog import Sku
from .nccl_topology import Node, graph_tree, topology_tree


@dataclass(frozen=True)
class ResolvedSku:
    name: str
    provider: str  # azure, crusoe, other
    arch: str  # the host CPU's: x86_64, arm64
    gpu_count: int
    gpu_model: str
    vcpus: Optional[int]
    memory_gib: Optional[int]
    ethernet_interface: str  # the front-end NIC
    ib_nics: int  # InfiniBand HCAs the VM has (0: none)
    ib_rate: Optional[str]  # their link rate (NDR, HDR)
    ib_gbps: Optional[int]  # Gb/s per port
    nvlink_domain_gpus: int  # GPUs one NVLink domain joins (more than gpu_count: it spans VMs)
    image_nccl_conf: dict[str, str] = field(default_factory=dict)  # the /etc/nccl.conf the provider's image writes
    topology: Optional[Node] = None  # NCCL_TOPO_FILE's tree; None: NCCL auto-detects
    graph: Optional[Node] = None  # NCCL_GRAPH_FILE's tree (catalog nccl.graph: true)


def resolve_sku(sku: Sku) -> ResolvedSku:
    topology = topology_tree(sku)
    return ResolvedSku(
        name=sku.name, provider=sku.provider, arch=sku.cpu.arch, gpu_count=sku.gpu.count, gpu_model=sku.gpu.model,
        vcpus=sku.vcpus, memory_gib=sku.memory_gib, ethernet_interface=sku.ethernet_interface,
        ib_nics=sku.infiniband.count if sku.infiniband else 0, ib_rate=sku.infiniband.rate if sku.infiniband else None,
        ib_gbps=sku.infiniband.gbps if sku.infiniband else None,
        nvlink_domain_gpus=sku.nvlink_domain_gpus, image_nccl_conf=sku.nccl.image_conf(), topology=topology,
        graph=graph_tree(sku) if topology is not None else None)
