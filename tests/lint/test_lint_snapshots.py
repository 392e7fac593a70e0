"""Rendered diagnostics, byte for byte (text and JSON). HPCCONF_UPDATE_SNAPSHOTS=1 rewrites them."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from hpcconf.lint.context import LintContext, lookup_sku
from hpcconf.lint.engine import lint_paths
from hpcconf.lint.formats import render

HERE = Path(__file__).resolve().parent
INPUTS = HERE / "inputs"
SNAPSHOTS = HERE / "snapshots"


@pytest.fixture
def result(monkeypatch):
    monkeypatch.chdir(HERE)  # file names in the output are relative and stable
    ctx = LintContext(nccl_version="2.28.9")
    ctx.sku = lookup_sku("NC48ads_A100_v4")
    return lint_paths(["inputs/nccl.conf", "inputs/job.yaml"], ctx)


@pytest.mark.parametrize("fmt, ext", [("text", "txt"), ("json", "json"), ("github", "github.txt")])
def test_snapshot(result, fmt, ext):
    rendered = render(result, fmt)
    path = SNAPSHOTS / f"nc48-conf-and-job.{ext}"
    if os.environ.get("HPCCONF_UPDATE_SNAPSHOTS") == "1":
        path.write_text(rendered, encoding="utf-8")
    assert path.exists(), f"missing snapshot {path}: run with HPCCONF_UPDATE_SNAPSHOTS=1"
    assert rendered == path.read_text(encoding="utf-8"), \
        f"{path.name} differs: review, then run with HPCCONF_UPDATE_SNAPSHOTS=1"


def test_output_is_deterministic(result, monkeypatch):
    monkeypatch.chdir(HERE)
    ctx = LintContext(nccl_version="2.28.9", sku=lookup_sku("NC48ads_A100_v4"))
    again = lint_paths(["inputs/nccl.conf", "inputs/job.yaml"], ctx)
    for fmt in ("text", "json", "sarif", "github"):
        assert render(result, fmt) == render(again, fmt)
