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
