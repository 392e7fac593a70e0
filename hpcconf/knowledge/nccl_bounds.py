"""Floors and limits for every SKU, node count and collective: published where a source gives one,
derived from the SKU's links otherwise, each labelled with where it comes from.

The ceiling (``limit``) of a collective is the bandwidth of its bottleneck in nccl-tests' bus-bandwidth
terms (NVIDIA/nccl-tests doc/PERFORMANCE.md @v2.19.6: busbw "should reflect the speed of the hardware
bottleneck"). Per GPU, with ``L`` one direction of its GPU link (NVLink/xGMI), ``G`` GPUs per node, ``N``
nodes, ``n = N*G`` ranks and ``W`` the node's network (NICs x line rate / 8, GB/s):

- one node: every collective is bound by ``L`` (NVSwitch or a full xGMI mesh gives each GPU its whole
  link); all_reduce with NVLS reduces inside the switch, each GPU moving the data once each way, so its
  busbw can reach ``L * 2(n-1)/n``;
- across nodes, ring-based all_reduce, all_gather, reduce_scatter, broadcast and reduce: ``min(L, W)`` (NCCL
  runs one ring per NIC, so the node's NICs add up); all_reduce with NVLSTree reduces inside the
  node first and the network carries ``2(N-1)/N`` of the data: ``min(L*2(n-1)/n, W*N/(N-1)*(n-1)/n)``; where the
  InfiniBand switches reduce too (SHARP, NCCL's CollNet: ``in_network_reduction``) each node sends its data once
  each way: ``min(L, W)*2(n-1)/n``;
- across the nodes of one NVLink domain (MNNVL, NVL72): NVLS spans the domain, ``L*2(n-1)/n``; a ring ``L``;
  across several domains the domain is the unit the network joins (``W`` x GPUs per domain / ``G``, ``N`` the
  number of domains): NVLS inside each, NVLSTree between them;
- alltoall: each rank sends ``(N-1)/N`` of its buffer off the node, so ``min(L, W*N/(G*(N-1))*(n-1)/n)``;
- all_reduce on 2 nodes with NCCL's Tree (its default where it models Tree faster): each node's data crosses the
  network once each way, so busbw can reach ``min(L, W)*2(n-1)/n``; NCCL models the 2-node Tree with the
  intra-node bandwidth (NVIDIA/nccl src/graph/tuning.cc @v2.30.7-1 l.306: ``bw = nNodes <= 2 || collnet ?
  bwIntra : bwInter``; nccl-tests issue #196: "On two nodes, NCCL uses the tree ... which can indeed go beyond
  the network bottleneck");
- sendrecv: each node boundary is one GPU pair, on one of the node's ``K`` NICs: ``min(L, W/K)`` (where one NIC
  serves every GPU, ``K = 1``, the pair has the whole NIC).

A derived floor is ``efficiency x`` the ring ceiling (``data/nccl_floors.yaml`` ``derivation``, each factor
with its source), for full-node runs only. It is decisive (a run below it fails) only on the shapes its factor
was measured on (``measured_on``: nodes x GPUs per node, on which GPU fabric); elsewhere it is reference only, reported, never
failing. Where the GPUs are not all linked (PCIe, NVLink pairs, a hybrid cube mesh) the links do not bound the
ring's path; the SKU's published single-node all_reduce floor does, from below, for the ring-family collectives
in the node and every collective across nodes; without one such a SKU gets no floor (``no_bound_reason``).
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import lru_cache
from typing import Literal, Optional

from .. import data_tables
from ..catalog import Sku
from .accelerators import profile
from .nccl_floors import DATA_FILE, Floor, FloorTable, load_floors

Origin = Literal["published", "derived"]
RING_FAMILY = ("all_reduce", "all_gather", "reduce_scatter", "broadcast", "reduce")
MATRIX = ("all_reduce", "all_gather", "reduce_scatter", "alltoall", "broadcast", "reduce", "sendrecv")
# A derived floor is a bandwidth plateau: a run is judged against it at its largest message, from a size where a
# healthy run has left the latency-bound range. A ring all_reduce takes 2(n-1) steps of S/n bytes, each with a fixed
# latency (NVIDIA/nccl src/graph/tuning.cc @v2.30.7-1: ring latency = (nsteps-nInterSteps)*intraLat +
# nInterSteps*interLat), so the share of time lost to latency is the same wherever the per-rank chunk S/n is. The
# factors were read at 1G-16G; 256 MiB on up to 16 ranks (2 nodes x 8 GPUs, 16 MiB per rank) is the smallest size
# judged, where NCCL's model still puts a healthy run above the floors (docs/nccl-report.md). At 16 x 8 ranks 256 MiB is
# still latency-bound (NCCL's model: ~202 GB/s on a healthy ND H100 v5 ring, ~360 at 8 GiB), so the size grows.
DERIVED_MIN_BYTES = 256 << 20
DERIVED_MIN_CHUNK_BYTES = 16 << 20


def derived_min_bytes(ranks: int) -> int:
    """The least message size (bytes) at which a derived floor decides, for a run of ``ranks`` ranks; below it
    the verdict is inconclusive."""
    return max(DERIVED_MIN_BYTES, ranks * DERIVED_MIN_CHUNK_BYTES)


@dataclass(frozen=True)
class Bound:
    """A floor or a limit: GB/s of busbw, where it comes from, and what it assumes."""

    gbps: float
    origin: Origin
    label: str
    source: str
    message_size: Optional[str] = None  # where a published floor is read; None: the largest size in the log
    decisive: bool = True  # False: a derived floor beyond the shapes its factor was measured on (reference only)

    @property
    def derived(self) -> bool:
        return self.origin == "derived"


@dataclass(frozen=True)
class Efficiency:
    collective: str  # or "*"
    scope: str  # intra | inter | *
    efficiency: float
    source: str
    # (nodes, GPUs per node, GPU fabric: ``gpu_fabric``) the factor's evidence was measured on
    measured_on: tuple[tuple[int, int, str], ...] = ()
    # Beyond the measured node count, up to ``scaled_to_nodes`` nodes of the measured node size, a lower factor
    # that is still decisive (``scaled_source`` says why it carries over); 0: no such extension.
    scaled_to_nodes: int = 0
    scaled_efficiency: float = 0.0
    scaled_source: str = ""

    def measured(self, nodes: int, gpus_per_node: int, fabric: str) -> bool:
        return (nodes, gpus_per_node, fabric) in self.measured_on

    def scaled(self, nodes: int, gpus_per_node: int, fabric: str) -> bool:
        """True where the scaled factor decides: more nodes than measured, up to ``scaled_to_nodes``, same node
        size and fabric."""
        return any(gpus == gpus_per_node and on == fabric and measured < nodes <= self.scaled_to_nodes
                   for measured, gpus, on in self.measured_on)

    def shapes(self) -> str:
        return ", ".join(f"{n} node(s) x {g} GPUs ({f})" for n, g, f in self.measured_on) or "no shape"


@lru_cache(maxsize=1)
def efficiencies() -> tuple[Efficiency, ...]:
    data = data_tables.load(DATA_FILE)
    return tuple(Efficiency(str(r["collective"]), str(r["scope"]), float(r["efficiency"]), r["source"],
                            tuple((int(s["nodes"]), int(s["gpus_per_node"]), str(s["fabric"]))
                                  for s in r.get("measured_on", [])),
                            int((r.get("scaled") or {}).get("to_nodes", 0)),
                            float((r.get("scaled") or {}).get("efficiency", 0.0)),
                            str((r.get("scaled") or {}).get("source", "")))
                 for r in data.get("derivation", []))


def efficiency(collective: str, scope: str) -> Efficiency:
    """The factor for ``collective`` in ``scope`` (intra, inter, nvlink_domain); a ``*`` row covers every scope:
    outside the shapes it was measured on it gives a reference-only floor."""
    for row in efficiencies():
        if row.collective in (collective, "*") and row.scope in (scope, "*"):
            return row
    raise LookupError(f"no derivation row for {collective} ({scope}) in {DATA_FILE.name}")


def gpu_fabric(sku: Sku) -> str:
    """What links the SKU's GPUs, as ``measured_on`` names it: a factor measured on one fabric is not decisive on
    another (another library and topology: RCCL over xGMI, NVLink-bridge pairs)."""
    mesh = profile(sku.gpu.vendor).gpu_mesh
    if mesh is not None:
        return mesh
    if not sku.nvlink.present:
        return "pcie"
    if sku.nvlink.domain_gpus and sku.nvlink.domain_gpus > sku.gpu.count:
        return "nvl72" if sku.nvlink.domain_gpus == 72 else f"nvlink-domain-{sku.nvlink.domain_gpus}"
    return "nvswitch" if sku.nvlink.nvswitch else "nvlink-bridge"


@lru_cache(maxsize=1)
def in_network_reduction() -> dict[str, str]:
    """SKU name -> source, where the InfiniBand fabric reduces in the switch (SHARP, NCCL's CollNet)."""
    data = data_tables.load(DATA_FILE)
    return {str(r["sku"]): str(r["source"]) for r in data.get("in_network_reduction", [])}


@lru_cache(maxsize=1)
def _reduction_unknown() -> dict[str, str]:
    data = data_tables.load(DATA_FILE)
    return {str(r["provider"]): str(r["source"]) for r in data.get("in_network_reduction_unknown", [])}


def reduction_assumption(sku: Sku, collective: str, nodes: int) -> Optional[tuple[str, str]]:
    """Where an all_reduce across nodes rides an InfiniBand fabric whose in-network reduction (SHARP) is not
    published (``in_network_reduction_unknown``): the label's words and the source; None elsewhere (one node,
    one NVLink domain, a SKU with SHARP stated, a provider not listed, no InfiniBand)."""
    if (collective != "all_reduce" or nodes < 2 or in_nvlink_domain(sku, nodes) or sku.infiniband is None
            or sku.name in in_network_reduction()):
        return None
    source = _reduction_unknown().get(sku.provider)
    if source is None:
        return None
    return "assumes no in-network reduction (SHARP not published for this fabric)", source


def gpu_link(sku: Sku, table: FloorTable, upper: bool = False) -> Optional[tuple[float, str]]:
    """One direction of one GPU's link to the others (GB/s) and its source; None when the GPUs are not
    all linked to each other (PCIe only, NVLink pairs: the bottleneck depends on which GPUs talk), unless
    ``upper``: then the GPU's own NVLink rate still bounds what any collective can move per GPU."""
    mesh = profile(sku.gpu.vendor).gpu_mesh is not None  # a vendor's own full mesh (MI300X: xGMI)
    if sku.gpu.count < 2:
        return None  # one GPU has no peer
    if not (sku.nvlink.present or mesh):
        # PCIe-only GPUs: the path depends on the host's PCIe tree; each GPU's own PCIe link still bounds it
        pcie = table.pcie_rate(sku.gpu.model) if upper else None
        if pcie is None:
            return None
        return pcie.gbps / 2, f"{pcie.source}; an upper bound: one direction of each GPU's PCIe link"
    rate = table.nvlink_rate(sku.gpu.model)
    if rate is None:
        return None
    all_linked = sku.nvlink.nvswitch or mesh
    if not all_linked and sku.gpu.count > 2:
        if not upper:
            return None
        return rate.gbps / 2, f"{rate.source}; an upper bound: the GPUs are not all linked ({sku.nvlink.description})"
    return rate.gbps / 2, rate.source


def network(sku: Sku) -> Optional[tuple[float, str]]:
    """The node's network in GB/s and its source: the InfiniBand NICs, else the front-end Ethernet, over which
    NCCL's socket transport runs (NCCL falls back to it where no IB device is found); None where neither is known."""
    ib = sku.infiniband
    if ib is not None:
        return ib.count * ib.gbps / 8, f"SKU catalog {sku.name}: {ib.count} x {ib.gbps} Gb/s {ib.rate}"
    if sku.ethernet_gbps is not None:
        return sku.ethernet_gbps / 8, (f"SKU catalog {sku.name}: front-end Ethernet {sku.ethernet_gbps} Gb/s, no "
                                       "InfiniBand (NCCL's socket transport)")
    return None


def nic_count(sku: Sku) -> int:
    """The node's NICs: the InfiniBand count, else one front-end Ethernet interface."""
    return sku.infiniband.count if sku.infiniband is not None else 1


def nic_path(sku: Sku, table: FloorTable) -> Optional[tuple[float, str]]:
    """One GPU per node: its only path to the NIC is its PCIe link (one direction, GB/s), unambiguous unlike the
    paths between PCIe GPUs of one node."""
    pcie = table.pcie_rate(sku.gpu.model) if sku.gpu.count == 1 else None
    if pcie is None:
        return None
    return pcie.gbps / 2, f"one direction of the GPU's PCIe link to the NIC ({pcie.source})"


def nvlink_domains(sku: Sku, nodes: int) -> int:
    """How many NVLink domains ``nodes`` full nodes span; 0 where the SKU's NVLink ends at the node."""
    domain = int(sku.nvlink.domain_gpus or 0)
    if domain <= sku.gpu.count:
        return 0
    return -(-nodes * sku.gpu.count // domain)


def in_nvlink_domain(sku: Sku, nodes: int) -> bool:
    """Nodes whose GPUs share one NVLink domain (GB200/GB300 NVL72): NCCL's MNNVL moves the data over NVLink,
    not the network, so the network does not bound the run."""
    return nodes > 1 and nvlink_domains(sku, nodes) == 1


def across_nvlink_domains(sku: Sku, nodes: int) -> bool:
    """A run over several NVLink domains (NVL72 racks): inside each the data moves over NVLink (NVLS), between
    them over the network of every GPU of the domain, so the domain, not the node, is the unit the network joins."""
    return nvlink_domains(sku, nodes) > 1


def published_single_node(sku: Sku, table: FloorTable) -> Optional[Floor]:
    """The SKU's published single-node all_reduce floor on every GPU: a healthy node's ring moves at least that
    much busbw, so it bounds the node's own bottleneck from below where its links do not say (NVLink pairs, a
    hybrid cube mesh, PCIe)."""
    return table.floor(sku.name, "all_reduce", 1, sku.gpu.count)


def ring_ceiling(sku: Sku, collective: str, nodes: int, upper: bool = False) -> Optional[tuple[float, str]]:
    """The ring-algorithm ceiling (GB/s busbw) and how it was computed; None when a link is unknown."""
    table = load_floors()
    link = gpu_link(sku, table, upper) or (nic_path(sku, table) if nodes > 1 else None)
    single = published_single_node(sku, table) if link is None and not upper else None
    if link is None and single is not None and (nodes > 1 or collective in RING_FAMILY):
        # the links do not say which path the ring takes; Azure's node check says it carries at least this much
        link = single.gbps, (f"at least the published single-node all_reduce floor, {single.gbps:g} GB/s "
                             f"({single.citation()}): "
                             "the GPUs are not all linked, so the ring's path inside the node is bounded by a healthy "
                             "node's all_reduce, not by a link rate")
    if link is None and upper and nodes > 1 and network(sku) is not None and nvlink_domains(sku, nodes) == 0:
        # whatever path the GPUs take inside the node, every ring channel crosses the node's NICs
        link = float("inf"), "the GPUs' own path (not bounded: PCIe)"
    if link is None:
        return None
    rate, source = link
    if nodes == 1 or in_nvlink_domain(sku, nodes):
        return rate, f"one direction of the GPU link ({source})" + ("" if nodes == 1 else
                                                                     ", across nodes of one NVLink domain (MNNVL)")
    net = network(sku)
    if net is None:
        return None
    width, net_source = net
    gpus, ranks = sku.gpu.count, nodes * sku.gpu.count
    if across_nvlink_domains(sku, nodes):
        # the NVLink domain is the unit the network joins: its width is every GPU's NICs
        domain = int(sku.nvlink.domain_gpus or 0)
        width, gpus, nodes = width * domain / sku.gpu.count, domain, nvlink_domains(sku, nodes)
        net_source = f"{net_source} per {sku.gpu.count} GPUs, {domain} GPUs per NVLink domain"
    if collective in RING_FAMILY:
        crossing, how = width, "the node's network"
    elif collective == "alltoall":
        crossing = width * nodes / (gpus * (nodes - 1)) * (ranks - 1) / ranks
        how = "the node's network x N/(G(N-1)) x (n-1)/n (alltoall sends (N-1)/N of each buffer off the node)"
    elif collective == "sendrecv":
        nics = nic_count(sku)
        crossing = width / nics
        how = ("one NIC (a node boundary is one GPU pair)" if nics > 1 else
               "the node's one NIC (a node boundary is one GPU pair, which has the whole NIC)")
    else:
        return None
    if crossing < rate:
        narrower = f", narrower than the GPUs' path inside the node ({source})" if single is not None else ""
        return crossing, f"{how}: {net_source}{narrower}"
    return rate, f"one direction of the GPU link ({source}), narrower than {how}"


def nvls_possible(sku: Sku) -> tuple[bool, str]:
    """Whether NVLS may run on the SKU, and a note where that is assumed: the catalog's ``nvls: true``, or an
    NVSwitch SKU whose file does not state ``nvls`` (a ceiling must not fall below a healthy run, so an unknown
    feature counts as present; ``nvls: false`` stated, as on A100's NVSwitch, excludes it)."""
    nvlink = sku.nvlink
    if nvlink.nvls:
        return True, ""
    if nvlink.nvswitch and nvlink.nvls is None:
        return True, f"; the catalog does not state NVLS for {sku.name}, so the ceiling assumes it"
    return False, ""


# Bytes that must cross between two NVLink islands, per byte of nccl-tests' size S, and busbw's factor for n ranks:
# all_reduce: S each way (each half needs the other's partial sums), busbw = algbw x 2(n-1)/n; all_gather and
# reduce_scatter: S/2 (the other half's share), busbw = algbw x (n-1)/n; broadcast and reduce: S once (to or from
# the root's half), busbw = algbw; alltoall: S/2 from each GPU of a half, busbw = algbw x (n-1)/n.
_CUT_SHARE = {"all_reduce": 1.0, "all_gather": 0.5, "reduce_scatter": 0.5, "broadcast": 1.0, "reduce": 1.0}


def nvlink_islands_limit(sku: Sku, collective: str, table: FloorTable) -> Optional[tuple[float, str]]:
    """One node of two NVLink-bridged GPU pairs with only PCIe between them (NC96ads_A100_v4): every byte that goes
    from one pair to the other leaves through the PCIe links of the sending pair's GPUs, ``C = (G/2) x P`` per
    direction (``P`` one direction of a GPU's PCIe link), whatever the algorithm; the limit is that cut, per
    collective. sendrecv: NCCL connects a GPU pair over one path (direct, or through one intermediate GPU:
    NVIDIA/nccl src/graph/paths.cc ncclTopoCheckP2p), so the pair that crosses the cut has one GPU's PCIe link, ``P``.
    None where the SKU is not two such pairs or its PCIe rate is unknown."""
    pairs = sku.topology.nvlink_pairs if sku.topology is not None else []
    gpus = {busid for pair in pairs for busid in pair}
    if (sku.nvlink.nvswitch or not sku.nvlink.present or sku.gpu.count != 4 or len(pairs) != 2 or len(gpus) != 4
            or sku.topology is None or gpus != set(sku.topology.gpu_busids())):
        return None
    pcie = table.pcie_rate(sku.gpu.model)
    if pcie is None:
        return None
    n, lane = sku.gpu.count, pcie.gbps / 2
    cut = n / 2 * lane
    where = (f"two NVLink pairs ({sku.nvlink.description}) joined only by PCIe: {n // 2} GPUs' PCIe links per "
             f"direction between the pairs, {n // 2} x {lane:g} GB/s ({pcie.source}, one direction)")
    if collective == "sendrecv":
        return lane, (f"one GPU's PCIe link, {lane:g} GB/s: nccl-tests' sendrecv pairs rank r with r+1, so a pair "
                      f"crosses between the NVLink pairs, over one path (NVIDIA/nccl src/graph/paths.cc "
                      f"ncclTopoCheckP2p: direct or through one intermediate GPU); {where}")
    if collective == "alltoall":
        return cut * (n - 1) / n, f"the cut x (n-1)/n (each GPU sends half its buffer to the other pair); {where}"
    share = _CUT_SHARE.get(collective)
    if share is None:
        return None
    factor = {"all_reduce": 2 * (n - 1) / n, "all_gather": (n - 1) / n, "reduce_scatter": (n - 1) / n}.get(collective, 1.0)
    return cut / share * factor, (f"the cut / {share:g} of the size crossing it x busbw's factor {factor:g}, any "
                                  f"algorithm; {where}")


def limit(sku: Sku, collective: str, nodes: int, ranks: Optional[int] = None,
          algorithm: Optional[str] = None) -> Optional[Bound]:
    """The physical ceiling, NVLS/NVLSTree included where the SKU may have NVLink SHARP (``nvls_possible``;
    ``ranks``: the run's, else every GPU of every node); ``algorithm="Ring"`` (a run pinned with
    NCCL_ALGO=Ring, as the generated jobs' Ring pass) is bound by the ring ceiling."""
    if nodes == 1:
        islands = nvlink_islands_limit(sku, collective, load_floors())
        if islands is not None:
            return Bound(round(islands[0], 1), "derived", "limit (PCIe between NVLink pairs)", islands[1])
    ring = ring_ceiling(sku, collective, nodes, upper=True)
    if ring is None:
        return None
    gbps, how = ring
    link = gpu_link(sku, load_floors())
    ranks = ranks or nodes * sku.gpu.count
    nvls, assumed = nvls_possible(sku)
    if collective == "all_reduce" and nvls and link is not None and algorithm != "Ring":
        in_switch = link[0] * 2 * (ranks - 1) / ranks
        if nodes == 1:
            return Bound(round(in_switch, 1), "derived", "limit with NVLS (reduction in the NVSwitch)",
                         f"one GPU link direction x 2(n-1)/n: NVLS moves the data once each way ({link[1]}){assumed}")
        if in_nvlink_domain(sku, nodes):
            # NVLS spans the NVLink domain (NVIDIA/nccl issue #1286: NVLink SHARP on the NVL72 rack)
            return Bound(round(in_switch, 1), "derived", "limit with NVLS across the NVLink domain (MNNVL)",
                         f"one GPU link direction x 2(n-1)/n: NVLS reduces in the NVLink switches of the domain, "
                         f"each GPU moving the data once each way ({link[1]}){assumed}")
        net = network(sku)
        if net is not None:
            sharp = in_network_reduction().get(sku.name)
            if sharp is not None:
                # the IB switches reduce too: each node sends and receives its data once, like NVLS inside it
                wire = net[0] * 2 * (ranks - 1) / ranks
                return Bound(round(min(in_switch, wire), 1), "derived",
                             "limit with NVLS and SHARP (in-network reduction)",
                             f"min(GPU link, network) x 2(n-1)/n: {net[1]}; {link[1]}; SHARP: {sharp}{assumed}")
            width, units, unit = net[0], nodes, "node"
            if across_nvlink_domains(sku, nodes):
                # NVLS reduces inside each NVLink domain, the tree joins the domains over all their GPUs' NICs
                width, units, unit = (net[0] * int(sku.nvlink.domain_gpus or 0) / sku.gpu.count,
                                      nvlink_domains(sku, nodes), "NVLink domain")
            tree = width * units / (units - 1) * (ranks - 1) / ranks
            label, unknown = f"limit with NVLSTree ({unit}-local reduction first)", reduction_assumption(sku, collective, nodes)
            if unknown is not None:
                label, assumed = f"{label}, {unknown[0]}", f"{assumed}; {unknown[0]}: {unknown[1]}"
            return Bound(round(min(in_switch, tree), 1), "derived", label,
                         f"min(GPU link x 2(n-1)/n, network x N/(N-1) x (n-1)/n, N {unit}s): {net[1]}; "
                         f"{link[1]}{assumed}")
    two_node = two_node_tree(sku, collective, nodes, ranks, algorithm)
    if two_node is not None and two_node[0] > gbps:
        return Bound(round(two_node[0], 1), "derived", "limit with Tree (2 nodes)", two_node[1])
    return Bound(round(gbps, 1), "derived", "limit (ring)", how)


def two_node_tree(sku: Sku, collective: str, nodes: int, ranks: int,
                  algorithm: Optional[str]) -> Optional[tuple[float, str]]:
    """The ceiling of all_reduce with NCCL's Tree on two nodes (GB/s busbw) and how it was computed: each node's
    data crosses the network once each way, so busbw reaches ``min(L, W) x 2(n-1)/n``, past the ring's ``W``
    (NVIDIA/nccl src/graph/tuning.cc @v2.30.7-1 l.306 models the 2-node Tree with the intra-node bandwidth;
    nccl-tests issue #196). None where Tree does not apply (a Ring-pinned run, other node counts, MNNVL)."""
    if (collective != "all_reduce" or nodes != 2 or algorithm == "Ring" or nvlink_domains(sku, nodes)
            or sku.gpu.count < 2):
        return None  # one GPU per node: the tree is the ring
    ring = ring_ceiling(sku, collective, 1, upper=True)
    net = network(sku)
    if net is None:
        return None
    inside, inside_source = ring if ring is not None else (float("inf"), "the GPUs' own path (not bounded: PCIe)")
    width = min(inside, net[0])
    return width * 2 * (ranks - 1) / ranks, (
        f"min(GPU path, network) x 2(n-1)/n: NCCL's Tree on 2 nodes sends each node's data across once each way "
        f"(NVIDIA/nccl src/graph/tuning.cc @v2.30.7-1 l.306; nccl-tests issue #196): {net[1]}; {inside_source}")


def floor(sku: Sku, collective: str, nodes: int, ranks: Optional[int],
          table: Optional[FloorTable] = None, algorithm: Optional[str] = None,
          max_bytes: Optional[int] = None) -> Optional[Bound]:
    """The published floor for exactly this run, else the derived one for a full-node run (``algorithm="Ring"``:
    a run pinned with NCCL_ALGO=Ring, as the generated jobs' Ring pass). Across nodes, a run whose largest
    message (``max_bytes``) stops short of the published floor's size is judged against the derived floor: the
    published one could only leave it inconclusive (Azure's multi-node lines are set at 16G, the jobs stop at 8G)."""
    table = table or load_floors()
    published = table.floor(sku.name, collective, nodes, ranks)
    if published is not None and not (nodes > 1 and max_bytes is not None and max_bytes < published.message_bytes):
        return published_bound(published)
    if ranks is not None and ranks != nodes * sku.gpu.count:
        return None
    scope = "intra" if nodes == 1 else ("nvlink_domain" if nvlink_domains(sku, nodes) else "inter")
    factor = efficiency(collective, scope)
    ring = ring_ceiling(sku, collective, nodes)
    if ring is None:
        return None
    fabric = gpu_fabric(sku)
    scaled = factor.scaled(nodes, sku.gpu.count, fabric)
    used = factor.scaled_efficiency if scaled else factor.efficiency
    gbps = ring[0] * used
    source = f"{ring[1]}; efficiency: {factor.source}"
    if scaled:
        source = f"{source}; at {nodes} nodes: {factor.scaled_source}"
    single = published_single_node(sku, table)
    if nodes == 1 and single is not None and gbps > single.gbps:
        # never ask more of a node than the SKU's own published all_reduce threshold does
        gbps, source = single.gbps, f"{source}; capped at the published single-node all_reduce floor ({single.citation()})"
    decisive = scaled or factor.measured(nodes, sku.gpu.count, fabric)
    if decisive and scope == "nvlink_domain" and algorithm == "Ring":
        # the NVL72 evidence ran NCCL's default (NVLS across the rack); no Ring-pinned rack run is published
        decisive = False
        source = f"{source}; reference only: measured with NCCL's default algorithm, not NCCL_ALGO=Ring"
    elif not decisive:
        source = (f"{source}; reference only: the factor was measured on {factor.shapes()}, "
                  f"not {nodes} node(s) x {sku.gpu.count} GPUs ({fabric})")
    label = f"derived floor: {used:g} x {ring[0]:g} GB/s"
    assumed = reduction_assumption(sku, collective, nodes)
    if assumed is not None:
        label, source = f"{label}, {assumed[0]}", f"{source}; {assumed[0]}: {assumed[1]}"
    return Bound(round(gbps, 1), "derived", label, source, decisive=decisive)


# Why a full-node run has no floor or no limit, the only cases the bounds table leaves empty (tests assert it).
NO_PEER = ("one GPU on the node: a collective has one rank and crosses no link, so no link bounds it from either side; "
           "nccl-tests' busbw factor is 0 for all_reduce, all_gather, reduce_scatter and alltoall (2(n-1)/n or (n-1)/n "
           "at n = 1, NVIDIA/nccl-tests doc/PERFORMANCE.md) and 1 for broadcast, reduce and sendrecv, where it times a "
           "copy inside the one GPU's memory, not a transfer")
NO_NETWORK = ("neither InfiniBand nor the front-end network's rate in the catalog: nothing bounds the run across "
              "nodes")
UNLINKED = ("the GPUs are not all linked (PCIe, NVLink pairs): which path this collective takes inside the node "
            "depends on which GPUs talk, and no published run of this SKU bounds it")
UNLINKED_PAIRS = ("alltoall and sendrecv on one node move data between GPUs with no NVLink between them (the catalog's "
                  "nvlink description: NVLink pairs, a hybrid cube mesh): those pairs cross PCIe and the host, whose "
                  "achievable rate no catalog fact gives (the PCIe and NVLink rates bound them from above only: the "
                  "limit), and the SKU's published single-node all_reduce floor does not bound them from below "
                  "(NCCL searches its all_reduce ring over the NVLink links, nccl-tests' sendrecv pairs rank r with "
                  "r+1, alltoall every pair)")
RETIRED_UNLINKED = (f"{UNLINKED}; and the size is retired (the date and Microsoft's retirement notice are the "
                    "SKU's catalog lifecycle), so none will be; its links give no floor either: its GPUs reach each "
                    "other only over PCIe and the host, and a link rate bounds a path from above, never from below")
NO_BOUND_REASONS = (NO_PEER, NO_NETWORK, UNLINKED, RETIRED_UNLINKED, UNLINKED_PAIRS)


def no_bound_reason(sku: Sku, nodes: int, collective: Optional[str] = None) -> str:
    """Why a full-node run on ``nodes`` nodes of ``sku`` gets no floor (or no limit): one of ``NO_BOUND_REASONS``
    (``collective``: the cell's; alltoall and sendrecv on one node have a reason of their own)."""
    if nodes == 1 and sku.gpu.count < 2:
        return NO_PEER
    if nodes > 1 and network(sku) is None:
        return NO_NETWORK
    # the stated status, not one computed from today's date: the table must not change with the calendar
    if sku.lifecycle is not None and sku.lifecycle.status == "retired":
        return RETIRED_UNLINKED
    if nodes == 1 and collective in ("alltoall", "sendrecv") and published_single_node(sku, load_floors()):
        return UNLINKED_PAIRS
    return UNLINKED


def no_bound_detail(sku: Sku, nodes: int, collective: Optional[str] = None) -> str:
    """``no_bound_reason`` with the SKU's own facts: the retirement date and notice, the GPU links."""
    reason = no_bound_reason(sku, nodes, collective)
    if reason == RETIRED_UNLINKED and sku.lifecycle is not None:
        return (f"{reason}: {sku.name} retired on {sku.lifecycle.date} ({sku.lifecycle.source}); GPUs: "
                f"{sku.nvlink.description or 'no NVLink'}")
    if reason in (UNLINKED, UNLINKED_PAIRS):
        return f"{reason}: {sku.name}: {sku.nvlink.description or 'no NVLink'}"
    return reason


def published_bound(row: Floor) -> Bound:
    return Bound(row.gbps, "published", "published floor", row.citation(), row.message_size)
