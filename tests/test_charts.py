"""hpcconf/data/chart_keys.yaml against the research key matrix and the charts' own values.yaml files."""

from __future__ import annotations

import json

import pytest
from ruamel.yaml import YAML

from hpcconf.knowledge import charts
from hpcconf.knowledge.versions import version_key

CHARTS = ("network-operator", "gpu-operator", "node-feature-discovery")
MISSING = object()


def _yaml(path):
    return YAML(typ="safe").load(path.read_text(encoding="utf-8"))


def _lookup(values, dotted):
    node = values
    for part in dotted.split("."):
        if not isinstance(node, dict) or part not in node:
            return MISSING
        node = node[part]
    return node


@pytest.fixture
def matrix(shared_dir):
    return _yaml(shared_dir / "upstream" / "k8s" / "chart-key-matrix.yaml")


@pytest.mark.parametrize("chart", CHARTS)
def test_every_matrix_cell_agrees(matrix, chart):
    upstream = matrix[chart]
    versions = [v["tag"].lstrip("v") for v in upstream["versions"]]
    assert charts.known_versions(chart) == sorted(versions, key=version_key)
    assert set(charts.chart(chart).keys) == set(upstream["keys"])
    for key, info in upstream["keys"].items():
        present = {t.lstrip("v") for t in info["present_in"]}
        for version in versions:
            assert charts.chart_has_key(chart, version, key) == (version in present), (chart, key, version)
        for tag, default in (info.get("default") or {}).items():
            assert charts.chart_default(chart, tag.lstrip("v"), key) == default, (chart, key, tag)


VALUES_FILES = [
    ("network-operator", "23.4.0"), ("network-operator", "23.7.0"), ("network-operator", "24.7.0"),
    ("network-operator", "26.4.1"), ("gpu-operator", "23.3.2"), ("gpu-operator", "23.6.1"),
    ("gpu-operator", "26.7.0"), ("node-feature-discovery", "0.14.1"), ("node-feature-discovery", "0.19.0"),
]


@pytest.mark.parametrize("chart,version", VALUES_FILES)
def test_table_matches_the_charts_values_yaml(shared_dir, chart, version):
    values = _yaml(shared_dir / "upstream" / "k8s" / chart / f"values-v{version}.yaml")
    for key in charts.chart(chart).keys:
        exists = _lookup(values, key) is not MISSING
        assert charts.chart_has_key(chart, version, key) == exists, (chart, version, key)


def test_blog_keys_are_gone_from_network_operator_24_10():
    for key in ("deployCR", "ofedDriver.deploy", "sriovDevicePlugin.resources", "secondaryNetwork.ipamPlugin.deploy",
                "rdmaSharedDevicePlugin.deploy"):
        assert charts.key_status("network-operator", "24.7.0", key) == "present"
        assert charts.key_status("network-operator", "24.10.0", key) == "absent"
        assert charts.key_status("network-operator", "26.4.1", key) == "absent"
    # Whole sections and unlisted children of a removed section are absent too.
    assert charts.key_status("network-operator", "26.4.1", "secondaryNetwork") == "absent"
    assert charts.key_status("network-operator", "26.4.1", "ofedDriver.env") == "absent"
    # Inside the releases read, every key is known from the full key tree (chart_trees.yaml).
    assert charts.key_status("network-operator", "23.4.0", "ofedDriver.env") == "present"
    assert charts.key_status("network-operator", "23.4.0", "ofedDriver.envv") == "absent"


def test_free_form_and_unknown_keys():
    # nfd-worker.conf is free-form: any sub-key of worker.config exists when worker.config does.
    assert charts.key_status("node-feature-discovery", "0.19.0", "worker.config.sources.pci.deviceLabelFields") == "present"
    assert charts.key_status("node-feature-discovery", "0.19.0", "enableNodeFeatureApi") == "absent"
    assert charts.key_status("node-feature-discovery", "0.14.1", "enableNodeFeatureApi") == "present"
    # Keys the tracked table does not list are known from the full key tree.
    assert charts.key_status("gpu-operator", "26.7.0", "migManager.enabled") == "present"
    assert charts.key_status("gpu-operator", "26.7.0", "operator") == "present"  # outlived operator.defaultRuntime
    # Past the newest release read, only the tracked table's keys are known.
    assert charts.key_status("gpu-operator", "27.1.0", "migManager.enabled") == "unknown"
    assert charts.key_status("gpu-operator", "26.7.0", "driver.kernelModuleType") == "present"
    assert charts.key_status("gpu-operator", "23.3.2", "driver.kernelModuleType") == "absent"
    # Older than anything the table was read at: unknown.
    assert charts.key_status("gpu-operator", "1.0.0", "driver.enabled") == "unknown"
    # Versions between two listed tags follow the interval.
    assert charts.chart_has_key("network-operator", "24.8.0", "deployCR")
    assert not charts.chart_has_key("network-operator", "25.2.0", "deployCR")


def test_newest_versions():
    assert charts.newest_version("network-operator") == "26.4.1"
    assert charts.newest_version("gpu-operator") == "26.7.0"
    assert charts.newest_version("nfd") == "0.19.0"
    assert charts.newest_version("volcano") == "1.15.1"
    assert charts.newest_version("no-such-chart") is None


def test_ncp_thresholds_match_the_table_and_the_crds(shared_dir):
    deploy_cr = charts.key_info("network-operator", "deployCR")
    assert deploy_cr.removed_in == charts.NCP_FROM_VALUES_UNTIL
    assert charts.network_operator_renders_ncp("24.7.0") and not charts.network_operator_renders_ncp("24.10.0")
    schemas = shared_dir / "upstream" / "k8s" / "jsonschema"
    old = json.loads((schemas / "nicclusterpolicy_v1alpha1-network-operator-v23.4.0.json").read_text())
    new = json.loads((schemas / "nicclusterpolicy_v1alpha1-network-operator-v26.4.1.json").read_text())
    secondary = lambda s: s["properties"]["spec"]["properties"]["secondaryNetwork"]["properties"]  # noqa: E731
    assert "ipamPlugin" in secondary(old) and "ipamPlugin" not in secondary(new)
    assert charts.network_operator_has_whereabouts("25.7.0") and not charts.network_operator_has_whereabouts("26.4.1")
    assert "nvIpam" in new["properties"]["spec"]["properties"]


def test_az_cli_gpu_driver_flag_threshold():
    assert not charts.az_cli_has_gpu_driver_flag("2.72.1")
    assert charts.az_cli_has_gpu_driver_flag("2.72.2")
    assert charts.az_cli_has_gpu_driver_flag("2.75.0")


def test_flatten_values_gives_leaf_keys_and_paths():
    flat = dict(charts.flatten_values({"nfd": {"enabled": False}, "sriovDevicePlugin": {"resources": [{"name": "x"}]},
                                       "empty": {}}))
    assert flat == {"nfd.enabled": ("nfd", "enabled"), "sriovDevicePlugin.resources": ("sriovDevicePlugin", "resources"),
                    "empty": ("empty",)}


def test_operand_tags_and_doca_pairings():
    assert charts.network_operator_operand_tag("24.10.0") is None  # upstream images with their own tags then
    assert charts.network_operator_operand_tag("25.7.0") == "network-operator-v25.7.0"
    assert charts.network_operator_operand_tag("v26.4.1") == "network-operator-v26.4.1"
    assert charts.doca_driver_default("26.4.1").startswith("doca3.4.1-26.04")
    assert charts.doca_driver_default("25.10.0") is None
    import re

    from hpcconf.spec.model import Versions

    pattern = Versions.model_json_schema()["properties"]["doca_ofed"]["anyOf"][0]["pattern"]
    for tag in charts.DOCA_DRIVER_BY_RELEASE.values():  # a user could write each of them in the spec
        assert re.match(pattern, tag), tag


def test_a_chart_lookup_parses_its_own_section_as_the_whole_file_has_it():
    """chart_tree() reads one chart's section of chart_trees.yaml; it must be what the whole file says."""
    from ruamel.yaml import YAML

    from hpcconf.knowledge import charts

    whole = YAML(typ="safe").load(charts.TREES_FILE.read_text(encoding="utf-8"))
    assert sorted(charts._sections()) == sorted(whole)
    for name, body in whole.items():
        assert charts.chart_tree(name) == charts._tree_of(name, body), name
