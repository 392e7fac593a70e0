"""NCCL_TOPO_FILE and NCCL_GRAPH_FILE contents as element trees, computed from the SKU catalog (the target
``hpcconf.targets.nccl_topology`` lays them out for NCCL's parser).

One generator covers Azure's four shapes (see :class:`hpcconf.catalog.Topology`): ndv4 (a
virtual bridge per NUMA node), ndv5 (a bridge per GPU+HCA pair), ndv2 (flat) and ncv4
(<gpu> children, a socket NIC).

Deliberate differences from Azure's files, all on ncv4 (NC96ads_A100_v4):
  * ``link_speed="16 GT/s" link_width="16"`` instead of ``""``/``"0"``: NCCL maps an unknown speed
    to 6 Gb/s per lane without a message; A100 PCIe is Gen4 x16.
  * no ``<nvlink>`` children: Azure's point each GPU at itself, and any ``<nvlink>`` child stops
    NCCL from asking NVML for that GPU's links, so the real NV12 bridges are never used
    (measured: 24.3 vs 326 GB/s all_reduce busbw). Without children NCCL discovers them.
The graph keeps Azure's per-channel speeds (SKU facts) but computes the channels from the GPUs.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Sequence

from ..catalog import Sku, Topology, TopoNet, TopoNuma

# NCCL path types, best to worst (src/graph/topo.h); a ring is as good as its worst hop.
PATH_TYPES = ["LOC", "NVL", "NVB", "PIX", "PXB", "P2C", "PXN", "PHB", "SYS"]

# <graph id> / pattern pairs Azure's ncv4-graph.xml carries (src/graph/search.cc):
# id 0 ring (pattern 4 NCCL_TOPO_PATTERN_RING), id 1 tree (pattern 1 balanced tree),
# id 2 collnet chain (pattern 3 tree).
GRAPH_KINDS = [(0, 4, "ring"), (1, 1, "tree"), (2, 3, "tree")]


@dataclass(frozen=True)
class Node:
    """One element of an NCCL topology or graph XML file: its name, attributes in file order, children."""

    name: str
    attrs: tuple[tuple[str, str], ...]
    children: tuple["Node", ...] = ()


# --------------------------------------------------------------------------- topology

def _pci(busid: str, pci_class: str, topo: Topology, extra: Sequence[tuple[str, str]] = (), children: Sequence[Node] = (),
         after: Sequence[tuple[str, str]] = ()) -> Node:
    attrs = (("busid", busid), ("class", pci_class), *extra,
             ("link_speed", topo.link_speed), ("link_width", str(topo.link_width)), *after)
    return Node("pci", attrs, tuple(children))


def _switch(number: int, topo: Topology, members: list[Node]) -> Node:
    ids = [(key, "0x0000") for key in ("vendor", "device", "subsystem_vendor", "subsystem_device")]
    # ndv5 lists the ids after link_width
    return _pci(f"ffff:ff:{number:02x}.0", topo.switch_class, topo, children=members, after=ids if topo.switch_ids else ())


def _gpu_pci(sku: Sku, topo: Topology, busid: str) -> Node:
    if not topo.gpu_elements:
        return _pci(busid, topo.gpu_class, topo)
    dev = topo.cuda_order().index(busid)
    ids = [("vendor", sku.gpu.pci_vendor_id), ("device", sku.gpu.pci_device or "")]
    if sku.gpu.pci_subsystem_device:
        ids += [("subsystem_vendor", sku.gpu.pci_vendor_id), ("subsystem_device", sku.gpu.pci_subsystem_device)]
    gpu = Node("gpu", (("dev", str(dev)), ("sm", str(sku.gpu.sm)), ("rank", str(dev)), ("gdr", "1")))
    return _pci(busid, topo.gpu_class, topo, ids, [gpu])


def _net(net: TopoNet) -> Node:
    attrs = (("name", net.name), ("dev", str(net.dev)), ("speed", str(net.speed)), ("port", str(net.port)),
             ("latency", f"{net.latency:f}"), ("guid", net.guid), ("maxconn", str(net.maxconn)),
             ("gdr", str(net.gdr)))
    return Node("nic", (), (Node("net", attrs),))


def _cpu_children(sku: Sku, topo: Topology, numa: TopoNuma, switch_count: list[int]) -> list[Node]:
    gpus = [_gpu_pci(sku, topo, busid) for busid in numa.gpus]
    hcas = [_pci(busid, topo.hca_class, topo) for busid in numa.hcas]
    if topo.switch == "none":
        children = gpus + hcas
    else:
        # each GPU is followed by the HCA it is paired with (index i), as in Azure's files
        pairs = [[gpu, hca] for gpu, hca in zip(gpus, hcas)]
        groups = [sum(pairs, [])] if topo.switch == "per_numa" else pairs
        children = []
        for members in groups:
            switch_count[0] += 1
            children.append(_switch(switch_count[0], topo, members))
    return children + [_net(net) for net in numa.nets]


def topology_tree(sku: Sku) -> Node | None:
    topo = sku.topology
    if topo is None:
        return None
    switch_count = [0]  # virtual bridges are numbered ffff:ff:01.0, 02, ... across the system
    cpus = []
    for numa in topo.numa:
        attrs = (("numaid", str(numa.numaid)), ("affinity", sku.affinity_mask(numa.numaid)),
                 ("arch", topo.cpu.arch), ("vendor", topo.cpu.vendor),
                 ("familyid", str(topo.cpu.familyid)), ("modelid", str(topo.cpu.modelid)))
        cpus.append(Node("cpu", attrs, tuple(_cpu_children(sku, topo, numa, switch_count))))
    return Node("system", (("version", "1"),), tuple(cpus))


# --------------------------------------------------------------------------- graph

def _numa_of(topo: Topology) -> dict[str, int]:
    return {busid: numa.numaid for numa in topo.numa for busid in numa.gpus}


def hop_type(topo: Topology, a: str, b: str) -> str:
    """NCCL's path type between two GPUs as the topology (plus known NVLink bridges) describes it."""
    if a == b:
        return "LOC"
    if (a, b) in topo.nvlink_pairs or (b, a) in topo.nvlink_pairs:
        return "NVL"
    numa = _numa_of(topo)
    if numa[a] != numa[b]:
        return "SYS"
    if topo.switch == "per_numa":
        return "PIX"
    return "PHB"  # same CPU, different root ports (or separate bridges)


def _base_order(topo: Topology) -> list[list[str]]:
    """GPUs in device order, NVLink partners kept adjacent: [[a, b], [c, d], [e], ...]."""
    groups: list[list[str]] = []
    placed: set[str] = set()
    for busid in topo.cuda_order():
        if busid in placed:
            continue
        partner = next((y if x == busid else x for x, y in topo.nvlink_pairs if busid in (x, y)), None)
        group = [busid] if partner is None or partner in placed else [busid, partner]
        placed.update(group)
        groups.append(group)
    return groups


def ring_channels(topo: Topology) -> list[list[str]]:
    """Two rings over all GPUs with NVLink partners adjacent: one way round, then the other."""
    forward = [busid for group in _base_order(topo) for busid in group]
    backward = forward[:1] + forward[:0:-1]
    return [forward] if len(forward) < 3 else [forward, backward]


def tree_channels(topo: Topology) -> list[list[str]]:
    """Four chains: as is, partners swapped, and both reversed, so each GPU heads one chain and
    every NVLink pair is crossed in both directions."""
    groups = _base_order(topo)
    forward = [busid for group in groups for busid in group]
    swapped = [busid for group in groups for busid in reversed(group)]
    channels = [forward, swapped, forward[::-1], swapped[::-1]]
    unique: list[list[str]] = []
    for channel in channels:
        if channel not in unique:
            unique.append(channel)
    return unique


def _fmt_speed(value: float) -> str:
    return f"{value:g}"


def graph_tree(sku: Sku) -> Node | None:
    topo = sku.topology
    if not sku.nccl.graph or topo is None or topo.graph is None:
        return None
    order = topo.cuda_order()
    if len(order) > 10:
        # <gpu dev> is hex from NCCL 2.21 and decimal before; only 0-9 read the same in both
        raise ValueError(f"{sku.name}: graph files support at most 10 GPUs (dev radix changed in NCCL 2.21)")
    facts = topo.graph
    graphs = []
    for graph_id, pattern, kind in GRAPH_KINDS:
        channels = ring_channels(topo) if kind == "ring" else tree_channels(topo)
        hops = [(c[i], c[i + 1]) for c in channels for i in range(len(c) - 1)]
        if kind == "ring":
            hops += [(c[-1], c[0]) for c in channels]
        typeintra = max((hop_type(topo, a, b) for a, b in hops), key=PATH_TYPES.index, default="LOC")
        attrs = (("id", str(graph_id)), ("pattern", str(pattern)), ("crossnic", "0"),
                 ("nchannels", str(len(channels))), ("speedintra", _fmt_speed(facts.speed_intra)),
                 ("speedinter", _fmt_speed(facts.speed_inter)), ("latencyinter", _fmt_speed(facts.latency_inter)),
                 ("typeintra", typeintra), ("typeinter", facts.type_inter), ("samechannels", "0"))
        chans = tuple(Node("channel", (), tuple(Node("gpu", (("dev", str(order.index(b))),)) for b in c)) for c in channels)
        graphs.append(Node("graph", attrs, chans))
    return Node("graphs", (("version", "1"),), tuple(graphs))
