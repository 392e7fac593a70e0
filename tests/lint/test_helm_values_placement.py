"""Helm values where they really live: Chart.yaml/Chart.lock beside them, file and directory names."""

from __future__ import annotations

from pathlib import Path

from hpcconf.lint.context import LintContext
from hpcconf.lint.engine import lint_paths

TYPO = "driver:\n  rdma:\n    useHostMOFED: true\n"


def _lint(paths: list[Path], charts: dict[str, str] | None = None) -> list[tuple[str, int, str, str]]:
    ctx = LintContext()
    ctx.charts = dict(charts or {})
    return sorted((Path(f.file).name, f.line or 0, f.code, f.message) for f in lint_paths([str(p) for p in paths], ctx).findings
                  if f.code.startswith("HELM"))


def test_values_yaml_in_a_chart_named_directory(tmp_path):
    (tmp_path / "gpu-operator").mkdir()
    (tmp_path / "gpu-operator" / "values.yaml").write_text(TYPO)
    found = _lint([tmp_path / "gpu-operator" / "values.yaml"])
    assert [(f[1], f[2]) for f in found] == [(1, "HELM006"), (3, "HELM001")]
    assert "any gpu-operator version" in found[1][3]


def test_values_named_by_release(tmp_path):
    (tmp_path / "values-gpu-operator.yaml").write_text(TYPO)
    assert [f[2] for f in _lint([tmp_path / "values-gpu-operator.yaml"], {"gpu-operator": "26.7.0"})] == ["HELM001"]


def test_umbrella_chart_values_under_the_dependency_alias_with_the_locked_version(tmp_path):
    (tmp_path / "Chart.yaml").write_text(
        "apiVersion: v2\nname: stack\nversion: 1.0.0\ndependencies:\n"
        "  - name: gpu-operator\n    alias: gpu\n    version: '>=23.0.0'\n    repository: https://helm.ngc.nvidia.com/nvidia\n"
        "  - name: network-operator\n    version: 23.4.0\n    repository: https://helm.ngc.nvidia.com/nvidia\n")
    (tmp_path / "Chart.lock").write_text("dependencies:\n- {name: gpu-operator, version: v23.6.1}\n")
    (tmp_path / "values.yaml").write_text(
        "gpu:\n  operator:\n    defaultRuntime: containerd\n  driver:\n    kernelModuleType: open\n"
        "network-operator:\n  deployCR: true\n  keepNCP: true\n")
    # The lock (23.6.1) beats --chart; the Chart.yaml's exact 23.4.0 pins network-operator.
    found = _lint([tmp_path], {"gpu-operator": "26.7.0", "network-operator": "26.4.1"})
    # Both dependencies deploy NFD (HELM004, at the gpu sub-tree); the locked 23.6.1 lacks kernelModuleType.
    assert [(f[1], f[2]) for f in found] == [(1, "HELM004"), (5, "HELM001"), (8, "HELM001")]
    assert "gpu-operator 23.6.1" in found[1][3] and "from 25.3.0" in found[1][3]
    assert "network-operator 23.4.0" in found[2][3]


def test_values_of_another_chart_are_not_ours(tmp_path):
    (tmp_path / "Chart.yaml").write_text("apiVersion: v2\nname: my-nfd-dashboard\nversion: 1.0.0\n")
    (tmp_path / "nfd-values.yaml").write_text("worker:\n  typo: 1\n")
    assert _lint([tmp_path]) == []


def test_a_version_outside_the_releases_read_is_judged_against_every_version(tmp_path):
    (tmp_path / "gpu-operator-values.yaml").write_text("operator:\n  defaultRuntime: containerd\n")
    found = _lint([tmp_path / "gpu-operator-values.yaml"], {"gpu-operator": "27.1.0"})
    assert [f[2] for f in found] == ["HELM006"] and "outside the releases" in found[0][3]


def test_values_by_their_own_keys_where_no_name_says_the_chart(tmp_path):
    # infra/gpu/values-aks.yaml: no Chart.yaml, no chart in the file or directory name; driver/toolkit/devicePlugin
    # are gpu-operator's own top-level keys (issue 20, a held-out review's miss)
    (tmp_path / "gpu").mkdir()
    (tmp_path / "gpu" / "values-aks.yaml").write_text("toolkit:\n  enabled: true\ndevicePlugin:\n  enabled: true\n" + TYPO)
    assert [(f[1], f[2]) for f in _lint([tmp_path / "gpu" / "values-aks.yaml"])] == [(1, "HELM006"), (7, "HELM001")]
    # keys every chart may have (operator, nfd, global) name no chart; one distinctive key is not enough
    (tmp_path / "gpu" / "values-other.yaml").write_text("operator:\n  x: 1\nnfd:\n  enabled: false\ndriver:\n  y: 2\n")
    assert _lint([tmp_path / "gpu" / "values-other.yaml"]) == []


def test_go_template_strings_in_values_do_not_make_them_a_template(tmp_path):
    # Helm reads values.yaml as YAML and renders only templates/: a quoted "{{ .Release.Name }}" a chart passes to
    # tpl is a value; the chart's templates/ stays skipped
    chart = tmp_path / "gpu-operator"
    (chart / "templates").mkdir(parents=True)
    (chart / "Chart.yaml").write_text("apiVersion: v2\nname: gpu-operator\nversion: v24.9.0\n")
    (chart / "values.yaml").write_text('operator:\n  annotations:\n    owner: "{{ .Release.Name }}"\n' + TYPO)
    (chart / "templates" / "cm.yaml").write_text("apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: {{ .Release.Name }}\n")
    assert [(f[0], f[1], f[2]) for f in _lint([chart])] == [("values.yaml", 6, "HELM001")]


def test_unquoted_go_template_markup_in_values_is_still_skipped(tmp_path):
    # `enabled: {{ .Values.x }}` reads as a YAML flow mapping, not the value: judging it would be a false alarm
    (tmp_path / "gpu-operator-values.yaml").write_text("driver:\n  enabled: {{ .Values.gpu.driver }}\n")
    assert _lint([tmp_path / "gpu-operator-values.yaml"]) == []
