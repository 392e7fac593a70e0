"""Rendered findings per rule: ``tests/rules/<CODE>/expect.snap`` is the text report (`hpcconf lint`'s
default format) of CODE's findings in the bad fixture: location, severity, name, message, the
quoted line with its caret span (end column) and the hint. ``test_rule_fixtures.py`` pins where
findings are; this pins what users read, so a reworded message or a lost hint shows in review.

Update after an intended change (a new rule, a renamed one, a better message)::

    pytest tests/rules --update-snapshots        # or HPCCONF_UPDATE_SNAPSHOTS=1 pytest tests/rules

then review ``git diff tests/rules``. An update run fails each test whose snapshot it rewrote
(naming the file), so a blind regeneration never passes in the run that made it, and with ``CI``
set it is refused outright (tests/conftest.py). Severities and places are pinned by hand in
``expect.yaml`` as well, which no update touches. The snapshot is generic: any directory with an
``expect.yaml`` gets one, so rules added, moved or renamed only need the update run.
"""

from __future__ import annotations

import difflib
import os
from pathlib import Path

import pytest
from fixture_context import fixture_context
from ruamel.yaml import YAML

from hpcconf.diagnostic_text import SourceCache, render_text
from hpcconf.diagnostics import Diagnostic
from hpcconf.lint.engine import lint_paths

HERE = Path(__file__).resolve().parent
SNAPSHOT = "expect.snap"
CODES = sorted(p.name for p in HERE.iterdir() if p.is_dir() and (p / "expect.yaml").exists())


def _updating(config: pytest.Config) -> bool:
    return bool(config.getoption("--update-snapshots")) or os.environ.get("HPCCONF_UPDATE_SNAPSHOTS") == "1"


def _render(code: str, directory: Path, name: str, options: dict) -> list[str]:
    cwd = Path.cwd()
    os.chdir(directory)
    try:
        targets = [f"{name}/{p}" for p in options["paths"]] if options.get("paths") else [name]
        result = lint_paths(targets, fixture_context(options), forced_kind=options.get("kind"))
    finally:
        os.chdir(cwd)
    findings = sorted((f for f in result.findings if f.code == code), key=Diagnostic.sort_key)
    sources = SourceCache(texts=dict(result.sources))
    return [render_text(f, sources) for f in findings]


def render_bad_fixture(code: str) -> str:
    """CODE's findings in ``bad.*`` (or ``bad/``) and in the ``bad-*`` fixtures of ``cases:`` as the
    text report shows them, paths relative to the rule's directory so the snapshot does not depend
    on where the checkout lives."""
    directory = HERE / code
    expect = YAML(typ="safe").load((directory / "expect.yaml").read_text(encoding="utf-8")) or {}
    (bad,) = [p for p in directory.iterdir() if p.name.split(".")[0] == "bad"]
    rendered = _render(code, directory, bad.name, expect)
    shared = {k: v for k, v in expect.items() if k not in ("findings", "cases", "catches", "spares", "context")}
    for case in expect.get("cases") or []:
        if case.get("findings"):
            rendered += _render(code, directory, case["file"], {**shared, **case})
    text = "\n\n".join(rendered) + "\n"
    # A few findings name resolved paths (a SKU file, a missing directory): keep them checkout-independent.
    return text.replace(f"{directory}/", "").replace(str(directory), ".")


@pytest.mark.parametrize("code", CODES)
def test_rendered_findings_match_snapshot(code, request):
    rendered = render_bad_fixture(code)
    snapshot = HERE / code / SNAPSHOT
    if _updating(request.config):
        if not snapshot.exists() or snapshot.read_text(encoding="utf-8") != rendered:
            snapshot.write_text(rendered, encoding="utf-8")
            pytest.fail(f"{code}: rewrote tests/rules/{code}/{SNAPSHOT}; review `git diff tests/rules/{code}` "
                        "and rerun without --update-snapshots", pytrace=False)
        return
    assert snapshot.exists(), (f"tests/rules/{code} has no {SNAPSHOT}: run `pytest tests/rules --update-snapshots` "
                               "and review the file")
    recorded = snapshot.read_text(encoding="utf-8")
    if recorded != rendered:
        diff = "".join(difflib.unified_diff(recorded.splitlines(keepends=True), rendered.splitlines(keepends=True),
                                            f"tests/rules/{code}/{SNAPSHOT}", "rendered now"))
        pytest.fail(f"{code}: the rendered findings changed (if intended: pytest tests/rules "
                    f"--update-snapshots):\n{diff}", pytrace=False)


def test_no_snapshot_without_fixtures():
    """A snapshot left behind by a removed or renamed rule directory."""
    orphans = sorted(p.parent.name for p in HERE.glob(f"*/{SNAPSHOT}") if p.parent.name not in CODES)
    assert not orphans, f"snapshots without expect.yaml (delete them): {orphans}"
