"""Documented input limits (docs/security.md): each refusal is quick, cheap and located."""

from __future__ import annotations

import time
from pathlib import Path

import pytest
from typer.testing import CliRunner

from hpcconf.cli import app
from hpcconf.diagnostics import HpcconfError
from hpcconf.spec.load import MAX_SPEC_BYTES, load_spec
from hpcconf.yamlpos import MAX_EXPANDED_NODES, MAX_YAML_DEPTH, load_documents

REPO = Path(__file__).resolve().parents[1]
SPEC = (REPO / "examples" / "ndmv4-aks.yaml").read_text()


def _refusal(text: str) -> tuple[str, int, int]:
    with pytest.raises(HpcconfError) as info:
        load_documents(text, "f.yaml")
    [diag] = info.value.diagnostics
    return diag.message, diag.line, diag.column


def test_deep_flow_nesting_is_refused_where_it_gets_too_deep():
    message, line, column = _refusal("a: " + "[" * 5000 + "]" * 5000)
    assert f"more than {MAX_YAML_DEPTH} levels" in message and (line, column) == (1, 3 + MAX_YAML_DEPTH)


def test_deep_block_nesting_is_refused_with_its_line():
    message, line, _ = _refusal("a:\n" + "".join(" " * i + "-\n" for i in range(0, 400, 2)))
    assert "levels deep" in message and line == MAX_YAML_DEPTH + 1


def test_too_many_values_are_refused_before_the_slow_parse():
    start = time.process_time()
    message, line, _ = _refusal("x: [" + ",".join("1" for _ in range(MAX_EXPANDED_NODES + 10)) + "]\n")
    assert f"more than {MAX_EXPANDED_NODES:,} values" in message and line == 1
    assert time.process_time() - start < 10


def test_an_oversized_spec_is_refused_unread(tmp_path):
    spec = tmp_path / "big.yaml"
    spec.write_text(SPEC + "# " + "x" * MAX_SPEC_BYTES + "\n")
    with pytest.raises(HpcconfError) as info:
        load_spec(spec)
    [diag] = info.value.diagnostics
    assert diag.code == "HPC094" and (diag.line, diag.column) == (1, 1) and "larger than 1,024 KiB" in diag.message


def test_a_non_utf8_spec_names_the_line_and_column(tmp_path):
    spec = tmp_path / "latin1.yaml"
    spec.write_bytes(SPEC.encode().replace(b"metadata:", b"metadata: # r\xe9gl\xe9", 1))
    result = CliRunner().invoke(app, ["build", str(spec), "-o", str(tmp_path / "out")])
    line = SPEC.splitlines().index(next(l for l in SPEC.splitlines() if l.startswith("metadata:"))) + 1
    assert result.exit_code == 2 and f"latin1.yaml:{line}:14: error[HPC000]" in result.output, result.output


def test_lint_names_line_and_column_of_a_non_utf8_byte(tmp_path):
    path = tmp_path / "nccl.conf"
    path.write_bytes(b"NCCL_DEBUG=WARN\nNCCL_ALGO=R\xe9ing\n")
    result = CliRunner().invoke(app, ["lint", str(path)])
    assert result.exit_code == 2 and "nccl.conf:2:12: not a UTF-8 text file" in result.output


@pytest.mark.parametrize("bad", ["\u2028", "\x85", "\r", "\x00", "\u202e", "\x1b[31m"])
def test_line_breaking_and_control_characters_are_refused_in_any_string(tmp_path, bad):
    spec = tmp_path / "s.yaml"
    escaped = bad.encode("unicode_escape").decode().replace("\\x", "\\x")
    spec.write_text(SPEC + f'nccl_env: {{NCCL_DEBUG: "WARN{escaped}x"}}\n')
    with pytest.raises(HpcconfError) as info:
        load_spec(spec)
    [diag] = info.value.diagnostics
    assert diag.code == "HPC005" and "nccl_env.NCCL_DEBUG" in diag.message and diag.line == SPEC.count("\n") + 1
