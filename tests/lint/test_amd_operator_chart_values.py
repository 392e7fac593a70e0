"""AMD's GPU operator chart (Chart.yaml ``name: gpu-operator-charts``) is read as amd-gpu-operator values,
its NFD subchart's ``enabled`` is Helm's dependency condition, and the network-operator's NFD labels are
not asked of it (fresh-file review, issue 20: ROCm/gpu-operator helm-charts-k8s/values.yaml)."""

from __future__ import annotations

from hpcconf.artifacts import Kind
from hpcconf.lint.context import LintContext
from hpcconf.lint.engine import lint_paths
from hpcconf.lint.helm_values import placements

CHART = """apiVersion: v2
name: gpu-operator-charts
version: v1.4.0
dependencies:
- name: node-feature-discovery
  version: v0.18.3
  repository: "https://kubernetes-sigs.github.io/node-feature-discovery/charts"
  condition: node-feature-discovery.enabled
"""
VALUES = """node-feature-discovery:
  enabled: true
  worker:
    tolerations: []
"""


def test_amd_chart_values_are_placed_and_clean(tmp_path):
    (tmp_path / "Chart.yaml").write_text(CHART)
    (tmp_path / "values.yaml").write_text(VALUES)
    found = placements(str(tmp_path / "values.yaml"))
    assert [(p.chart, p.root) for p in found] == [("amd-gpu-operator", ()),
                                                  ("node-feature-discovery", ("node-feature-discovery",))]
    result = lint_paths([str(tmp_path / "values.yaml")], LintContext())
    assert [(f.code, f.line) for f in result.findings if f.severity.value in ("error", "warning")] == []


def test_amd_values_kind(tmp_path):
    from hpcconf.lint.detect import detect_documents  # noqa: PLC0415

    (tmp_path / "Chart.yaml").write_text(CHART)
    (tmp_path / "values.yaml").write_text(VALUES)
    docs = detect_documents(str(tmp_path / "values.yaml"), VALUES, source_path=str(tmp_path / "values.yaml"))
    assert Kind.HELM_AMD_GPU_OPERATOR in {d.kind for d in docs}


# AMD's values under NVIDIA's chart name (held-out review r20c, file 14: ROCm/gpu-operator
# example/helm_charts_k8s_values_example.yaml): told apart by AMD's own top-level keys.
AMD_EXAMPLE = """node-feature-discovery:
  enabled: true
kmm:
  enabled: true
installdefaultNFDRule: true
controllerManager:
  manager:
    image: {repository: docker.io/rocm/gpu-operator, tag: v1.0.0}
"""


def test_amd_values_named_gpu_operator_are_amds(tmp_path):
    from hpcconf.lint.detect import detect_documents  # noqa: PLC0415

    path = tmp_path / "rocm-gpu-operator-values.yaml"
    path.write_text(AMD_EXAMPLE)
    docs = detect_documents(path.name, AMD_EXAMPLE, source_path=str(path))
    assert {d.kind for d in docs} == {Kind.HELM_AMD_GPU_OPERATOR}
    result = lint_paths([str(path)], LintContext())
    assert [(f.code, f.line) for f in result.findings] == []


def test_forced_amd_kind_is_not_refused(tmp_path):
    path = tmp_path / "gpu-operator-values.yaml"
    path.write_text(AMD_EXAMPLE)
    result = lint_paths([str(path)], LintContext(), forced_kind=Kind.HELM_AMD_GPU_OPERATOR)
    assert [f.code for f in result.findings] == []  # no HPC091 "this file is a helm-values/gpu-operator"


def test_nvidia_values_with_one_amd_like_key_stay_nvidias(tmp_path):
    from hpcconf.lint.detect import detect_documents  # noqa: PLC0415

    text = "driver:\n  enabled: false\nkmm: {}\n"
    docs = detect_documents("gpu-operator-values.yaml", text, source_path=str(tmp_path / "gpu-operator-values.yaml"))
    assert {d.kind for d in docs} == {Kind.HELM_GPU_OPERATOR}


def test_amd_chart_yaml_named_gpu_operator(tmp_path):
    # ROCm/gpu-operator helm-charts/Chart.yaml at f9ca606b (v1.0.0's first commit) was `name: gpu-operator`
    (tmp_path / "Chart.yaml").write_text("apiVersion: v2\nname: gpu-operator\nversion: v1.0.0\n"
                                         "home: https://github.com/ROCm/gpu-operator\n")
    (tmp_path / "values.yaml").write_text("global: {}\n")
    assert [p.chart for p in placements(str(tmp_path / "values.yaml"))] == ["amd-gpu-operator"]


def test_umbrella_dependency_from_amds_repository(tmp_path):
    (tmp_path / "Chart.yaml").write_text(
        "apiVersion: v2\nname: cluster\nversion: 0.1.0\ndependencies:\n"
        "- {name: gpu-operator, version: v1.4.0, repository: 'https://rocm.github.io/gpu-operator'}\n"
        "- {name: gpu-operator-charts, alias: amd, version: v1.5.1, repository: 'https://rocm.github.io/gpu-operator'}\n")
    (tmp_path / "values.yaml").write_text("gpu-operator:\n  global: {}\namd:\n  global: {}\n")
    assert [(p.chart, p.root) for p in placements(str(tmp_path / "values.yaml"))] == \
        [("amd-gpu-operator", ("gpu-operator",)), ("amd-gpu-operator", ("amd",))]


def test_amd_only_keys_are_in_no_nvidia_release():
    from hpcconf.knowledge import charts  # noqa: PLC0415
    from hpcconf.knowledge.rocm import AMD_GPU_OPERATOR_ONLY_KEYS  # noqa: PLC0415

    tree = charts.chart_tree("gpu-operator")
    assert tree is not None
    assert not AMD_GPU_OPERATOR_ONLY_KEYS & {p[0] for p in tree.keys}


def test_amd_or_rocm_beside_gpu_operator_in_the_name():
    from hpcconf.lint.helm_values import chart_in_name  # noqa: PLC0415

    assert chart_in_name("rocm-gpu-operator-values.yaml") == "amd-gpu-operator"
    assert chart_in_name("ROCm+gpu-operator_values.yaml") == "amd-gpu-operator"
    assert chart_in_name("gpu-operator-values.yaml") == "gpu-operator"
    assert chart_in_name("gpu-operator-camd.yaml") == "gpu-operator"  # a word, not a substring


def test_nvidia_values_under_an_amd_name_stay_nvidias(tmp_path):
    from hpcconf.lint.detect import detect_documents  # noqa: PLC0415

    text = "driver:\n  enabled: false\ntoolkit:\n  enabled: true\n"
    docs = detect_documents("amd-gpu-operator-values.yaml", text, source_path=str(tmp_path / "x.yaml"))
    assert {d.kind for d in docs} == {Kind.HELM_GPU_OPERATOR}


def test_umbrella_named_like_the_chart_it_wraps(tmp_path):
    # review r20c miss 4 (paul2126/homelab deployments/gpu-operator; also giantswarm/gpu-operator-app): an umbrella
    # chart called gpu-operator whose dependency is NVIDIA's gpu-operator; its values sit under `gpu-operator:`
    (tmp_path / "Chart.yaml").write_text(
        "apiVersion: v2\nname: gpu-operator\nversion: 1.0.1\ndependencies:\n"
        "- {name: gpu-operator, version: v25.3.4, repository: 'https://helm.ngc.nvidia.com/nvidia'}\n")
    (tmp_path / "values.yaml").write_text("gpu-operator:\n  driver:\n    enabled: false\n")
    assert [(p.chart, p.root, p.version) for p in placements(str(tmp_path / "values.yaml"))] == \
        [("gpu-operator", ("gpu-operator",), "25.3.4")]
    result = lint_paths([str(tmp_path / "values.yaml")], LintContext())
    assert [f.code for f in result.findings if f.code == "HELM001"] == []
