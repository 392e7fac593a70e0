"""NCCL topology (``NCCL_TOPO_FILE``) and graph (``NCCL_GRAPH_FILE``) XML rules.

Files are read by ``hpcconf.parsers.nccl_xml``, a position-keeping port of NCCL's own
byte-by-byte reader (``src/graph/xml.cc``), at the NCCL version given by ``--nccl-version``.
NCCL026/027 compare the file with the catalog's facts for the target VM size: ``--sku``, else the size whose
PCI layout the file shows (``LintContext.sku_for_topology``).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, Iterator, Optional

from ...artifacts import Kind
from ...diagnostics import Diagnostic, Severity
from ...parsers.nccl_xml import XmlDocument, XmlElement
from ...rules_registry import rule
from ..context import LintContext
from ..document import Document

if TYPE_CHECKING:
    from ...catalog import Sku

XML_KINDS = (Kind.NCCL_TOPOLOGY, Kind.NCCL_GRAPH)


def _judged_sku(tree: XmlDocument, ctx: LintContext) -> "tuple[Sku | None, str]":
    """The SKU a topology file is judged against and the words that say where it came from: ``--sku``
    (nothing to say), else the size the file's own PCI layout identifies (``LintContext.sku_for_topology``:
    its GPU and NIC bus ids and ``<cpu>`` model match exactly one NUMA layout of the catalog)."""
    gpus = frozenset((p.get("busid") or "").lower() for p in tree.iter("pci")
                     if (p.get("class") or "").startswith("0x03"))
    nics = frozenset((p.get("busid") or "").lower() for p in tree.iter("pci")
                     if (p.get("class") or "").startswith("0x02"))
    cpus = list(tree.iter("cpu"))
    cpu = {key: value for key in ("vendor", "familyid", "modelid")
           if cpus and (value := cpus[0].get(key)) is not None}
    sku, names = ctx.sku_for_topology(gpus - {""}, nics - {""}, cpu)
    if sku is None or ctx.sku is not None:
        return sku, ""
    return sku, (f" (the SKU is inferred from the file: its {len(gpus)} GPU and {len(nics)} NIC bus ids and CPU "
                 f"are the layout of {' and '.join(names)}; --sku decides)")


def _tree(doc: Document, ctx: LintContext) -> XmlDocument:
    return doc.nccl_xml(ctx.nccl_version)


def _accepted(doc: Document, ctx: LintContext) -> Optional[XmlDocument]:
    """The parsed tree when NCCL accepts the file; None when it rejects it (NCCL020 says why)."""
    tree = _tree(doc, ctx)
    return None if tree.fatal else tree


def _problem_findings(doc: Document, ctx: LintContext, kinds: set[str], fatal: bool | None = None,
                      severity: Severity | None = None) -> Iterator[Diagnostic]:
    for problem in _tree(doc, ctx).problems:
        if problem.kind in kinds and (fatal is None or problem.fatal == fatal):
            yield doc.at_line(problem.line, problem.message, hint=problem.hint, column=problem.column,
                              severity=severity)


@rule(code="NCCL020", name="nccl-xml-rejected", severity=Severity.ERROR, kinds=XML_KINDS)
def xml_rejected(doc: Document, ctx: LintContext) -> Iterator[Diagnostic]:
    """NCCL's XML reader rejects this topology/graph file: every NCCL init on the node fails.

    ## What it catches
    What ``xml.cc`` refuses: an ``<?xml ...?>`` prolog or ``<!DOCTYPE>``, tabs between or inside
    tags, attributes split over lines, single quotes before NCCL 2.27, unclosed or mismatched
    elements, text between tags, ``version`` other than ``"1"`` (in RCCL's topology file, whose GPUs carry
    ``gcn=``: other than ``"2"``), names or values over 253 characters.

    ## Why is this bad?
    NCCL has no XML library; its reader is strict and the failure is fatal for a topology or graph
    file it was told to use. NCCL 2.28.9 (measured on 2 x H200) failed init with a
    prolog, with tab indentation and with ``version="2"``. Editors and generators add prologs and
    tabs without asking. RCCL reads the same format at topology version 2 and refuses 1 (ROCm/rccl
    ``src/graph/xml.h`` ``NCCL_TOPO_XML_VERSION 2``, since 2020; its graph files stay at 1).

    ## Example
    ```xml
    <?xml version="1.0"?>
    <system version="1">
    	<cpu numaid="0" arch="x86_64" vendor="AuthenticAMD"/>
    </system>
    ```

    ## Fix
    No prolog, spaces only, one line per start tag, double quotes, ``<system version="1">``.
    """
    tree = _tree(doc, ctx)
    for problem in tree.fatal:
        yield doc.at_line(problem.line, f"NCCL {ctx.nccl_version} rejects this file: {problem.message}",
                          hint=problem.hint, column=problem.column)


@rule(code="NCCL021", name="nccl-xml-ignored-content", severity=Severity.WARNING, kinds=XML_KINDS)
def ignored_content(doc: Document, ctx: LintContext) -> Iterator[Diagnostic]:
    """An element or attribute NCCL does not know, which it skips without an error.

    ## What it catches
    Elements in a place NCCL's loader has no handler for (skipped with their whole subtree) and
    attributes NCCL never reads, e.g. a misspelt ``<pcie>`` or ``numa_id=``.

    ## Why is this bad?
    NCCL only logs "Ignoring element" at INFO level (NCCL 2.28.9 on 2 x H200: a file with an unknown
    element ran at full speed). A typo therefore deletes part of the topology without a word: GPUs or NICs under
    a misspelt element are not described, and NCCL falls back to detection for them. RCCL's topology files
    (their GPUs carry ``gcn=``) are read by RCCL, whose reader knows more (``<xgmi>``, ``gcn``, ``arch``):
    hpcconf holds NCCL's tables only, so it judges none of their elements or attributes.

    ## Example
    ```xml
    <system version="1">
      <cpu numa_id="0" arch="x86_64" vendor="AuthenticAMD">
        <pcie busid="0001:00:00.0" class="0x030200" link_speed="16.0 GT/s PCIe" link_width="16"/>
      </cpu>
    </system>
    ```

    ## Fix
    Use the element and attribute names NVIDIA/nccl ``src/graph/xml.cc`` reads (``numaid``, ``<pci>``).
    """
    yield from _problem_findings(doc, ctx, {"unknown-element", "unknown-attribute"}, fatal=False)


@rule(code="NCCL022", name="nccl-xml-misread", severity=Severity.WARNING, kinds=XML_KINDS)
def xml_misread(doc: Document, ctx: LintContext) -> Iterator[Diagnostic]:
    """NCCL reads part of this XML differently from how it looks (slots, entities, quotes).

    ## What it catches
    Double spaces between attributes (each makes an empty attribute that uses one of the 16
    slots), attributes beyond the 16th (dropped), ``&amp;``-style entities (kept verbatim), and
    single-quoted values (rejected before NCCL 2.27, when the target version accepts them).

    ## Why is this bad?
    ``xml.cc`` stores at most 16 attributes per element and decodes nothing: a dropped
    ``rank`` or ``busid`` removes a GPU or makes the file fail later, only on some nodes or
    versions.

    ## Example
    ```xml
    <gpu dev="0"  sm="80" rank="0" gdr="1"/>
    ```

    ## Fix
    Exactly one space between attributes, at most 16 of them, plain characters, double quotes.
    """
    yield from _problem_findings(doc, ctx, {"empty-attribute", "too-many-attributes", "entity", "quote"},
                                 fatal=False)


@rule(code="NCCL023", name="nccl-topo-pci-link-unknown", severity=Severity.WARNING, kinds=(Kind.NCCL_TOPOLOGY,))
def pci_link_unknown(doc: Document, ctx: LintContext) -> Iterator[Diagnostic]:
    """A ``<pci>`` ``link_speed`` NCCL does not recognise (silently 6 Gb/s per lane), or ``link_width="0"``.

    ## What it catches
    ``link_speed`` values that do not start with one of NCCL's strings ("2.5 GT/s" ... "32 GT/s",
    "16.0 GT/s PCIe", "32.0 GT/s PCIe", "64.0 GT/s PCIe"), ``""`` included, and ``link_width="0"``.

    ## Why is this bad?
    ``topo.cc`` maps unknown speeds to its lowest bandwidth without a warning. Azure's
    ``ncv4-topo.xml`` has ``link_speed=""`` and ``link_width="0"``: 16 lanes x 6 Gb/s = 12 GB/s,
    which is exactly the ``speedintra="12"`` that ``ncv4-graph.xml`` then fixes for every channel
    (Azure/azhpc-images ``topology/ncv4-graph.xml``). NCCL then plans rings and trees for a PCIe link less than half as fast
    as the Gen4 x16 link (16 lanes x 16 GT/s) the A100 really has.

    ## Example
    ```xml
    <pci busid="0001:00:00.0" class="0x030200" link_speed="" link_width="0">
    ```

    ## Fix
    Write the real link: ``link_speed="16.0 GT/s PCIe" link_width="16"`` (A100/H100 PCIe Gen4/5).
    """
    yield from _problem_findings(doc, ctx, {"link-speed", "link-width"}, fatal=False)


@rule(code="NCCL024", name="nccl-xml-missing-attribute", severity=Severity.ERROR, kinds=XML_KINDS)
def missing_attribute(doc: Document, ctx: LintContext) -> Iterator[Diagnostic]:
    """An element lacks an attribute NCCL needs and cannot fill itself (fatal), or one whose absence drops it.

    ## What it catches
    NCCL completes a topology file from the machine: for each local GPU and NIC,
    ``ncclTopoGetXmlFromSys`` (``src/graph/xml.cc``) fills a missing ``class``, ``vendor``, ``device``,
    ``link_speed`` and ``link_width`` of its ``<pci busid>`` and of every ``<pci>`` above it from
    sysfs/NVML, and ``ncclTopoGetXmlFromCpu`` the ``<cpu>``'s ``affinity``, ``arch``, ``vendor``,
    ``familyid`` and ``modelid``; ``ncclTopoTrimXml`` then drops every branch with no local GPU or NIC.
    So a bare ``<pci busid="0000:00:16.0"/>`` (aws-ofi-nccl's ``g5.48xl-topo.xml``) is complete. What is
    not filled, and reported here: a branch kept because its ``<net name>`` matches a local NIC
    (``ncclTopoFillNet`` keeps that node as written and fills nothing above it) lacking ``busid``,
    ``class`` or ``link_*`` on its ``<pci>`` or ``arch``/``vendor`` on its ``<cpu>``; a ``<cpu>`` without
    ``numaid``; a ``<pci>`` holding devices without ``busid``; ``count``/``tclass`` on ``<nvlink>``, and
    ``target`` on one to a GPU (``tclass`` ``0x03...``; an NVSwitch link needs none); graph attributes (``nchannels``, ``typeintra``...) and ``<gpu dev>`` in graph
    channels. A ``<gpu>`` without ``rank`` or a ``<net>`` without ``dev`` is dropped silently (warning).

    ## Why is this bad?
    ``topo.cc``/``search.cc`` read these with ``xmlGetAttrStr``/``xmlGetAttrInt`` and fail the init
    when they are absent ("Attribute X of node Y not found"); the silent cases leave a GPU or NIC out of
    the topology NCCL plans with.

    ## Example
    ```xml
    <pci busid="0101:00:00.0" class="0x020700">
      <nic><net name="mlx5_ib0" dev="0"/></nic>
    </pci>
    ```

    ## Fix
    Add the attribute named in the message (here ``link_speed`` and ``link_width``), or drop the
    ``<net>`` element and let NCCL detect the NIC.
    """
    from ...parsers.nccl_xml import required_attribute_problems

    tree = _tree(doc, ctx)
    if tree.fatal:
        return  # NCCL020 already says why NCCL stops; the tree is incomplete
    for missing in required_attribute_problems(tree):
        yield doc.at_element(missing.element, missing.message, hint=f'add {missing.attribute}="..."',
                             severity=None if missing.fatal else Severity.WARNING)


@rule(code="NCCL025", name="nccl-topo-self-nvlink", severity=Severity.WARNING, kinds=(Kind.NCCL_TOPOLOGY,))
def self_nvlink(doc: Document, ctx: LintContext) -> Iterator[Diagnostic]:
    """A ``<gpu>``'s ``<nvlink>`` points at the GPU itself, which hides the real NVLink from NCCL.

    ## What it catches
    ``<nvlink target=...>`` equal to the enclosing GPU's own bus id (Azure's ``ncv4-topo.xml``
    since commit 4be0efb7, 2024-02).

    ## Why is this bad?
    Any ``<nvlink>`` child switches off NVML NVLink discovery for that GPU (``xml.cc`` asks NVML
    only when the GPU has no ``<nvlink>``). A self-pointing one leaves NCCL with no GPU-to-GPU
    NVLink at all: an NVLink pair measured 24.3 GB/s over SHM instead of 326 GB/s (NCCL 2.28.9,
    2 x H200). The pre-2024 file with pair targets was right for NC A100 v4.

    ## Example
    ```xml
    <pci busid="0001:00:00.0" class="0x030200" link_speed="16.0 GT/s PCIe" link_width="16">
      <gpu dev="0" sm="80" rank="0" gdr="1">
        <nvlink target="0001:00:00.0" count="12" tclass="0x030200"/>
      </gpu>
    </pci>
    ```

    ## Fix
    Delete the ``<nvlink>`` children (NCCL then asks NVML), or aim each at the peer GPU's bus id.
    """
    from ...parsers.nccl_xml import self_nvlink_targets

    tree = _accepted(doc, ctx)
    if tree is None:
        return
    for link in self_nvlink_targets(tree):
        yield doc.at_element(link, f"<nvlink> of GPU {link.get('target')} targets the GPU itself: NCCL stops "
                                   f"asking NVML and sees no NVLink to any other GPU",
                             hint="delete the <nvlink> children, or set target to the peer GPU's busid",
                             attribute="target")


def _cpu_set(affinity: str) -> set[int]:
    """CPUs in a kernel cpumask string ("00ffffff,ff000000": 32-bit groups, most significant first)."""
    bits = int(affinity.replace(",", "") or "0", 16)
    return {i for i in range(bits.bit_length()) if bits >> i & 1}


@rule(code="NCCL026", name="nccl-topo-cpu-affinity-wrong", severity=Severity.WARNING, kinds=(Kind.NCCL_TOPOLOGY,))
def cpu_affinity_wrong(doc: Document, ctx: LintContext) -> Iterator[Diagnostic]:
    """``<cpu>`` affinity masks that overlap, or differ from the SKU's NUMA cores.

    ## What it catches
    ``affinity`` masks of different ``<cpu numaid>`` elements that share cores, or (with
    ``--sku``, or the SKU the file's PCI layout identifies, as NCCL027 infers it) a mask that differs
    from the SKU's NUMA node cores.

    ## Why is this bad?
    NCCL pins its proxy and network threads to the ``affinity`` of the GPU's NUMA node. Identical
    masks put every GPU's helper threads on the same cores, one NUMA node away from half the GPUs
    and NICs. Azure fixed exactly this in its ndv2/ndv4 files (all ``0000ffff,0000ffff`` until
    2025-01, commit 4a4565a0) and swapped ndv5 masks (992d7759); the ndv4 file copied into the NCCL test
    image of jingchaozhang.github.io's NDm A100 v4 AKS walkthrough (2023) still has the bad masks.

    ## Example
    ```xml
    <cpu numaid="0" affinity="0000ffff,0000ffff" arch="x86_64" vendor="AuthenticAMD">
    <cpu numaid="1" affinity="0000ffff,0000ffff" arch="x86_64" vendor="AuthenticAMD">
    ```

    ## Fix
    Give each NUMA node its own cores (ND96asr_v4: 0-23, 24-47, 48-71, 72-95), or regenerate the
    file with ``hpcconf build`` for the SKU.
    """
    tree = _accepted(doc, ctx)
    if tree is None:
        return
    seen: list[tuple[XmlElement, set[int]]] = []
    sku, inferred = _judged_sku(tree, ctx)
    sku_numa = {n.id: set(n.cpu_set()) for n in getattr(sku, "numa", []) or []} if sku is not None else {}
    for cpu in tree.iter("cpu"):
        affinity = cpu.get("affinity")
        if not affinity:
            continue
        try:
            cores = _cpu_set(affinity)
        except ValueError:
            yield doc.at_element(cpu, f"affinity {affinity!r} is not a hex cpumask", attribute="affinity",
                                 hint="write 32-bit hex groups separated by commas, e.g. 00000000,00ffffff")
            continue
        for other, other_cores in seen:
            shared = cores & other_cores
            if shared:
                yield doc.at_element(cpu, f"<cpu numaid={cpu.get('numaid')}> affinity shares {len(shared)} cores "
                                          f"with <cpu numaid={other.get('numaid')}> on line {other.line}",
                                     attribute="affinity", hint="give each NUMA node its own cores")
                break
        else:
            numaid = cpu.get("numaid")
            if sku is not None and numaid is not None and numaid.isdigit() and int(numaid) in sku_numa \
                    and sku_numa[int(numaid)] != cores:
                yield doc.at_element(cpu, f"affinity of NUMA node {numaid} does not match {sku.name}'s cores "
                                          f"for that node{inferred}", attribute="affinity",
                                     hint=f"use {sku.affinity_mask(int(numaid))}")
        seen.append((cpu, cores))


@rule(code="NCCL027", name="nccl-topo-sku-mismatch", severity=Severity.WARNING, kinds=(Kind.NCCL_TOPOLOGY,))
def topo_sku_mismatch(doc: Document, ctx: LintContext) -> Iterator[Diagnostic]:
    """The topology file does not describe the target VM size (``--sku``, or the size its layout shows).

    ## What it catches
    A topology file for a SKU that should run without one (NC24/NC48ads_A100_v4, NC H100 v5,
    GB200), GPU bus ids the SKU does not have, SKU GPUs missing from the file, and GPUs placed
    under another NUMA node than the SKU attaches them to, or NICs (one finding per GPU, naming the NIC
    beside it under the same bridge).
    Without ``--sku``, a file whose GPU and NIC bus ids and CPU model are exactly one catalog layout is
    judged against it, and the finding says the SKU was inferred (ND H100 v5 and ND H200 v5 share one
    layout); a file that fits no layout, or several that differ, is not judged.

    ## Why is this bad?
    NCCL trusts the file: GPUs are matched by bus id, and unmatched entries are dropped while the
    real GPUs fall back to detection, so NUMA placement, NVLink and NIC pairing come from two
    sources at once. Azure's ncv4 file on NC48ads (2 GPUs, one NVLink bridge) hides the bridge
    (see NCCL025); Crusoe's hypervisor remaps PCI addresses, so Azure files never fit there.
    Azure's own ndv4 file had GPUs 0001/0002 under the wrong NUMA node until commit c3e42913
    (2023-09, "numa domains swapped"); jingchaozhang.github.io's NDm A100 v4 AKS
    walkthrough (2023) ships that version in its NCCL test image.

    ## Example
    ```text
    hpcconf lint --sku NC48ads_A100_v4 ncv4-topo.xml
    ```

    ## Fix
    Use the file made for the SKU (``hpcconf build`` writes one), or no file for SKUs where
    NCCL's own detection is right.
    """
    tree = _accepted(doc, ctx)
    root = tree.root if tree is not None else None
    if tree is None or root is None:
        return
    sku, inferred = _judged_sku(tree, ctx)
    if sku is None:
        return
    topology = getattr(sku, "topology", None)
    vendor_file = getattr(getattr(sku, "nccl", None), "vendor_topo_file", None)
    if topology is None:
        if vendor_file:
            yield doc.at_element(root, f"{sku.name} uses its provider's own topology file ({vendor_file}); "
                                       f"this file is not it", hint=f"set NCCL_TOPO_FILE={vendor_file}")
        else:
            yield doc.at_element(root, f"{sku.name} needs no topology file: NCCL's own detection is right "
                                       f"there, and a file can only hide links", hint="do not set NCCL_TOPO_FILE "
                                       "on this VM size")
        return
    expected = [b.lower() for b in topology.gpu_busids()]
    found = {}
    for gpu_pci in tree.iter("pci"):
        if (gpu_pci.get("class") or "").startswith("0x03"):
            found[(gpu_pci.get("busid") or "").lower()] = gpu_pci
    for busid, element in found.items():
        if busid not in expected:
            yield doc.at_element(element, f"GPU bus id {busid} is not one of {sku.name}'s "
                                          f"({', '.join(expected)})", attribute="busid",
                                 hint="use the topology file made for this SKU")
    missing = [b for b in expected if b not in found]
    if missing and found:
        yield doc.at_element(root, f"{sku.name} GPUs {', '.join(missing)} are not in this file",
                             hint="use the topology file made for this SKU")
    numa_of = {busid.lower(): node.numaid for node in topology.numa for busid in node.gpus}
    nic_numa = {busid.lower(): node.numaid for node in topology.numa for busid in node.hcas}
    nics = {(p.get("busid") or "").lower(): p for p in tree.iter("pci") if (p.get("class") or "").startswith("0x02")}
    misplaced: list[tuple[str, str, XmlElement, str, int]] = []  # (what, busid, element, written, right)
    for what, placed, expected_numa in (("GPU", found, numa_of), ("NIC", nics, nic_numa)):
        for busid, element in placed.items():
            cpu = _enclosing(element, "cpu")
            written = cpu.get("numaid") if cpu is not None else None
            if busid in expected_numa and written is not None and written.isdigit() \
                    and int(written) != expected_numa[busid]:
                misplaced.append((what, busid, element, written, expected_numa[busid]))
    told: set[str] = set()  # NICs named with the GPU beside them (one bridge, one move)
    for what, busid, element, written, right in misplaced:
        if what == "GPU":
            beside = [b for w, b, e, wr, r in misplaced if w == "NIC" and b not in told and e.parent is element.parent
                      and element.parent is not None and element.parent.name == "pci" and (wr, r) == (written, right)]
            told.update(beside)
            named = f"GPU {busid}" + (f" (and NIC {', '.join(beside)} beside it)" if beside else "")
        elif busid in told:
            continue
        else:
            named = f"NIC {busid}"
        yield doc.at_element(element, f"{named} is under NUMA node {written}, but on {sku.name} it is attached to "
                                      f"NUMA node {right}{inferred}", attribute="busid",
                             hint="move it under the right <cpu numaid>, or regenerate the file for this SKU")


def _enclosing(element: XmlElement, name: str) -> XmlElement | None:
    node = element.parent
    while node is not None and node.name != name:
        node = node.parent
    return node


@rule(code="NCCL028", name="nccl-graph-gpu-missing", severity=Severity.ERROR, kinds=(Kind.NCCL_GRAPH,))
def graph_gpu_missing(doc: Document, ctx: LintContext) -> Iterator[Diagnostic]:
    """A graph file names GPU devices the VM does not have: NCCL init fails (needs ``--sku``).

    ## What it catches
    ``<gpu dev="N">`` in a graph channel with N at or above the SKU's GPU count (``dev`` is hex
    from NCCL 2.21, decimal before), e.g. Azure's 4-GPU ``ncv4-graph.xml`` on NC48ads_A100_v4.

    ## Why is this bad?
    ``search.cc`` looks every channel GPU up and fails with ``XML Import Channel : dev 2 not
    found`` (measured with NCCL 2.28.9 on 2 x H200). Where it does load, a graph written for
    another size fixes the channel count: 57.5 GB/s instead of 225 GB/s was measured on
    NC48ads with the NC96 graph (jingchaozhang.github.io, "Azure NCCL Test on NCv4", 2023).

    ## Example
    ```xml
    <graphs version="1">
      <graph id="0" pattern="4" crossnic="0" nchannels="2" speedintra="12" speedinter="12" typeintra="SYS" typeinter="PIX" samechannels="0">
        <channel><gpu dev="0"/><gpu dev="1"/><gpu dev="2"/><gpu dev="3"/></channel>
      </graph>
    </graphs>
    ```

    ## Fix
    Do not set ``NCCL_GRAPH_FILE`` on this VM size; NCCL's own search is faster on NVLink pairs.
    """
    if ctx.gpu_count is None:
        return
    from ...parsers.nccl_xml import graph_gpu_devs

    tree = _accepted(doc, ctx)
    if tree is None:
        return
    uses: dict[int, list[Any]] = {}
    for gpu, dev in graph_gpu_devs(tree):
        if gpu.get("rank") is None and dev >= ctx.gpu_count:
            uses.setdefault(dev, []).append(gpu)
    for dev, gpus in sorted(uses.items()):  # one finding per missing device, at its first use
        more = f" (and {len(gpus) - 1} more times)" if len(gpus) > 1 else ""
        yield doc.at_element(gpus[0], f"graph uses GPU dev {dev}{more}, but {ctx.sku_name} has {ctx.gpu_count} "
                                      f"GPUs: NCCL fails with 'XML Import Channel : dev {dev} not found'",
                             attribute="dev", hint="do not use this graph file on this VM size")
