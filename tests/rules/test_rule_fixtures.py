"""Every rule's fixtures: ``tests/rules/<CODE>/bad.*`` yields exactly the expected findings of
CODE (line, column and severity), ``good.*`` yields none of CODE; the extra fixtures of
``cases:`` yield exactly theirs; every form ``catches:`` lists is a sentence of the rule page's
"What it catches" and a finding in a fixture. See tests/rules/README.md."""

from __future__ import annotations

import re
from pathlib import Path

import pytest
from fixture_context import fixture_context
from ruamel.yaml import YAML

from hpcconf.lint.engine import lint_paths
from hpcconf.lint.rule_loading import load_rules

HERE = Path(__file__).resolve().parent
# Findings no input file can provoke on purpose (a rule crashing is a bug, tested in tests/lint).
NO_FIXTURE = {"HPC090", "HPC000"}  # a crash, an unreadable path: tested in tests/lint and test_spec_errors
# File-system findings: a fifo, a device, a link into /proc, a 4 MiB file or an unlistable directory cannot be a
# committed fixture (HPC096 is sku import's); tests/test_hostile_files.py plants each one.
NO_FIXTURE |= {"HPC092", "HPC093", "HPC094", "HPC095", "HPC096"}
# SPEC062 fires for an accelerator profile without a test-image recipe, and every shipped profile has one:
# tests/test_accelerator_profile.py builds such a profile in memory.
NO_FIXTURE |= {"SPEC062"}
CODES = sorted(p.name for p in HERE.iterdir() if p.is_dir() and (p / "expect.yaml").exists())
SEVERITIES = {"error", "warning", "info"}
# Rules whose expect.yaml does not yet itemise its page's forms under ``catches:``. This list only
# shrinks: a rule leaves it when every form of its "What it catches" has a fixture line.
NOT_YET_ITEMISED = frozenset(Path(HERE / "not_yet_itemised.txt").read_text(encoding="utf-8").split())


def _expect(code: str) -> dict:
    return YAML(typ="safe").load((HERE / code / "expect.yaml").read_text(encoding="utf-8")) or {}


def _fixture(code: str, stem: str) -> Path:
    found = sorted(p for p in (HERE / code).iterdir() if p.name.split(".")[0] == stem)
    assert len(found) == 1, f"tests/rules/{code} needs exactly one {stem}.* file, found {[p.name for p in found]}"
    return found[0]


def lint_fixture(code: str, path: Path, options: dict) -> list:
    ctx = fixture_context(options)
    # ``paths:`` (a case directory's sub-paths): named together on the command line, `hpcconf lint etc/ jobs/`
    targets = [str(path / p) for p in options["paths"]] if options.get("paths") else [str(path)]
    result = lint_paths(targets, ctx, forced_kind=options.get("kind"))
    # A rule that crashes on a fixture reports HPC090 instead of its own code: never a silent pass.
    crashes = [f.message for f in result.findings if f.code == "HPC090"]
    assert not crashes, f"a rule crashed on tests/rules/{code}/{path.name}: {crashes}"
    return [f for f in result.findings if f.code == code]


def _lint(code: str, stem: str) -> list:
    return lint_fixture(code, _fixture(code, stem), _expect(code))


def _severity(finding) -> str:
    return getattr(finding.severity, "value", str(finding.severity))


def _compare(code: str, where: str, found: list, expected: list) -> None:
    """Found findings equal the expected ones: file (for a ``bad/`` directory), line, column, severity."""
    for entry in expected:
        assert entry.get("severity") in SEVERITIES, \
            f"tests/rules/{code}/expect.yaml: {where} entry {entry} needs severity: error|warning|info"
    named = any("file" in e for e in expected)
    got = sorted((Path(f.file).name if named else "", f.line, f.column, _severity(f)) for f in found)
    want = sorted((e.get("file", ""), e["line"], e.get("column"), e["severity"]) for e in expected)
    assert len(got) == len(want), f"{code} {where}: expected {want}, got {got}: {[f.message for f in found]}"
    for (file, line, column, severity), (want_file, want_line, want_column, want_severity) in zip(got, want):
        assert (file, line, severity) == (want_file, want_line, want_severity) and \
            (want_column is None or column == want_column), (code, where, got, want)
    for finding in found:
        assert finding.line and finding.line >= 1 and finding.message and finding.name


@pytest.mark.parametrize("code", CODES)
def test_bad_fixture_yields_expected_findings(code):
    expected = _expect(code)["findings"]
    assert expected, f"tests/rules/{code}/expect.yaml lists no findings"
    _compare(code, "bad", _lint(code, "bad"), expected)


@pytest.mark.parametrize("code", CODES)
def test_good_fixture_yields_none(code):
    found = _lint(code, "good")
    assert not found, f"{code}: good fixture yields {[(f.line, f.message) for f in found]}"


CASES = [(code, case["file"]) for code in CODES for case in _expect(code).get("cases") or []]


@pytest.mark.parametrize("code,file", CASES)
def test_case_fixture_yields_its_findings(code, file):
    """``cases:`` in expect.yaml: more fixtures of one rule (``bad-<form>.*`` / ``good-<form>.*``), each
    with its own findings (none for a good one) and, where needed, its own kind/sku/versions."""
    expect = _expect(code)
    (case,) = [c for c in expect["cases"] if c["file"] == file]
    options = {**{k: v for k, v in expect.items() if k not in ("findings", "cases", "catches", "spares", "context")}, **case}
    path = HERE / code / file
    assert path.exists(), f"tests/rules/{code}/expect.yaml names a missing case file {file}"
    expected = case.get("findings") or []
    assert file.startswith("bad-") == bool(expected), \
        f"{code}/{file}: a bad-* case expects findings, a good-* case none"
    if not expected:
        assert case.get("why"), f"{code}/{file}: a good case says why the form is fine (why:)"
    _compare(code, file, lint_fixture(code, path, options), expected)


def _words(text: str) -> str:
    return re.sub(r"\s+", " ", text).strip()


@pytest.mark.parametrize("code", [c for c in CODES if _expect(c).get("catches")])
def test_every_listed_form_is_on_the_page_and_found_in_a_fixture(code):
    """``catches:`` quotes each form the rule page's "What it catches" names, with the fixture line
    that exercises it: rewording the page or losing the fixture's finding fails here."""
    expect = _expect(code)
    page = _words(load_rules()[code].section("What it catches"))
    assert page, f"{code}: the rule page has no 'What it catches' section"
    bad_name = _fixture(code, "bad").name
    pinned: dict[str, set[int]] = {}  # file -> lines with a pinned finding (a ``bad/`` directory: its files)
    for entry in expect["findings"]:
        pinned.setdefault(entry.get("file", bad_name), set()).add(entry["line"])
    for case in expect.get("cases") or []:
        pinned.setdefault(case["file"], set()).update(e["line"] for e in case.get("findings") or [])
    for item in expect["catches"]:
        form, file, line = _words(item["form"]), item.get("file", bad_name), item["line"]
        assert form in page, f"{code}: catches form {form!r} is not in its page's 'What it catches': {page!r}"
        assert line in pinned.get(file, set()), (
            f"{code}: form {form!r} points at {file}:{line}, where expect.yaml pins no finding "
            f"(pinned there: {sorted(pinned.get(file, set()))})")


def test_itemised_rules_list_only_shrinks():
    itemised = {c for c in CODES if _expect(c).get("catches")}
    stale = sorted(itemised & NOT_YET_ITEMISED)
    assert not stale, f"itemised now, remove from tests/rules/not_yet_itemised.txt: {stale}"
    unlisted = sorted(set(CODES) - itemised - NOT_YET_ITEMISED)
    assert not unlisted, f"rules without catches: in expect.yaml (itemise their page's forms): {unlisted}"


def test_every_rule_has_fixtures():
    missing = [code for code in load_rules() if code not in CODES and code not in NO_FIXTURE]
    assert not missing, f"rules without tests/rules/<CODE>/ fixtures: {missing}"


def test_every_fixture_dir_is_a_rule():
    unknown = [code for code in CODES if code not in load_rules()]
    assert not unknown, f"fixture dirs for unknown rules: {unknown}"
