"""``--sku-dir`` on every command that reads SKUs: one option definition (same help), the same HPC101
error for a directory that is not there, and SKUs from it usable everywhere; the settings file's
``sku-dir`` key adds directories the same way (relative to that file, before --sku-dir)."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest
from typer.testing import CliRunner

from hpcconf.cli import app
from hpcconf.sku_dirs import SKU_DIR_HELP

REPO = Path(__file__).resolve().parents[1]
runner = CliRunner()

# Each command that reads SKUs, with arguments that make it read them.
COMMANDS = {
    "init": ["init", "--sku", "NC48ads_A100_v9", "-o", "-"],
    "lint": ["lint", "nccl.conf", "--sku", "NC48ads_A100_v9"],
    "skus": ["skus", "NC48ads_A100_v9"],
    "build": ["build", "cluster.yaml", "--check"],
    "explain-diff": ["explain-diff", "cluster.yaml", "--against", "cluster.yaml"],
    "nccl-report": ["nccl-report", "run.log", "--sku", "NC48ads_A100_v9"],
}


@pytest.fixture
def project(tmp_path, monkeypatch):
    """A copy of a packaged SKU under a new name in ./my-skus, a spec using it, an nccl.conf and a log."""
    (tmp_path / "my-skus").mkdir()
    text = (REPO / "skus" / "Standard_NC48ads_A100_v4.yaml").read_text(encoding="utf-8")
    (tmp_path / "my-skus" / "Standard_NC48ads_A100_v9.yaml").write_text(
        text.replace("NC48ads_A100_v4", "NC48ads_A100_v9"), encoding="utf-8")
    spec = (REPO / "examples" / "azhop-ncv4.yaml").read_text(encoding="utf-8")
    (tmp_path / "cluster.yaml").write_text(spec.replace("Standard_NC48ads_A100_v4", "Standard_NC48ads_A100_v9"),
                                           encoding="utf-8")
    (tmp_path / "nccl.conf").write_text("NCCL_DEBUG=WARN\n", encoding="utf-8")
    shutil.copy(REPO / "tests" / "fixtures" / "nccl_logs" / "azhop-nc48v4-slurm-topo.log", tmp_path / "run.log")
    monkeypatch.chdir(tmp_path)
    return tmp_path


@pytest.mark.parametrize("command", sorted(COMMANDS))
def test_every_command_that_reads_skus_takes_sku_dir_with_one_help(command):
    result = runner.invoke(app, [command, "--help"], terminal_width=400)
    assert result.exit_code == 0
    assert "--sku-dir" in result.output and " ".join(SKU_DIR_HELP.split()[:6]) in " ".join(result.output.split())


@pytest.mark.parametrize("command", sorted(COMMANDS))
def test_a_missing_sku_dir_is_the_same_error_everywhere(project, command):
    result = runner.invoke(app, [*COMMANDS[command], "--sku-dir", "no-such-dir"])
    assert result.exit_code == 2, result.output
    assert "HPC101" in result.output and "SKU directory no-such-dir does not exist" in result.output, result.output


@pytest.mark.parametrize("command", sorted(COMMANDS))
def test_a_sku_from_sku_dir_is_known_everywhere(project, command):
    result = runner.invoke(app, [*COMMANDS[command], "--sku-dir", "my-skus"])
    assert "unknown SKU" not in result.output, result.output
    assert result.exit_code in (0, 1), result.output  # 1: build --check of a spec never built / a slow log


@pytest.mark.parametrize("command", sorted(COMMANDS))
def test_the_settings_sku_dir_is_read_by_every_command(project, command):
    (project / ".hpcconf.toml").write_text('sku-dir = ["my-skus"]\n', encoding="utf-8")
    result = runner.invoke(app, COMMANDS[command])
    assert "unknown SKU" not in result.output, result.output
    assert result.exit_code in (0, 1), result.output


def test_a_bad_sku_file_is_located_for_lint_as_for_init(project):
    (project / "my-skus" / "Standard_NC48ads_A100_v9.yaml").write_text("name: Standard_NC48ads_A100_v9\ngpu: 3\n",
                                                                     encoding="utf-8")
    outputs = [runner.invoke(app, [*COMMANDS[c], "--sku-dir", "my-skus"]) for c in ("init", "lint")]
    for result in outputs:
        assert result.exit_code == 2, result.output
        assert "my-skus/Standard_NC48ads_A100_v9.yaml:2:" in result.output and "HPC100" in result.output
    lint_json = runner.invoke(app, [*COMMANDS["lint"], "--sku-dir", "my-skus", "--format", "json"])
    assert "HPC100" in json.loads(lint_json.stdout)["usage_error"]
