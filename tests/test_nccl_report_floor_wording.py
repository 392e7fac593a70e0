"""What nccl-report and the jobs say they judge against matches what they do: a published floor where a
public health check sets one, else one derived from the SKU's links (hpcconf.resolve.nccl_verdict), and the
--baseline tolerance is credited to the nccl-tests check it comes from (NCCL_TESTS_MIN_BW, not -G)."""

from __future__ import annotations

import subprocess
from pathlib import Path

import pytest
from typer.testing import CliRunner

from hpcconf.cli import app
from hpcconf.nccl_report import baseline

REPO = Path(__file__).resolve().parents[1]
NCCL_TESTS = Path("/work/.mirror/NVIDIA+nccl-tests/repo")


def test_the_cli_help_names_both_kinds_of_floor():
    result = CliRunner().invoke(app, ["nccl-report", "--help"], terminal_width=200)
    assert result.exit_code == 0
    text = " ".join(result.output.split())
    assert "published or derived" in text
    assert "NCCL_TESTS_MIN_BW" in text and "check_avg_bw" not in text


def test_the_docs_intro_names_both_kinds_of_floor():
    intro = " ".join((REPO / "docs" / "nccl-report.md").read_text(encoding="utf-8").split("## What it reads")[0].split())
    assert "**published** where a public health check sets one, else **derived**" in intro


def test_the_generated_sbatch_comment_names_both_kinds_of_floor():
    scripts = sorted((REPO / "out").glob("*/slurm/*/*.sbatch"))
    assert scripts
    for script in scripts:
        text = script.read_text(encoding="utf-8")
        assert "the published busbw floor" not in text, script
        assert "(published, else derived from its links)" in text, script


def test_the_baseline_tolerance_cites_nccl_tests_min_bw_check():
    doc = baseline.__doc__ or ""
    assert "NCCL_TESTS_MIN_BW" in doc and "-G" not in doc
    assert baseline.DEFAULT_TOLERANCE == 0.9


@pytest.mark.skipif(not NCCL_TESTS.is_dir(), reason="needs the NVIDIA/nccl-tests mirror")
def test_the_cited_check_is_nccl_tests_own_at_v2_19_6():
    def show(path: str) -> str:
        return subprocess.run(["git", f"--git-dir={NCCL_TESTS}", "show", f"v2.19.6:{path}"], capture_output=True,
                              text=True, check=True).stdout
    common, util = show("src/common.cu"), show("src/util.cu")
    assert 'getenv("NCCL_TESTS_MIN_BW")' in common and "bw[0] < check_avg_bw*(0.9)" in common
    assert "bw[0] < check_avg_bw*(0.9) ? \"FAILED\"" in util
    assert '{"cudagraph", required_argument, 0, \'G\'}' in common  # -G is not the bandwidth check
