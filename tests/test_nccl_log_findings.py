"""nccl-tests' own warnings and error markers are findings of ``hpcconf nccl-report`` (file:line, severity):
none on the real logs (the 2 x H200 recording in ../shared/upstream/nccl/h200x2-nccl-tests/, the public
excerpts in tests/fixtures/nccl_logs/), each on a copy of a real log degraded the way nccl-tests prints it
(the strings of NVIDIA/nccl-tests src/common.h, src/common.cu and src/util.cu @v2.19.6)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from typer.testing import CliRunner

from hpcconf.cli import app
from hpcconf.nccl_report.findings import SEVERITY, log_findings
from hpcconf.parsers.nccl_tests_log import parse_text

REPO = Path(__file__).resolve().parents[1]
H200X2 = REPO.parent / "shared" / "upstream" / "nccl" / "h200x2-nccl-tests"
FIXTURES = REPO / "tests" / "fixtures" / "nccl_logs"
REAL = sorted(H200X2.glob("*.txt")) + sorted(FIXTURES.glob("*.log"))
runner = CliRunner()

needs_recording = pytest.mark.skipif(not (H200X2 / "all_gather.txt").is_file(), reason="needs ../shared/upstream/nccl")


def _lines() -> list[str]:
    return (H200X2 / "all_gather.txt").read_text(encoding="utf-8").splitlines()


def _line_of(lines: list[str], start: str) -> int:
    return next(i for i, line in enumerate(lines) if line.startswith(start))


def _findings(lines: list[str]) -> list[tuple[int, str, str]]:
    return [(f.line, f.severity, f.kind) for f in log_findings(parse_text("\n".join(lines) + "\n", "x.log", "all_gather"))]


def _report(tmp_path: Path, lines: list[str], *args: str):
    log = tmp_path / "all_gather.log"
    log.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return runner.invoke(app, ["nccl-report", *args, str(log)])


@needs_recording
@pytest.mark.parametrize("log", REAL, ids=lambda p: p.name)
def test_no_finding_on_a_real_log(log):
    assert log_findings(parse_text(log.read_text(encoding="utf-8"), str(log), "all_reduce")) == []


@needs_recording
def test_an_unknown_type_replaced_by_float_is_a_warning_not_a_failure(tmp_path):
    """nccl-tests measured float correctly and exits 0 (common.h only prints): the bf16 measurement is missing."""
    lines = _lines()
    lines.insert(0, "invalid type bf16, defaulting to float .. ")  # printed while nccl-tests reads -d
    assert _findings(lines) == [(1, "warning", "invalid-type")]
    result = _report(tmp_path, lines)
    assert result.exit_code == 0, result.output
    assert "all_gather.log:1: warning: nccl-tests did not know -d bf16 and ran float instead" in result.output
    assert "the bf16 measurement asked for is missing" in result.output


@needs_recording
def test_an_unknown_op_replaced_by_sum_is_a_warning():
    lines = _lines()
    lines.insert(0, "invalid op max2, defaulting to sum .. ")
    assert _findings(lines) == [(1, "warning", "invalid-op")]


@needs_recording
def test_wrong_data_and_out_of_bounds_are_errors(tmp_path):
    lines = _lines()
    row = _line_of(lines, "  1073741824")
    fields = lines[row].split()
    fields[8] = "17"
    lines[row] = "  ".join(fields)
    oob = _line_of(lines, "# Out of bounds values")
    lines[oob] = "# Out of bounds values : 1 FAILED"
    assert _findings(lines) == [(row + 1, "error", "wrong"), (oob + 1, "error", "out-of-bounds")]
    data = json.loads(_report(tmp_path, lines, "--format", "json").output)
    assert data["passed"] is False
    assert [(f["line"], f["kind"]) for f in data["findings"]] == [(row + 1, "wrong"), (oob + 1, "out-of-bounds")]


@needs_recording
def test_nccl_tests_min_bw_check_failing_is_an_error():
    lines = _lines()
    avg = _line_of(lines, "# Avg bus bandwidth")
    lines[avg] = "# Avg bus bandwidth    : 91.615 FAILED"
    assert _findings(lines) == [(avg + 1, "error", "min-bw-failed")]


@needs_recording
def test_a_run_cut_short_is_info_and_does_not_fail(tmp_path):
    lines = _lines()[:_line_of(_lines(), "  1073741824")]  # killed before its last size and footer
    assert _findings(lines) == [(len(lines), "info", "no-footer")]
    result = _report(tmp_path, lines)
    assert result.exit_code == 0
    assert f"all_gather.log:{len(lines)}: info: the table ends without nccl-tests' '# Avg bus bandwidth' line" in result.output


@needs_recording
def test_a_test_that_stopped_on_an_nccl_error_is_an_error(tmp_path):
    lines = _lines()[:_line_of(_lines(), "  1073741824")]
    lines += ["vm: Test NCCL failure common.cu:1136 'unhandled cuda error (run with NCCL_DEBUG=INFO for details) / '",
              " .. vm pid 1333: Test failure common.cu:1012"]
    assert _findings(lines) == [(len(lines) - 2, "info", "no-footer"), (len(lines) - 1, "error", "test-failure"),
                                (len(lines), "error", "test-failure")]
    assert _report(tmp_path, lines).exit_code == 1


@needs_recording
def test_a_cuda_failure_before_any_row_is_named_in_the_error(tmp_path):
    lines = _lines()[:_line_of(_lines(), "#       size")]
    lines.append("vm: Test CUDA failure common.cu:1047 'out of memory'")
    result = _report(tmp_path, lines)
    assert result.exit_code == 2
    assert f"all_gather.log:{len(lines)}: error: the test stopped on an error: vm: Test CUDA failure" in result.output


@needs_recording
def test_an_nccl_warning_is_info():
    lines = _lines()
    at = _line_of(lines, "#       size")
    lines.insert(at, "vm:1333:1340 [0] NCCL WARN NET/IB : No device found.")
    assert _findings(lines) == [(at + 1, "info", "nccl-warn")]


def test_every_kind_is_documented_with_its_upstream_source():
    import hpcconf.nccl_report.findings as module

    doc = module.__doc__ or ""
    assert "NVIDIA/nccl-tests at v2.19.6" in doc
    for kind, severity in SEVERITY.items():
        assert f"``{kind}`` ({severity})" in doc, kind
    docs = (REPO / "docs" / "nccl-report.md").read_text(encoding="utf-8")
    for kind in SEVERITY:
        assert f"`{kind}`" in docs, kind
