"""hpcconf lint on the real-world corpus of tests/corpus/manifest.yaml (issue 20 item 6), held to the verdicts.

The files are third-party and not in the repository: a local copy lives at $HPCCONF_CORPUS (default
/work/corpus/files); tools/corpus_score.py checks each file's sha256 and lints it alone. Half 1 (the
repositories it was tuned on) is held here against tests/corpus/verdicts.yaml; half 2 is scored once,
by a reviewer, and is not held by this test.
"""

from __future__ import annotations

import importlib.util
from pathlib import Path

import pytest

TOOL = Path(__file__).resolve().parents[1] / "tools" / "corpus_score.py"
# False alarms whose cause another item of issue 20 owns (kind detection, item 1): they may come back until
# that work lands; every other false warning or error fails the test.
OWNED_ELSEWHERE = {
    "HPC091": "an unrecognised YAML (Ansible, AzureML, Ramble): judged false as a warning; now info",
    "HPC001": "a Helm template parsed as YAML: kind detection, item 1",
}


def _tool():
    spec = importlib.util.spec_from_file_location("corpus_score", TOOL)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_halves_are_split_by_repository():
    tool = _tool()
    rows = tool.load_yaml(tool.MANIFEST)["files"]
    assert len(rows) >= 150 and len({r["repo"] for r in rows}) >= 30
    for row in rows:
        assert row["half"] == tool.half_of(row["repo"]), row["file"]
        assert len(row["commit"]) == 40 and len(row["sha256"]) == 64


def test_first_half_holds_its_verdicts():
    tool = _tool()
    rows = tool.entries(1)
    if not tool.DEFAULT_CORPUS.is_dir():
        pytest.skip(f"the corpus copy {tool.DEFAULT_CORPUS} is absent (third-party files; set HPCCONF_CORPUS)")
    assert not tool.check_copy(tool.DEFAULT_CORPUS, rows)
    found = tool.lint_all(tool.DEFAULT_CORPUS, rows)
    _, problems = tool.score(found, tool.load_yaml(tool.VERDICTS))
    problems = [p for p in problems if not any(f"'{code}'" in p and "false alarm" in p for code in OWNED_ELSEWHERE)]
    assert not problems, "\n".join(problems)
