"""hpcconf/data/chart_trees.yaml (every values key per chart release) against the charts' own values.yaml
files, the research key matrix, and the generator."""

from __future__ import annotations

import importlib.util
from pathlib import Path

from ruamel.yaml import YAML

from hpcconf.knowledge import charts

ROOT = Path(__file__).resolve().parents[1]
CHARTS = ("network-operator", "gpu-operator", "node-feature-discovery")


def _yaml(path: Path):
    return YAML(typ="safe").load(path.read_text(encoding="utf-8"))


def _key_paths(values, prefix=()):
    """Every key path of a values mapping; lists are leaves, as in the tree."""
    if not isinstance(values, dict):
        return
    for key, value in values.items():
        path = (*prefix, str(key))
        yield path
        yield from _key_paths(value, path)


def _values_files(shared_dir: Path):
    for chart in CHARTS:
        for path in sorted((shared_dir / "upstream" / "k8s" / chart).glob("values-v*.yaml")):
            yield chart, path.name[len("values-v"):-len(".yaml")], path


def test_every_key_of_each_read_values_yaml_is_known_at_its_version(shared_dir):
    files = list(_values_files(shared_dir))
    assert len(files) >= 9
    for chart, version, path in files:
        unknown = [".".join(p) for p in _key_paths(_yaml(path))
                   if charts.values_key_status(chart, version, p) != "present"]
        assert not unknown, (chart, version, unknown[:10])


def test_the_matrix_agrees_with_the_tree(shared_dir):
    matrix = _yaml(shared_dir / "upstream" / "k8s" / "chart-key-matrix.yaml")
    for chart in CHARTS:
        tree = charts.chart_tree(chart)
        for row in matrix[chart]["versions"]:  # the same tags, at the same commits
            assert tree.reads[row["tag"].lstrip("v")] == f"{row['tag']} {row['commit']}", (chart, row)
        for key, info in matrix[chart]["keys"].items():
            for tag in info["present_in"]:
                assert charts.values_key_status(chart, tag.lstrip("v"), tuple(key.split("."))) == "present", (key, tag)
            for tag in info["absent_in"]:
                assert charts.values_key_status(chart, tag.lstrip("v"), tuple(key.split("."))) == "absent", (key, tag)


def test_every_tracked_version_is_read():
    for chart in CHARTS:
        assert set(charts.known_versions(chart)) <= set(charts.chart_tree(chart).releases), chart
    assert charts.chart_tree("volcano") is None  # its values are not linted


def test_the_issue_examples():
    status = charts.values_key_status
    assert status("gpu-operator", "26.7.0", ("operator",)) == "present"
    assert status("gpu-operator", "26.7.0", ("operator", "defaultRuntime")) == "absent"
    assert status("gpu-operator", "24.9.2", ("operator", "defaultRuntime")) == "present"
    assert status("gpu-operator", "26.7.0", ("driver", "rdma", "useHostMOFED")) == "absent"
    assert charts.similar_key("gpu-operator", "26.7.0", ("driver", "rdma", "useHostMOFED")) == "useHostMofed"
    assert status("network-operator", "23.4.0", ("sriovDevicePlugin", "resoures")) == "absent"
    assert charts.similar_key("network-operator", "23.4.0", ("sriovDevicePlugin", "resoures")) == "resources"
    assert charts.similar_key("network-operator", "23.4.0", ("sriovDevicePlugin", "zzz")) is None


def test_free_form_sections_are_open():
    status = charts.values_key_status
    # Pod-spec pass-through and {} / null defaults take any sub-key.
    assert status("gpu-operator", "26.7.0", ("operator", "nodeSelector", "kubernetes.io/os")) == "present"
    assert status("gpu-operator", "26.7.0", ("driver", "resources", "limits", "memory")) == "present"
    assert status("gpu-operator", "26.7.0", ("daemonsets", "annotations", "a.b/c")) == "present"
    assert status("node-feature-discovery", "0.19.0", ("worker", "config", "sources", "pci", "deviceLabelFields")) == \
        "present"
    assert status("node-feature-discovery", "0.19.0", ("master", "nodeSelector", "x")) == "present"
    assert status("gpu-operator", "26.7.0", ("global", "anything")) == "present"
    # The vendored NFD sub-chart's keys are the sub-chart's, not free-form.
    assert status("gpu-operator", "26.7.0", ("node-feature-discovery", "worker", "tolerations")) == "present"
    assert status("gpu-operator", "26.7.0", ("node-feature-discovery", "worker", "tolerashuns")) == "absent"


def test_unknown_version_is_the_union_of_every_ref_read():
    status = charts.values_key_status
    assert status("network-operator", None, ("deployCR",)) == "present"  # 23.x
    assert status("network-operator", None, ("deployCR", "typo")) == "absent"
    unreleased = [k for k, spans in charts.chart_tree("network-operator").keys.items()
                  if all(s.since == charts.UNRELEASED for s in spans)]
    for key in unreleased:  # read on main only: never present in a release, present in the union
        assert status("network-operator", "26.4.1", key) == "absent" and status("network-operator", None, key) == "present"


def _generator():
    spec = importlib.util.spec_from_file_location("gen_chart_trees", ROOT / "tools" / "gen_chart_trees.py")
    module = importlib.util.module_from_spec(spec)  # type: ignore[arg-type]
    spec.loader.exec_module(module)  # type: ignore[union-attr]
    return module


def test_the_releases_in_shared_rebuild_to_the_committed_tree(shared_dir):
    """The generator's own reading (tools/gen_chart_trees.py), run in CI on the upstream values.yaml files
    in ../shared and on what the templates read at those tags (tests/data/chart_template_reads.yaml,
    recorded from the charts' repositories), gives exactly the committed tree's keys and open sections at
    those releases: a key the tree claims and the chart does not have fails here, as does one it lacks.
    Vendored sub-charts' subtrees are left out (their values files are not in ../shared). The full
    check, with the charts' git histories, is regenerating the file: ``python tools/gen_chart_trees.py
    gpu-operator=<git dir> network-operator=<git dir> node-feature-discovery=<git dir>`` then ``git diff``."""
    gen = _generator()
    recorded = _yaml(ROOT / "tests" / "data" / "chart_template_reads.yaml")
    compared = []
    for chart, version, path in _values_files(shared_dir):
        facts = recorded[chart][version]
        tree = charts.chart_tree(chart)
        assert tree.reads[version] == f"v{version} {facts['commit']}", (chart, version)  # the same commit
        keys: set = set()
        opened: set = set()
        gen.walk_values(_yaml(path), (), keys, opened)
        keys |= {tuple(p.split(".")) for p in facts["read_not_listed"]} | {("global",)}
        opened |= {tuple(p.split(".")) for p in facts["rendered_whole"]} | {("global",)}
        vendored = {name for name, how in facts["dependencies"].items() if how == "vendored"}
        keys |= {(name,) for name in facts["dependencies"]}
        opened |= {(name,) for name, how in facts["dependencies"].items() if how == "external"}
        opened = gen._outermost(opened)

        def ours(paths, vendored=vendored):
            return {p for p in paths if not (len(p) > 1 and p[0] in vendored)}

        want_keys = ours(p for p in keys if gen.visible(p, opened))
        have_keys = ours(p for p in tree.keys if tree.has(tree.keys, p, version))
        assert have_keys == want_keys, (chart, version, sorted(have_keys - want_keys)[:10], sorted(want_keys - have_keys)[:10])
        have_open = ours(p for p in tree.open if tree.has(tree.open, p, version))
        assert have_open == ours(opened), (chart, version, sorted(have_open ^ ours(opened))[:10])
        compared.append((chart, version))
    assert len(compared) >= 9, compared
