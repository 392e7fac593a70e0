"""A variable a spec's ``nccl_env`` writes into several artifacts is one finding, on the spec line that
sets it, in every format: the cluster's ``nccl_env``/``mpi_env`` and each pool's ``nccl_env`` (which
overrides the cluster's in that pool's files). Before, a pool-level setting was reported once per
artifact line, and SARIF/GitHub pointed at the pool's entry, not at the setting."""

from __future__ import annotations

import json

import pytest
from typer.testing import CliRunner

from hpcconf.cli import app

runner = CliRunner()
HEAD = """\
apiVersion: hpcconf/v1
kind: Cluster
metadata: {name: demo, location: southcentralus}
platforms: [aks, slurm]
test_image: {registry: demo.azurecr.io, tag: "25.10", base: "nvcr.io/nvidia/pytorch:25.10-py3"}
pools:
"""
ONE_POOL = HEAD + """\
  - name: gpu
    sku: Standard_ND96amsr_A100_v4
    count: 2
    nccl_env:
      NCCL_IB_QPS_PER_CONNECTION: "4"
      NCCL_ALGO: "Ringg"
"""
THREE_POOLS = HEAD + """\
  - name: gpu
    sku: Standard_ND96amsr_A100_v4
    count: 2
    nccl_env: {NCCL_ALGO: "Ringg"}
  - name: big
    sku: Standard_ND96amsr_A100_v4
    count: 2
    nccl_env: {NCCL_ALGO: "Treee"}
  - name: plain
    sku: Standard_ND96amsr_A100_v4
    count: 2
nccl_env: {NCCL_ALGO: "Rung"}
"""


def _lint(tmp_path, monkeypatch, text: str, fmt: str) -> str:
    (tmp_path / "spec.yaml").write_text(text)
    monkeypatch.chdir(tmp_path)
    return runner.invoke(app, ["lint", "spec.yaml", "--format", fmt, "--select", "NCCL011"]).stdout


def _line_of(text: str, needle: str) -> int:
    return next(number for number, line in enumerate(text.splitlines(), 1) if needle in line)


@pytest.mark.parametrize("fmt", ["json", "sarif", "github"])
def test_a_pool_setting_is_one_finding_at_its_line(tmp_path, monkeypatch, fmt):
    report = _lint(tmp_path, monkeypatch, ONE_POOL, fmt)
    line = _line_of(ONE_POOL, 'NCCL_ALGO: "Ringg"')
    if fmt == "json":
        (finding,) = json.loads(report)["findings"]
        assert (finding["file"], finding["line"]) == ("spec.yaml", line)
        assert "set by pools[0].nccl_env.NCCL_ALGO" in finding["message"]
    elif fmt == "sarif":
        (result,) = json.loads(report)["runs"][0]["results"]
        where = result["locations"][0]["physicalLocation"]
        assert where["artifactLocation"]["uri"] == "spec.yaml" and where["region"]["startLine"] == line
    else:
        (annotation,) = [row for row in report.splitlines() if row.startswith("::error")]
        assert f"file=spec.yaml,line={line}," in annotation


def test_each_pool_and_the_cluster_default_get_their_own_line(tmp_path, monkeypatch):
    findings = json.loads(_lint(tmp_path, monkeypatch, THREE_POOLS, "json"))["findings"]
    got = sorted((f["line"], f["message"].split("(set by ")[1].split(";")[0]) for f in findings)
    assert got == sorted([(_line_of(THREE_POOLS, '"Ringg"'), "pools[0].nccl_env.NCCL_ALGO"),
                          (_line_of(THREE_POOLS, '"Treee"'), "pools[1].nccl_env.NCCL_ALGO"),
                          (_line_of(THREE_POOLS, '"Rung"'), "nccl_env.NCCL_ALGO")])
