"""NCCL topology/graph XML parser: Azure's real files, the probe's NCCL verdicts, and edge cases."""

from __future__ import annotations

import importlib.util
import json
from pathlib import Path

import pytest

from hpcconf.parsers.nccl_xml import (
    MAX_ATTR_COUNT,
    gpus_with_nvlink_children,
    graph_gpu_devs,
    parse_graph,
    parse_nccl_xml,
    parse_topology,
    read_nccl_xml_file,
    required_attribute_problems,
    self_nvlink_targets,
)

PROBE_NCCL = "2.28.9"


def _azure_files(shared: Path) -> list[Path]:
    base = shared / "upstream" / "nccl" / "azhpc-images"
    files = sorted(base.glob("topology*/*.xml"))
    assert len(files) >= 10
    return files


def _kind(path: Path) -> str:
    return "graph" if "graph" in path.name else "topo"


def _probe(shared: Path):
    """The probe script itself, so the test inputs are byte-for-byte what NCCL was given."""
    path = shared / "upstream" / "nccl" / "probe" / "nccl_file_probe.py"
    spec = importlib.util.spec_from_file_location("nccl_file_probe", path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def _results(shared: Path, name: str) -> dict:
    return json.loads((shared / "upstream" / "nccl" / "probe" / name).read_text())


# -- Azure's files: NCCL loads all of them -----------------------------------------------------

def test_every_azure_file_parses_without_fatal_problems(shared_dir):
    for path in _azure_files(shared_dir):
        doc = parse_nccl_xml(path.read_text(), _kind(path), PROBE_NCCL)
        assert doc.ok, (path.name, doc.fatal)
        assert doc.root is not None, path.name
        assert not [m for m in required_attribute_problems(doc) if m.fatal], path.name
        assert not [p for p in doc.problems if p.kind in ("unknown-element", "unknown-attribute", "empty-attribute")]


def test_ndv5_topology_tree_matches_the_file(shared_dir):
    text = (shared_dir / "upstream/nccl/azhpc-images/topology/ndv5-topo.xml").read_text()
    doc = parse_topology(text)
    cpus = list(doc.iter("cpu"))
    assert [c.get("numaid") for c in cpus] == ["0", "1"]
    pcis = list(doc.iter("pci"))
    gpus = [p.get("busid") for p in pcis if (p.get("class") or "").startswith("0x03")]
    nics = [p.get("busid") for p in pcis if (p.get("class") or "").startswith("0x02")]
    assert len(gpus) == 8 and len(nics) == 8
    assert "0001:00:00.0" in gpus and "0101:00:00.0" in nics
    # positions point at the text
    lines = text.splitlines()
    first = pcis[0]
    assert lines[first.line - 1][first.column - 1:].startswith("<pci busid=")
    busid = first.attr("busid")
    assert lines[busid.value_line - 1][busid.value_column - 1:].startswith(first.get("busid") + '"')


def test_ncv4_self_nvlinks_and_silent_link_speed(shared_dir):
    base = shared_dir / "upstream/nccl/azhpc-images"
    current = parse_topology((base / "topology/ncv4-topo.xml").read_text())
    paired = parse_topology((base / "topology-history/ncv4-topo.pre-4be0efb7.nvlink-pairs.xml").read_text())
    assert len(self_nvlink_targets(current)) == 4
    assert self_nvlink_targets(paired) == []
    assert len(gpus_with_nvlink_children(current)) == 4  # NVML discovery is off for every GPU
    kinds = {p.kind for p in current.problems}
    assert {"link-speed", "link-width"} <= kinds and current.ok
    assert all(not p.fatal for p in current.problems)


def test_ncv4_graph_names_four_gpus(shared_dir):
    doc = parse_graph((shared_dir / "upstream/nccl/azhpc-images/topology/ncv4-graph.xml").read_text())
    graphs = list(doc.iter("graph"))
    assert [g.get("id") for g in graphs] == ["0", "1", "2"]
    assert {g.get("speedintra") for g in graphs} == {"12"}
    assert max(dev for _, dev in graph_gpu_devs(doc)) == 3


# -- probe: NCCL 2.28.9's own verdicts ---------------------------------------------------------

def _graph_verdict(doc, gpus: int) -> bool:
    """NCCL fails when the file does not load or a channel names a GPU the node lacks."""
    return doc.ok and all(dev < gpus for _, dev in graph_gpu_devs(doc))


def _case_env_files(case: dict, inputs: dict, shared: Path) -> dict:
    files = {}
    for var in ("NCCL_TOPO_FILE", "NCCL_GRAPH_FILE"):
        if var in case["env"]:
            value = case["env"][var]
            # the probe ran from the repository root; inputs live in our tmp dir
            by_name = {Path(p).name: p for p in inputs.values() if isinstance(p, str)}
            if Path(value).name in by_name:
                files[var] = Path(by_name[Path(value).name])
            elif value.startswith("shared/"):
                files[var] = shared / value[len("shared/"):]
            else:
                files[var] = Path(value)  # does-not-exist.xml
    return files


def test_probe_config_cases_topo_and_graph_verdicts(shared_dir, tmp_path, monkeypatch):
    monkeypatch.chdir(Path(__file__).resolve().parents[1])
    probe = _probe(shared_dir)
    inputs = probe.make_inputs(str(tmp_path))
    results = _results(shared_dir, "results-config-cases.json")
    gpus = results["env"]["gpus"]
    checked = 0
    for case in results["cases"]:
        files = _case_env_files(case, inputs, shared_dir)
        if not files:
            continue
        verdict = True
        messages = []
        for var, path in files.items():
            doc = read_nccl_xml_file(path, "graph" if var == "NCCL_GRAPH_FILE" else "topo", results["env"]["nccl"])
            verdict &= _graph_verdict(doc, gpus) if var == "NCCL_GRAPH_FILE" else doc.ok
            messages += [p.message for p in doc.fatal]
        assert verdict == case["result"]["ok"], case["case"]
        log = "\n".join(case["log"]).replace("\t", "\\t")
        for message in messages:
            assert message.split(";")[0] in log, (case["case"], message)
        checked += 1
    assert checked == 8


def test_probe_unknown_element_and_attribute_are_reported_not_fatal(shared_dir, tmp_path, monkeypatch):
    monkeypatch.chdir(Path(__file__).resolve().parents[1])
    inputs = _probe(shared_dir).make_inputs(str(tmp_path))
    doc = parse_topology(Path(inputs["topo_unknown"]).read_text(), PROBE_NCCL)
    assert doc.ok
    kinds = {(p.kind, p.line) for p in doc.problems}
    assert ("unknown-element", 3) in kinds and ("unknown-attribute", 1) in kinds
    results = _results(shared_dir, "results-config-cases.json")
    case = next(c for c in results["cases"] if c["case"] == "topo_unknown_elem_attr")
    assert any("Ignoring element foo" in line for line in case["log"])
    assert any("Ignoring element foo" in p.message for p in doc.problems)


def test_probe_nvlink_cases(shared_dir, tmp_path, monkeypatch):
    monkeypatch.chdir(Path(__file__).resolve().parents[1])
    probe = _probe(shared_dir)
    results = _results(shared_dir, "results-nvlink-cases.json")
    bus_ids = results["env"]["gpu_bus_ids"]

    class Done:
        stdout = "\n".join(bus_ids)

    monkeypatch.setattr(probe.subprocess, "run", lambda *a, **k: Done())
    inputs = probe.nvlink_inputs(str(tmp_path))
    assert inputs["bus"] == [b.lower()[-12:] for b in bus_ids]
    baseline = next(c for c in results["cases"] if c["case"] == "baseline")["result"]["busbw_GBps"]
    for case in results["cases"]:
        path = case["env"].get("NCCL_TOPO_FILE")
        if not path:
            continue
        file = tmp_path / Path(path).name
        doc = parse_topology(file.read_text(), results["env"]["nccl"])
        assert doc.ok == case["result"]["ok"] is True
        assert not [m for m in required_attribute_problems(doc) if m.fatal]
        flagged = bool(self_nvlink_targets(doc))
        slow = case["result"]["busbw_GBps"] < 0.5 * baseline
        assert flagged == slow, case["case"]


# -- parser details that decide between NCCL loading and rejecting a file ----------------------

def _kinds(doc):
    return [(p.kind, p.fatal) for p in doc.problems]


def test_single_quotes_depend_on_version():
    text = "<system version='1'>\n</system>\n"
    old = parse_topology(text, "2.26.2")
    assert not old.ok and old.fatal[0].kind == "quote" and old.fatal[0].column == 17
    new = parse_topology(text, "2.27.3")
    assert new.ok and ("quote", False) in _kinds(new)


@pytest.mark.parametrize("text, kind, line, column", [
    ('<?xml version="1.0"?>\n<system version="1"/>\n', "prolog", 1, 20),
    ('<system version="1">\n\t<cpu/>\n</system>\n', "tab", 2, 1),
    ('<system version="1">\n  <cpu\n   numaid="0"/>\n</system>\n', "newline-in-tag", 2, 7),
    ('<system version="1">\n  <cpu numaid="0"></pci>\n</system>\n', "mismatch", 2, 19),
    ('<system version="1">\n  <cpu numaid="0">\n', "unclosed", 2, 3),
    ('<system version="1">text</system>', "text", 1, 21),
    ('<system>\n</system>\n', "bad-version", 1, 1),
    ('<system version="1">\n  <cpu numaid=0/>\n</system>\n', "quote", 2, 15),
    ('<system version="1"><!--a=b --></system>', "syntax", 1, 26),
    ('<system version="1"></system >', "syntax", 1, 29),
    ('<!DOCTYPE system>\n<system version="1"/>\n', "doctype", 1, 1),
])
def test_fatal_problems_with_position(text, kind, line, column):
    doc = parse_topology(text)
    assert not doc.ok and doc.root is None
    fatal = doc.fatal[0]
    assert (fatal.kind, fatal.line, fatal.column) == (kind, line, column), fatal


def test_attribute_spacing_and_limits_are_silent_misreads():
    doc = parse_topology('<system version="1">\n  <cpu  numaid="0" arch="x86_64" vendor="AuthenticAMD" />\n</system>\n')
    assert doc.ok
    cpu = next(doc.iter("cpu"))
    assert [a.name for a in cpu.attributes] == ["", "numaid", "arch", "vendor", ""]
    assert [p.kind for p in doc.problems].count("empty-attribute") == 2
    many = " ".join(f'a{i}="{i}"' for i in range(MAX_ATTR_COUNT + 2))
    doc = parse_topology(f'<system version="1" {many}></system>')
    system = doc.root
    assert doc.ok and system.get("a16") is None and system.get("a13") == "13"
    assert [p.kind for p in doc.problems].count("too-many-attributes") == 3  # version uses a slot too


def test_entities_and_comments():
    doc = parse_topology('<system version="1" name="a&amp;b">\n  <!-- <cpu numaid="9"/> -->\n<!---->\n</system>\n')
    assert doc.ok and doc.root.get("name") == "a&amp;b"
    assert ("entity", False) in _kinds(doc)
    assert list(doc.iter("cpu")) == []


def test_unknown_subtree_closing_tags_are_not_checked():
    # NCCL reuses one node slot inside a skipped element, so any closing tag closes it.
    doc = parse_topology('<system version="1"><foo><bar></baz></qux></system>')
    assert doc.ok
    assert [e.name for e in doc.iter(include_ignored=True)] == ["system", "foo", "bar"]
    assert list(doc.iter("foo")) == []


def test_value_and_name_length_limits():
    ok = parse_topology(f'<system version="1" name="{"x" * 253}"/>')
    bad = parse_topology(f'<system version="1" name="{"x" * 254}"/>')
    assert ok.ok and not bad.ok and bad.fatal[0].kind == "too-long"


def test_version_gated_children():
    text = ('<system version="1"><cpu numaid="0" arch="arm64"><pci busid="0000:01:00.0" class="0x030000" '
            'link_speed="16.0 GT/s PCIe" link_width="16"><pcilink target="0000:02:00.0"/></pci></cpu></system>')
    assert [p.kind for p in parse_topology(text, "2.22.3").problems] == []
    old = parse_topology(text, "2.21.5")
    assert old.ok and [p.kind for p in old.problems] == ["unknown-element"]
    assert "2.22" in old.problems[0].hint


def test_node_limit_is_fatal():
    cpus = "".join(f'<cpu numaid="{i}" arch="arm64"/>' for i in range(255))
    assert parse_topology(f'<system version="1">{cpus}</system>').ok is False
    cpus = "".join(f'<cpu numaid="{i}" arch="arm64"/>' for i in range(254))
    assert parse_topology(f'<system version="1">{cpus}</system>').ok


def test_required_attributes():
    doc = parse_topology(
        '<system version="1">\n'
        '  <cpu numaid="0" arch="x86_64" vendor="GenuineIntel">\n'
        '    <pci busid="0000:01:00.0" class="0x030200" link_width="16">\n'
        '      <gpu dev="0" sm="90" gdr="1">\n'
        '        <nvlink count="18" tclass="0x030200"/>\n'
        '      </gpu>\n'
        '    </pci>\n'
        '    <nic><net name="ib0"/></nic>\n'
        '  </cpu>\n'
        '</system>\n')
    assert doc.ok
    found = {(m.element.name, m.attribute, m.fatal) for m in required_attribute_problems(doc)}
    # link_speed of a GPU's <pci> and familyid/modelid of the CPU above it: NCCL fills them from sysfs
    assert found == {("gpu", "rank", False), ("nvlink", "target", True), ("net", "dev", False)}
    graph = parse_graph('<graphs version="1">\n  <graph id="0" pattern="4">\n    <channel><gpu/></channel>\n'
                        '  </graph>\n</graphs>\n')
    missing = {(m.element.name, m.attribute) for m in required_attribute_problems(graph)}
    assert ("graph", "nchannels") in missing and ("gpu", "dev") in missing and ("graph", "id") not in missing


def test_real_device_attributes_are_filled_from_sysfs():
    """aws-ofi-nccl's g5.48xl-topo.xml form: bare <pci busid> under <cpu numaid>; NCCL fills the rest
    (ncclTopoGetXmlFromSys / ncclTopoGetXmlFromCpu) or trims the branch when the busid is no local device."""
    pcis = "".join(f'    <pci busid="0000:00:{16 + i:02x}.0"/>\n' for i in range(4))
    doc = parse_topology(f'<system version="1">\n  <cpu numaid="0">\n{pcis}  </cpu>\n  <cpu numaid="1"/>\n</system>\n')
    assert doc.ok and required_attribute_problems(doc) == []


def test_a_branch_kept_by_net_name_must_be_complete():
    """ncclTopoFillNet keeps a <net name> found in the file as written: nothing above it is filled."""
    doc = parse_topology(
        '<system version="1">\n'
        '  <cpu numaid="0">\n'
        '    <pci busid="0000:50:00.0" class="0x020000">\n'
        '      <nic><net name="mlx5_0" dev="0"/></nic>\n'
        '    </pci>\n'
        '  </cpu>\n'
        '</system>\n')
    found = {(m.element.name, m.attribute, m.fatal) for m in required_attribute_problems(doc)}
    assert found == {("cpu", "arch", True), ("pci", "link_width", True), ("pci", "link_speed", True)}


def test_graph_dev_is_hex_from_2_21():
    doc_new = parse_graph('<graphs version="1"><graph><channel><gpu dev="10"/></channel></graph></graphs>', "2.21.5")
    doc_old = parse_graph('<graphs version="1"><graph><channel><gpu dev="10"/></channel></graph></graphs>', "2.20.5")
    assert graph_gpu_devs(doc_new)[0][1] == 16 and graph_gpu_devs(doc_old)[0][1] == 10


def test_missing_files(tmp_path):
    assert read_nccl_xml_file(tmp_path / "none.xml", "topo").ok
    graph = read_nccl_xml_file(tmp_path / "none.xml", "graph")
    assert not graph.ok and graph.fatal[0].kind == "missing-file"


def test_diagnostics_carry_positions():
    doc = parse_topology('<system version="1">\n\t<cpu/>\n</system>\n')
    diag = doc.diagnostics("topo.xml")[0]
    assert (diag.file, diag.line, diag.column, diag.severity.value, diag.name) == ("topo.xml", 2, 1, "error", "tab")
    assert diag.hint



# -- real NCCL: edge cases run through NCCL 2.28.9 itself -----------------------------------------
# Observed 2026-11-30 with torch 2.11.0+cu130 (NCCL 2.28.9) on an H200, one rank, NCCL_TOPO_FILE set
# to each text below (hpcconf parser probe). None: NCCL loaded the file and ran an all_reduce;
# otherwise NCCL's "Last error" text (it prints characters raw; we compare with them escaped).
_ATTRS16 = " ".join(f'a{i}="{i}"' for i in range(16))
REAL_NCCL_2_28_9_TOPO = {
    '<system version="1">\n</system>\n': None,
    '<system version="2">\n</system>\n': "XML Topology has wrong version 2, 1 needed",
    "<system version='1'>\n</system>\n": None,
    '<system  version="1">\n</system>\n': None,
    '<system version="1" >\n</system>\n': None,
    '<system\n version="1">\n</system>\n': "XML Parse : expected >, got '\n'",
    '<system version="1">\n<!--a=b -->\n</system>\n': "XML Parse : Unexpected value with name !--a",
    '<system version="1">\n<!-- a=b -->\n</system>\n': None,
    '<system version="1">\n</system >\n': "XML Parse error : unexpected trailing   in closing tag system",
    '<system version="1">text</system>\n': "XML Parse error : expecting '<', got 't'",
    '<system version="1">\n<foo><bar></baz></qux>\n</system>\n': None,
    '<system version="01">\n</system>\n': None,
    '<system version="0x1">\n</system>\n': None,
    '<system version="1abc">\n</system>\n': None,
    '<!DOCTYPE system>\n<system version="1">\n</system>\n': "XML Parse : unterminated ",
    '<?xml?>\n<system version="1">\n</system>\n': "XML Parse : unterminated ",
    '<system version=1>\n</system>\n': "XML Parse : Expected (double) quote.",
    f'<system version="1" {_ATTRS16} a16="16">\n</system>\n': None,
    f'<system {_ATTRS16} version="1">\n</system>\n': "Attribute version of node system not found",
    '<system version="1">\r\n</system>\r\n': None,
    '<system\tversion="1">\n</system>\n': "XML Parse : Unexpected value with name system\tversion",
    f'<system version="1" name="{"x" * 253}">\n</system>\n': None,
    f'<system version="1" name="{"x" * 254}">\n</system>\n': f"Error : value {'x' * 254} too long (max 255)",
    '<system version="1" name="a&amp;b">\n</system>\n': None,
    '</foo>\n<system version="1">\n</system>\n': "XML Parse : unterminated ",
}


def _escaped(text: str) -> str:
    return text.replace("\t", "\\t").replace("\n", "\\n").replace("\r", "\\r")


@pytest.mark.parametrize("text", list(REAL_NCCL_2_28_9_TOPO), ids=range(len(REAL_NCCL_2_28_9_TOPO)))
def test_real_nccl_2_28_9_verdicts(text):
    expected = REAL_NCCL_2_28_9_TOPO[text]
    doc = parse_topology(text, "2.28.9")
    assert doc.ok == (expected is None), doc.problems
    if expected is not None:
        assert doc.fatal[0].message.startswith(_escaped(expected)), (doc.fatal[0].message, expected)
