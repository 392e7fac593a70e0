"""Documented input limits (docs/security.md): each refusal is quick, cheap and located.

The numbers come from the page's "Limits" table, never from the constants under test: a limit
changed in the code and not on the page (or the other way round) fails here. Sizes are bytes of
the file as read (UTF-8), so multi-byte characters count as what they weigh."""

from __future__ import annotations

import re
import time
from pathlib import Path

import pytest
from typer.testing import CliRunner

from hpcconf.cli import app
from hpcconf.diagnostics import HpcconfError
from hpcconf.spec.load import load_spec
from hpcconf.yamlpos import load_documents

REPO = Path(__file__).resolve().parents[1]
SPEC = (REPO / "examples" / "ndmv4-aks.yaml").read_text()


def _documented_limits() -> dict[str, int]:
    """docs/security.md's Limits table: limit -> its number (``1 MiB`` -> 1048576, ``200,000`` -> 200000)."""
    text = (REPO / "docs" / "security.md").read_text(encoding="utf-8")
    table = text[text.index("## Limits"):]
    limits = {}
    for limit, value in re.findall(r"^\| ([^|]+?) \| ([^|]+?) \|", table, re.MULTILINE):
        number = re.fullmatch(r"([\d,]+)( MiB)?", value.strip())
        if number:
            limits[limit] = int(number.group(1).replace(",", "")) * (1 << 20 if number.group(2) else 1)
    return limits


LIMITS = _documented_limits()
MAX_SPEC_BYTES = LIMITS["spec size"]
MAX_YAML_BYTES = LIMITS["YAML file size (spec, values, manifests linted)"]
MAX_YAML_DEPTH = LIMITS["YAML nesting depth"]
MAX_EXPANDED_NODES = LIMITS["YAML values after alias expansion"]


def test_the_documented_limits_are_the_ones_tested():
    assert (MAX_SPEC_BYTES, MAX_YAML_BYTES, MAX_YAML_DEPTH, MAX_EXPANDED_NODES) == (1 << 20, 1 << 20, 64, 200_000)


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


def _yaml_of_bytes(size: int, char: str = "x") -> str:
    """A one-key YAML text of exactly ``size`` UTF-8 bytes, its value made of ``char``."""
    head, tail = "a: ", "\n"
    width = len(char.encode())
    body = size - len(head) - len(tail)
    return head + char * (body // width) + "y" * (body % width) + tail


@pytest.mark.parametrize("char", ["x", "\u00e9", "\u20ac", "\U0001f600"])  # 1, 2, 3 and 4 bytes in UTF-8
def test_yaml_size_limit_is_bytes_of_the_file(char):
    at_limit = _yaml_of_bytes(MAX_YAML_BYTES, char)
    assert len(at_limit.encode()) == MAX_YAML_BYTES
    assert load_documents(at_limit, "f.yaml")  # exactly the limit: read
    with pytest.raises(HpcconfError) as info:
        load_documents(_yaml_of_bytes(MAX_YAML_BYTES + 1, char), "f.yaml")
    [diag] = info.value.diagnostics
    assert (diag.code, diag.line, diag.column) == ("HPC001", 1, 1) and "larger than 1024 KiB" in diag.message


def test_multi_byte_yaml_over_the_limit_is_refused_by_lint(tmp_path):
    # 400,000 characters of 3 bytes: 1.2 MB, fewer characters than the limit has bytes
    path = tmp_path / "values.yaml"
    path.write_text("a: " + "\u20ac" * 400_000 + "\n", encoding="utf-8")
    result = CliRunner().invoke(app, ["lint", str(path), "--format", "json"])
    assert "larger than 1024 KiB; refused unparsed" in result.output, result.output


def test_a_spec_of_exactly_the_limit_is_read_and_one_byte_more_refused(tmp_path):
    spec = tmp_path / "s.yaml"
    padding = MAX_SPEC_BYTES - len(SPEC.encode()) - len("# \n")
    spec.write_text(SPEC + "# " + "x" * padding + "\n")
    assert spec.stat().st_size == MAX_SPEC_BYTES
    load_spec(spec)  # the limit itself: read
    spec.write_text(SPEC + "# " + "x" * (padding + 1) + "\n")
    with pytest.raises(HpcconfError) as info:
        load_spec(spec)
    # the safe reader refuses it on fstat, before reading (HPC094, docs/security.md)
    assert info.value.diagnostics[0].code == "HPC094" and "larger than 1,024 KiB" in info.value.diagnostics[0].message


def test_nesting_at_the_documented_depth_is_read_one_more_refused():
    # the top-level mapping is level 1: D - 1 brackets inside it make D levels
    assert load_documents("a: " + "[" * (MAX_YAML_DEPTH - 1) + "]" * (MAX_YAML_DEPTH - 1) + "\n", "f.yaml")
    block = "a:\n" + "".join(" " * (2 * i) + "-\n" for i in range(MAX_YAML_DEPTH - 1))
    assert load_documents(block, "f.yaml")
    message, line, column = _refusal("a: " + "[" * MAX_YAML_DEPTH + "]" * MAX_YAML_DEPTH + "\n")
    assert f"nested more than {MAX_YAML_DEPTH} levels deep" == message and (line, column) == (1, 3 + MAX_YAML_DEPTH)


def test_values_at_the_documented_count_are_read_one_more_refused():
    # the mapping, its key and the sequence are three values: N - 3 items make N
    items = MAX_EXPANDED_NODES - 3
    assert load_documents("x: [" + ",".join("1" * 1 for _ in range(items)) + "]\n", "f.yaml")
    message, _, _ = _refusal("x: [" + ",".join("1" for _ in range(items + 1)) + "]\n")
    assert message == f"more than {MAX_EXPANDED_NODES:,} values"


def test_alias_expansion_counts_against_the_documented_values():
    # 10 anchors of 10 each, nested 6 deep: a million values after expansion, 70 lines of text
    lines = ["a0: &a0 [" + ",".join(["x"] * 10) + "]"]
    lines += [f"a{i}: &a{i} [" + ",".join([f"*a{i - 1}"] * 10) + "]" for i in range(1, 7)]
    with pytest.raises(HpcconfError) as info:
        load_documents("\n".join(lines) + "\n", "f.yaml")
    assert f"{MAX_EXPANDED_NODES:,}" in info.value.diagnostics[0].message


# Plain YAML is read from the C parser's events (yamlpos._FastReader); anything with a tag, anchor or
# alias goes to the round-trip loader, whose pre-scan (yamlpos._refuse_deep_nesting) checks the same
# limits. A tag on the outer collection sends the same text down the second path, counts unchanged.
READERS = pytest.mark.parametrize("tag", ["", "!!seq "], ids=["fast-reader", "round-trip"])


@READERS
def test_depth_limit_on_both_readers(tag):
    inside = MAX_YAML_DEPTH - 1
    assert load_documents("a: " + tag + "[" * inside + "]" * inside + "\n", "f.yaml")[0].data["a"]
    message, line, column = _refusal("a: " + tag + "[" * MAX_YAML_DEPTH + "]" * MAX_YAML_DEPTH + "\n")
    assert message == f"nested more than {MAX_YAML_DEPTH} levels deep"
    assert (line, column) == (1, 3 + len(tag) + MAX_YAML_DEPTH)


@READERS
def test_value_limit_on_both_readers(tag):
    items = MAX_EXPANDED_NODES - 3  # the mapping, its key and the sequence are the other three
    assert len(load_documents("x: " + tag + "[" + ",".join("1" for _ in range(items)) + "]\n", "f.yaml")[0].data["x"]) \
        == items
    message, line, _ = _refusal("x: " + tag + "[" + ",".join("1" for _ in range(items + 1)) + "]\n")
    assert message == f"more than {MAX_EXPANDED_NODES:,} values" and line == 1


def test_without_the_c_parser_only_deep_looking_text_is_prescanned():
    from hpcconf.yamlpos import _could_nest_deeply

    flat = "a: " + "[" * MAX_YAML_DEPTH + "]" * MAX_YAML_DEPTH  # exactly the limit of brackets: cannot be deeper
    assert not _could_nest_deeply(flat) and _could_nest_deeply("a: " + "[" * (MAX_YAML_DEPTH + 1))
    # indentation counts blanks and the "- ", "? ", ": " indicators before the first word
    assert not _could_nest_deeply(" " * (MAX_YAML_DEPTH - 2) + "- x\n")
    assert _could_nest_deeply(" " * (MAX_YAML_DEPTH - 1) + "- x\n")


@READERS
def test_depth_counts_down_when_a_collection_closes(tag):
    # a closed sibling gives its level back once, not twice: the next branch is still counted from its parent
    fits = "a: " + tag + "[[], " + "[" * (MAX_YAML_DEPTH - 2) + "]" * (MAX_YAML_DEPTH - 2) + "]\n"  # D levels
    assert load_documents(fits, "f.yaml")
    message, _, _ = _refusal("a: " + tag + "[[], " + "[" * (MAX_YAML_DEPTH - 1) + "]" * (MAX_YAML_DEPTH - 1) + "]\n")
    assert message == f"nested more than {MAX_YAML_DEPTH} levels deep"
