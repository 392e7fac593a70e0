"""A spec's AKS Kubernetes version older than the Kubernetes schemas held (1.25 with kubernetes-validate 1.37.0)
is one finding at the spec's line (HPC207: AKS creates no cluster that old), and the generated manifests are
judged with the oldest schemas held: no rule crashes (HPC090) on it, in lint or build."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest
from typer.testing import CliRunner

from hpcconf.cli import app

REPO = Path(__file__).resolve().parents[1]
EXAMPLE = REPO / "examples" / "ndmv4-aks.yaml"


def _spec(tmp_path: Path, version: str) -> tuple[Path, int]:
    text = re.sub(r'kubernetes_version: "1\.26".*', f'kubernetes_version: "{version}"', EXAMPLE.read_text())
    spec = tmp_path / "spec.yaml"
    spec.write_text(text)
    line = next(n for n, row in enumerate(text.splitlines(), 1) if "kubernetes_version:" in row)
    return spec, line


@pytest.mark.parametrize("version", ["1.22", "1.23.5", "1.24"])
def test_lint_gives_one_finding_at_the_version_line(tmp_path, monkeypatch, version):
    spec, line = _spec(tmp_path, version)
    monkeypatch.chdir(tmp_path)
    result = CliRunner().invoke(app, ["lint", "--format", "json", spec.name])
    report = json.loads(result.stdout)
    above_info = [(f["code"], f["severity"], f["line"]) for f in report["findings"] if f["severity"] != "info"]
    assert above_info == [("HPC207", "error", line)]
    assert "az aks create refuses it" in next(f["message"] for f in report["findings"] if f["code"] == "HPC207")


def test_build_is_refused_by_that_one_finding_and_builds_when_it_is_ignored(tmp_path, monkeypatch):
    spec, _ = _spec(tmp_path, "1.22")
    monkeypatch.chdir(tmp_path)
    refused = CliRunner().invoke(app, ["build", spec.name])
    assert refused.exit_code != 0
    assert "HPC207" in refused.output and "HPC090" not in refused.output
    spec.write_text(spec.read_text().replace('kubernetes_version: "1.22"',
                                             'kubernetes_version: "1.22"  # hpcconf: ignore[HPC207] test'))
    built = CliRunner().invoke(app, ["build", spec.name])
    assert built.exit_code == 0, built.output
    assert "HPC090" not in built.output
