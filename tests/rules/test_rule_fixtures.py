"""Every rule's fixtures: ``tests/rules/<CODE>/bad.*`` yields exactly the expected findings of
CODE, ``good.*`` yields none of CODE. See tests/rules/README.md."""

from __future__ import annotations

from pathlib import Path

import pytest
from fixture_context import fixture_context
from ruamel.yaml import YAML

from hpcconf.lint.engine import lint_paths
from hpcconf.lint.registry import load_rules

HERE = Path(__file__).resolve().parent
# Findings no input file can provoke on purpose (a rule crashing is a bug, tested in tests/lint).
NO_FIXTURE = {"HPC090", "HPC000"}  # a crash, an unreadable path: tested in tests/lint and test_spec_errors
# File-system findings: a fifo, a device, a link into /proc, a 4 MiB file or an unlistable directory cannot be a
# committed fixture (HPC096 is sku import's); tests/test_hostile_files.py plants each one.
NO_FIXTURE |= {"HPC092", "HPC093", "HPC094", "HPC095", "HPC096"}
CODES = sorted(p.name for p in HERE.iterdir() if p.is_dir() and (p / "expect.yaml").exists())


def _expect(code: str) -> dict:
    return YAML(typ="safe").load((HERE / code / "expect.yaml").read_text(encoding="utf-8")) or {}


def _fixture(code: str, stem: str) -> Path:
    found = sorted(p for p in (HERE / code).iterdir() if p.name.split(".")[0] == stem)
    assert len(found) == 1, f"tests/rules/{code} needs exactly one {stem}.* file, found {[p.name for p in found]}"
    return found[0]


def _lint(code: str, stem: str) -> list:
    expect = _expect(code)
    ctx = fixture_context(expect)
    result = lint_paths([str(_fixture(code, stem))], ctx, forced_kind=expect.get("kind"))
    return [f for f in result.findings if f.code == code]


@pytest.mark.parametrize("code", CODES)
def test_bad_fixture_yields_expected_findings(code):
    expected = _expect(code)["findings"]
    assert expected, f"tests/rules/{code}/expect.yaml lists no findings"
    found = _lint(code, "bad")
    # A `bad/` directory (several files, for cross-file rules) names the file of each finding.
    got = sorted((Path(f.file).name if any("file" in e for e in expected) else "", f.line, f.column) for f in found)
    want = sorted((e.get("file", ""), e["line"], e.get("column")) for e in expected)
    assert len(got) == len(want), f"{code}: expected {want}, got {got}: {[f.message for f in found]}"
    for (file, line, column), (want_file, want_line, want_column) in zip(got, want):
        assert (file, line) == (want_file, want_line) and (want_column is None or column == want_column), \
            (code, got, want)
    for finding in found:
        assert finding.line and finding.line >= 1 and finding.message and finding.name


@pytest.mark.parametrize("code", CODES)
def test_good_fixture_yields_none(code):
    found = _lint(code, "good")
    assert not found, f"{code}: good fixture yields {[(f.line, f.message) for f in found]}"


def test_every_rule_has_fixtures():
    missing = [code for code in load_rules() if code not in CODES and code not in NO_FIXTURE]
    assert not missing, f"rules without tests/rules/<CODE>/ fixtures: {missing}"


def test_every_fixture_dir_is_a_rule():
    unknown = [code for code in CODES if code not in load_rules()]
    assert not unknown, f"fixture dirs for unknown rules: {unknown}"
