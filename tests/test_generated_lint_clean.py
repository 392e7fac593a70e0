"""Everything hpcconf generates lints clean (nothing above info), as specs and as files on disk.

Linting the committed out/ tree as a directory also proves that cross-file rules keep
clusters apart: ndmv4-aks (namespace default) and ndmv4-aks-current (namespace nccl-test)
would otherwise trip the namespace and resource-name rules against each other.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from typer.testing import CliRunner

from hpcconf.cli import app

REPO = Path(__file__).resolve().parents[1]
# The legacy example reproduces the 2023 blog posts: lint must report why it cannot be deployed today.
LEGACY = REPO / "examples" / "ndmv4-aks.yaml"
EXAMPLES = sorted(p for p in (REPO / "examples").glob("*.yaml") if p != LEGACY)


def _lint(*args: str) -> dict:
    result = CliRunner().invoke(app, ["lint", *args, "--format", "json", "--fail-level", "warning"])
    assert result.exit_code in (0, 1), result.output
    return json.loads(result.stdout)


@pytest.mark.parametrize("example", EXAMPLES, ids=lambda p: p.stem)
def test_example_spec_and_its_artifacts_lint_clean(example, monkeypatch):
    monkeypatch.chdir(REPO)
    report = _lint(str(example.relative_to(REPO)))
    above_info = [f for f in report["findings"] if f["severity"] != "info"]
    assert above_info == []


def test_the_legacy_example_is_reported_as_undeployable_today(monkeypatch):
    """Its AKS Kubernetes 1.26 is past end of life (az aks create refuses it) and its az CLI 2.50.0 can only
    opt out of AKS's GPU driver with the tag AKS stopped reading on 2025-07-14."""
    monkeypatch.chdir(REPO)
    assert [f for f in _lint(str(LEGACY.relative_to(REPO)))["findings"] if f["severity"] != "info"] == []  # suppressed, with reasons
    report = _lint(str(LEGACY.relative_to(REPO)), "--no-inline-ignores")
    above_info = sorted((f["code"], f["severity"], f["line"]) for f in report["findings"] if f["severity"] != "info")
    text = LEGACY.read_text().splitlines()
    assert above_info == [("HPC207", "error", _line(text, "kubernetes_version:")),
                          ("HPC208", "warning", _line(text, "az_cli:"))]


def _line(lines: list[str], needle: str) -> int:
    return next(n for n, line in enumerate(lines, 1) if needle in line)


def test_committed_output_tree_lints_clean(monkeypatch):
    monkeypatch.chdir(REPO)
    report = _lint("out")
    above_info = [f"{f['file']}:{f['line']} {f['code']} {f['message']}" for f in report["findings"] if f["severity"] != "info"]
    # Only the legacy example's script, read without its spec: the retired SkipGPUDriverInstall tag (XA004).
    assert [a.split(" ", 2)[:2] for a in above_info] == [[a.split(" ")[0], "XA004"] for a in above_info]
    assert [a.split(":")[0] for a in above_info] == ["out/ndmv4-aks/aks/provision.sh"]
    assert report["summary"]["files"] >= 40
