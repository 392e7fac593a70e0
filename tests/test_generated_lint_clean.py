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
EXAMPLES = sorted((REPO / "examples").glob("*.yaml"))


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


def test_committed_output_tree_lints_clean(monkeypatch):
    monkeypatch.chdir(REPO)
    report = _lint("out")
    above_info = [f"{f['file']}:{f['line']} {f['code']} {f['message']}" for f in report["findings"] if f["severity"] != "info"]
    assert above_info == []
    assert report["summary"]["files"] >= 40
