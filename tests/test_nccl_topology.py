"""NCCL topology/graph XML generated from the SKU catalog, checked against Azure's files
(../shared/upstream/nccl/azhpc-images) and against the rules of NCCL's hand-written parser."""

from __future__ import annotations

import re

import pytest
from conftest import shared_path
from lxml import etree

from hpcconf.catalog import NCCL_PCI_LINK_SPEEDS, Catalog, cpumask_groups
from hpcconf.resolve.nccl_topology import ring_channels, tree_channels
from hpcconf.resolve.sku import resolve_sku
from hpcconf.targets.nccl_topology import render_graph_xml, render_nccl_files, render_topology_xml

AZURE_TOPO = {
    "Standard_ND96asr_v4": "ndv4-topo.xml",
    "Standard_ND96amsr_A100_v4": "ndv4-topo.xml",
    "Standard_ND96isr_H100_v5": "ndv5-topo.xml",
    "Standard_ND96isr_H200_v5": "ndv5-topo.xml",
    "Standard_ND40rs_v2": "ndv2-topo.xml",
}


@pytest.fixture(scope="module")
def catalog() -> Catalog:
    return Catalog.load()


def azure_file(*parts: str) -> etree._Element:
    return parse(shared_path("upstream", "nccl", "azhpc-images", *parts).read_text())


def parse(text: str) -> etree._Element:
    return etree.fromstring(text.encode())


def elements(root: etree._Element):
    return [el for el in root.iter() if isinstance(el.tag, str)]


def canonical(el: etree._Element, ordered: bool = False):
    """(tag, attributes, children); children as a sorted tuple unless their order matters."""
    kids = [canonical(child, ordered) for child in el if isinstance(child.tag, str)]
    return (el.tag, tuple(sorted(el.attrib.items())), tuple(kids) if ordered else tuple(sorted(kids)))


# --------------------------------------------------------------------------- NCCL parser rules

REQUIRED = {  # research nccl.md §5
    "system": {"version"},
    "cpu": {"numaid", "arch"},
    "pci": {"busid", "class", "link_speed", "link_width"},
    "gpu": {"dev", "sm", "rank", "gdr"},
    "net": {"dev"},
    "nvlink": {"count", "tclass"},
    "graphs": {"version"},
    "graph": {"id", "crossnic", "pattern", "nchannels", "speedintra", "speedinter", "typeintra",
              "typeinter", "samechannels"},
}
PARENTS = {"system": {None}, "cpu": {"system"}, "pci": {"cpu", "pci"}, "nic": {"cpu", "pci"},
           "net": {"nic"}, "gpu": {"pci", "channel"}, "nvlink": {"gpu"}, "graphs": {None},
           "graph": {"graphs"}, "channel": {"graph"}}
TAG_LINE = re.compile(r'^(?P<indent> *)(<(?P<close>/)?(?P<name>[a-z]+)(?P<attrs>( [a-z_]+="[^"<>]*")*)(?P<self>/)?>'
                      r'|<!--(?P<comment>.*)-->)$')
ATTR = re.compile(r' ([a-z_]+)="([^"]*)"')


def nccl_parser_violations(text: str) -> list[str]:
    """What NCCL's xml.cc would reject or silently misread in ``text`` (one entry per problem)."""
    problems = []
    if "\t" in text:
        problems.append("tab character (NCCL: expecting '<')")
    if text.lstrip().startswith("<?") or "<!DOCTYPE" in text:
        problems.append("XML prolog / DOCTYPE (NCCL: expected >, got '?')")
    depth = 0
    stack: list[str] = []
    for number, line in enumerate(text.splitlines(), 1):
        match = TAG_LINE.match(line)
        if not match:
            problems.append(f"line {number}: not exactly one element: {line!r}")
            continue
        if match["comment"] is not None:
            if "--" in match["comment"]:
                problems.append(f"line {number}: '--' inside a comment")
            continue
        indent = len(match["indent"])
        if match["close"]:
            depth -= 1
            if not stack or stack.pop() != match["name"]:
                problems.append(f"line {number}: unbalanced </{match['name']}>")
        if indent != 2 * depth:
            problems.append(f"line {number}: indent {indent}, expected {2 * depth}")
        if match["close"]:
            continue
        name = match["name"]
        attrs = dict(ATTR.findall(match["attrs"]))
        parent = stack[-1] if stack else None
        if parent not in PARENTS.get(name, {parent}):
            problems.append(f"line {number}: <{name}> under <{parent}>")
        required = {"dev"} if (parent, name) == ("channel", "gpu") else REQUIRED.get(name, set())
        missing = required - set(attrs)
        if missing:
            problems.append(f"line {number}: <{name}> lacks {sorted(missing)}")
        if len(attrs) > 16 or any(len(v) > 255 for v in attrs.values()):
            problems.append(f"line {number}: more than 16 attributes or a value over 255 chars")
        if name in ("system", "graphs") and attrs.get("version") != "1":
            problems.append(f"line {number}: <{name}> version must be \"1\"")
        if name == "pci":
            if attrs.get("link_speed") not in NCCL_PCI_LINK_SPEEDS:
                problems.append(f"line {number}: link_speed {attrs.get('link_speed')!r} is not one NCCL "
                                f"recognises (silently 6 Gb/s per lane)")
            if not re.fullmatch(r"[0-9a-f]{4}:[0-9a-f]{2}:[0-9a-f]{2}\.[0-7]", attrs.get("busid", "")):
                problems.append(f"line {number}: busid {attrs.get('busid')!r} is not lower-case dddd:bb:dd.f")
        if name == "cpu" and attrs.get("vendor") == "GenuineIntel" and not {"familyid", "modelid"} <= set(attrs):
            problems.append(f"line {number}: Intel <cpu> lacks familyid/modelid")
        if not match["self"]:
            stack.append(name)
            depth += 1
    if stack:
        problems.append(f"unclosed elements {stack}")
    return problems


def all_rendered(catalog: Catalog):
    for sku in catalog:
        for name, text in render_nccl_files(resolve_sku(sku)).items():
            yield sku.name, name, text


def test_every_rendered_file_passes_nccl_parser_rules(catalog):
    rendered = list(all_rendered(catalog))
    assert len(rendered) >= 6  # ndv2, ndv4 x2, ndv5 x2, ncv4 topo + graph
    for sku, name, text in rendered:
        assert nccl_parser_violations(text) == [], (sku, name)
        assert text.endswith("</system>\n") or text.endswith("</graphs>\n")
        assert text.startswith("<!-- generated by hpcconf"), "first line names the generator"


def test_parser_rule_check_rejects_what_nccl_rejects(shared_dir):
    """The checker above is not vacuous: it flags the faults NCCL trips over."""
    good = (shared_dir / "upstream/nccl/azhpc-images/topology/ndv4-topo.xml").read_text()
    assert nccl_parser_violations(good) == []
    assert nccl_parser_violations('<?xml version="1.0"?>\n' + good)
    assert nccl_parser_violations(good.replace("  <cpu", "\t<cpu", 1))
    assert nccl_parser_violations(good.replace('version="1"', 'version="2"'))
    assert nccl_parser_violations(good.replace(' link_width="16"', "", 1))
    ncv4 = (shared_dir / "upstream/nccl/azhpc-images/topology/ncv4-topo.xml").read_text()
    assert any("link_speed ''" in p for p in nccl_parser_violations(ncv4))


def test_output_is_deterministic(catalog):
    first = list(all_rendered(catalog))
    assert first == list(all_rendered(Catalog.load()))


# --------------------------------------------------------------------------- equivalence with Azure

@pytest.mark.parametrize("sku_name, azure", sorted(AZURE_TOPO.items()))
def test_topology_matches_azure(catalog, sku_name, azure):
    ours = parse(render_topology_xml(resolve_sku(catalog.get(sku_name))))
    theirs = azure_file("topology", azure)
    # NCCL keys devices by bus id, so sibling order is irrelevant; nesting and attributes are not.
    assert canonical(ours) == canonical(theirs)


@pytest.mark.parametrize("sku_name, azure", sorted(AZURE_TOPO.items()))
def test_affinity_masks_are_computed_equal_to_azure(catalog, sku_name, azure):
    sku = catalog.get(sku_name)
    theirs = {int(cpu.get("numaid")): cpu.get("affinity") for cpu in azure_file("topology", azure).iter("cpu")}
    ours = {node.id: cpumask_groups(node.cpu_set(), sku.vcpus) for node in sku.numa}
    assert ours == theirs


def _ncv4_as_fixed(root: etree._Element) -> etree._Element:
    """Azure's ncv4-topo.xml with hpcconf's two documented fixes applied."""
    for nvlink in list(root.iter("nvlink")):
        nvlink.getparent().remove(nvlink)
    for pci in root.iter("pci"):
        assert (pci.get("link_speed"), pci.get("link_width")) == ("", "0")
        pci.set("link_speed", "16 GT/s")
        pci.set("link_width", "16")
    return root


def test_nc96ads_topology_is_azure_ncv4_with_documented_fixes(catalog):
    ours = parse(render_topology_xml(resolve_sku(catalog.get("NC96ads_A100_v4"))))
    theirs = azure_file("topology", "ncv4-topo.xml")
    # Azure's file aims every GPU's <nvlink> at the GPU itself (hides the NV12 bridges from NCCL)
    assert [n.get("target") for n in theirs.iter("nvlink")] == [g.getparent().getparent().get("busid")
                                                                for g in theirs.iter("nvlink")]
    assert list(ours.iter("nvlink")) == []
    assert {p.get("link_speed") for p in ours.iter("pci")} == {"16 GT/s"}
    assert canonical(ours) == canonical(_ncv4_as_fixed(theirs))


def test_nc96ads_graph_matches_azure_ncv4_graph(catalog):
    ours = parse(render_graph_xml(resolve_sku(catalog.get("NC96ads_A100_v4"))))
    theirs = azure_file("topology", "ncv4-graph.xml")
    # channel order and GPU order inside a channel are the ring/tree order: compare ordered
    assert canonical(ours, ordered=True) == canonical(theirs, ordered=True)


def test_graph_channels_are_computed_from_the_gpu_list(catalog):
    topo = catalog.get("NC96ads_A100_v4").topology
    gpus = set(topo.gpu_busids())
    for channel in ring_channels(topo) + tree_channels(topo):
        assert sorted(channel) == sorted(gpus)  # every channel visits every GPU once
    for ring in ring_channels(topo):
        neighbours = {frozenset((ring[i], ring[(i + 1) % len(ring)])) for i in range(len(ring))}
        assert all(frozenset(pair) in neighbours for pair in topo.nvlink_pairs)
    # a 2-GPU variant gets channels over its own 2 GPUs only (no "dev 2 not found")
    two = topo.model_copy(update={"numa": topo.numa[:2], "nvlink_pairs": topo.nvlink_pairs[:1]})
    assert {len(c) for c in ring_channels(two) + tree_channels(two)} == {2}


def test_graph_devices_exist_in_the_skus_topology(catalog):
    for sku in catalog:
        graph = render_graph_xml(resolve_sku(sku))
        if graph is None:
            continue
        devs = {int(g.get("dev")) for g in parse(graph).iter("gpu")}
        assert devs == set(range(sku.gpu.count)), sku.name
        for el in parse(graph).iter("graph"):
            assert int(el.get("nchannels")) == len(el.findall("channel"))


# --------------------------------------------------------------------------- pitfalls

@pytest.mark.parametrize("sku_name", ["Standard_NC24ads_A100_v4", "Standard_NC48ads_A100_v4"])
def test_small_ncv4_sizes_get_no_graph_and_no_topology(catalog, sku_name):
    sku = catalog.get(sku_name)
    assert sku.nccl.graph is False
    assert render_graph_xml(resolve_sku(sku)) is None
    assert render_topology_xml(resolve_sku(sku)) is None
    assert "NCCL_GRAPH_FILE" not in sku.nccl.image_conf()


def test_only_nc96ads_gets_a_graph(catalog):
    assert [sku.name for sku in catalog if render_graph_xml(resolve_sku(sku))] == ["Standard_NC96ads_A100_v4"]


def test_no_rendered_topology_has_a_self_pointing_nvlink(catalog):
    for sku_name, name, text in all_rendered(catalog):
        for nvlink in parse(text).iter("nvlink"):
            own = nvlink.getparent().getparent().get("busid")
            assert nvlink.get("target") != own, (sku_name, name)


HISTORY = [  # known-bad past versions of Azure's files and the SKU they were for
    ("ndv4-topo.pre-c3e42913.numa-swapped.xml", "Standard_ND96amsr_A100_v4", "ndv4-topo.xml"),
    ("ndv4-topo.pre-4a4565a0.bad-affinity.xml", "Standard_ND96asr_v4", "ndv4-topo.xml"),
    ("ndv2-topo.pre-4a4565a0.bad-affinity.xml", "Standard_ND40rs_v2", "ndv2-topo.xml"),
    ("ndv5-topo.pre-992d7759.affinity-swapped.xml", "Standard_ND96isr_H100_v5", "ndv5-topo.xml"),
    ("ncv4-topo.pre-4be0efb7.nvlink-pairs.xml", "Standard_NC96ads_A100_v4", "ncv4-topo.xml"),
]


@pytest.mark.parametrize("history, sku_name, current", HISTORY)
def test_known_bad_historical_files_are_told_apart(catalog, history, sku_name, current):
    bad = azure_file("topology-history", history)
    ours = parse(render_topology_xml(resolve_sku(catalog.get(sku_name))))
    assert canonical(azure_file("topology", current)) != canonical(bad)  # the comparison can see the bug
    assert canonical(ours) != canonical(bad)


def test_ndv4_gpus_sit_on_the_numa_node_azure_fixed(catalog):
    def gpu_numa(root):
        return {pci.get("busid"): cpu.get("numaid") for cpu in root.iter("cpu")
                for pci in cpu.iter("pci") if pci.get("class") == "0x030200"}

    ours = gpu_numa(parse(render_topology_xml(resolve_sku(catalog.get("ND96amsr_A100_v4")))))
    assert ours == gpu_numa(azure_file("topology", "ndv4-topo.xml"))
    assert ours != gpu_numa(azure_file("topology-history", "ndv4-topo.pre-c3e42913.numa-swapped.xml"))
    assert ours["0001:00:00.0"] == "1"


def test_skus_without_topology_render_nothing(catalog):
    for name in ["NC24rs_v3", "NC40ads_H100_v5", "NC80adis_H100_v5", "h100-80gb-sxm-ib.8x"]:
        assert render_nccl_files(resolve_sku(catalog.get(name))) == {}
