"""Golden outputs: out/<cluster>/ is exactly what building each example produces, byte for byte.

Reviewers read generated diffs in out/, so out/ must never drift from the examples.
Regenerate after an intended change with: hpcconf build examples/*.yaml
"""

from __future__ import annotations

from pathlib import Path

import pytest

from hpcconf.output_dir import compare, expected_files
from hpcconf.pipeline import compile_spec

REPO = Path(__file__).resolve().parents[1]
EXAMPLES = sorted((REPO / "examples").glob("*.yaml"))


@pytest.mark.parametrize("example", EXAMPLES, ids=lambda p: p.stem)
def test_out_matches_a_fresh_build(example, monkeypatch):
    monkeypatch.chdir(REPO)
    build = compile_spec(example.relative_to(REPO))
    comparison = compare(build, REPO / "out" / build.name)
    problems = {"missing": comparison.new, "stale": comparison.stale, "edited": comparison.edited, "extra": comparison.extra}
    assert comparison.clean, f"out/{build.name} differs from a build of {example.name}: {problems}\n" + "".join(
        comparison.diffs.values())[:4000]


@pytest.mark.parametrize("example", EXAMPLES, ids=lambda p: p.stem)
def test_building_twice_gives_the_same_bytes(example, tmp_path, monkeypatch):
    monkeypatch.chdir(REPO)
    first = expected_files(compile_spec(example.relative_to(REPO)))
    monkeypatch.chdir(tmp_path)  # another working directory must not change a byte
    second = expected_files(compile_spec(example))
    assert first == second


def test_every_example_has_committed_output():
    for example in EXAMPLES:
        build = compile_spec(example)
        assert (REPO / "out" / build.name / ".hpcconf-manifest.json").is_file(), f"no out/ for {example.name}"
