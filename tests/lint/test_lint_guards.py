"""lint never passes silently: unreadable files, empty targets and unknown versions are said out loud."""

from __future__ import annotations

import os
import shutil
from pathlib import Path

import pytest
from typer.testing import CliRunner

from hpcconf.cli import app

REPO = Path(__file__).resolve().parents[2]


def _run(*args):
    return CliRunner().invoke(app, list(args))


@pytest.mark.skipif(os.geteuid() == 0, reason="root reads any file; permission denial cannot be staged as root")
def test_an_unreadable_file_in_a_directory_is_an_error_finding(tmp_path):
    shutil.copy(REPO / "out" / "ndmv4-aks" / "aks" / "volcano-job.yaml", tmp_path / "job.yaml")
    (tmp_path / "job.yaml").chmod(0)
    result = _run("lint", str(tmp_path))
    assert result.exit_code == 1
    assert "error[HPC000] unreadable-file" in result.output


def test_unreadable_file_finding_via_engine(tmp_path, monkeypatch):
    """The same path without needing a non-root user: make reading fail with EACCES."""
    import hpcconf.lint.engine as engine

    shutil.copy(REPO / "out" / "ndmv4-aks" / "aks" / "volcano-job.yaml", tmp_path / "job.yaml")
    real = engine._read

    def denied(path, display, tree):
        if path.name == "job.yaml":
            raise engine.UsageError(f"cannot read {path}: Permission denied")
        return real(path, display, tree)

    monkeypatch.setattr(engine, "_read", denied)
    result = _run("lint", str(tmp_path), "--format", "json")
    assert result.exit_code == 1
    assert '"code": "HPC000"' in result.stdout


def test_an_empty_target_warns_that_nothing_was_linted(tmp_path):
    result = _run("lint", str(tmp_path))
    assert result.exit_code == 0
    assert "nothing was linted" in result.stderr


def test_a_chart_version_outside_the_table_is_flagged(tmp_path):
    values = tmp_path / "network-operator-values.yaml"
    values.write_text("deployCR: true\n")
    result = _run("lint", str(values), "--chart", "network-operator=99.0.0", "--nccl-version", "9.9.9")
    assert "network-operator 99.0.0 is outside the chart versions hpcconf knows" in result.stderr
    assert "NCCL 9.9.9 is outside the releases hpcconf knows" in result.stderr


def test_explain_without_a_comparison_is_a_usage_error():
    result = _run("build", str(REPO / "examples" / "ndmv4-aks.yaml"), "--explain")
    assert result.exit_code == 2 and "--explain needs --diff or --check" in result.stderr


def test_forcing_a_kind_the_file_plainly_is_not_warns(tmp_path):
    spec = tmp_path / "s.yaml"
    spec.write_text("apiVersion: hpcconf/v1\nkind: Cluster\nmetadata: {name: ab, location: eastus}\n"
                    "platforms: [slurm]\npools: [{name: gpu, sku: Standard_ND96asr_v4, count: 2}]\n")
    result = _run("lint", str(spec), "--kind", "volcano-job")
    assert "warning[HPC091]" in result.output and "--kind volcano-job was forced, but this file is a spec" in result.output
    job = REPO / "out" / "ndmv4-aks" / "aks" / "volcano-job.yaml"
    assert "HPC091" not in _run("lint", str(job), "--kind", "volcano-job").output


def test_a_crlf_nccl_conf_is_one_finding_per_line_not_three(tmp_path):
    conf = tmp_path / "nccl.conf"
    conf.write_bytes(b"NCCL_IB_HCA=mlx5_0\r\nNCCL_DEBUG=WARN\r\n")
    result = _run("lint", str(conf), "--format", "json")
    import json

    codes = [(f["code"], f["line"]) for f in json.loads(result.stdout)["findings"]]
    assert codes == [("NCCL007", 1), ("NCCL007", 2)]
