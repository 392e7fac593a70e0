"""Benchmarks (pytest-benchmark), not timed tests: hpcconf runs in pre-commit on every commit.

Run:  python -m pytest benchmarks --benchmark-enable --benchmark-only
Numbers from a run are kept in docs/benchmarks.md.
"""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from hpcconf.pipeline import compile_spec

REPO = Path(__file__).resolve().parents[1]
EXAMPLES = sorted((REPO / "examples").glob("*.yaml"))


@pytest.mark.parametrize("example", EXAMPLES, ids=lambda p: p.stem)
def test_compile_example(benchmark, example):
    build = benchmark(compile_spec, example)
    assert build.artifacts


def test_lint_generated_tree(benchmark):
    from hpcconf.lint.context import LintContext
    from hpcconf.lint.engine import lint_paths

    result = benchmark(lambda: lint_paths([str(REPO / "out")], LintContext()))
    assert result is not None


@pytest.mark.parametrize("example", EXAMPLES, ids=lambda p: p.stem)
def test_lint_example_spec(benchmark, example):
    from hpcconf.lint.context import LintContext
    from hpcconf.lint.engine import lint_paths

    benchmark(lambda: lint_paths([str(example)], LintContext()))


def _cli(*args: str) -> None:
    subprocess.run([sys.executable, "-m", "hpcconf.cli", *args], cwd=REPO, check=False,
                   stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)


def test_cli_cold_start_version(benchmark):
    benchmark.pedantic(_cli, args=("version",), rounds=5, iterations=1)


def test_cli_build_check_all_examples(benchmark):
    benchmark.pedantic(_cli, args=("build", "--check", "-q", *map(str, EXAMPLES)), rounds=3, iterations=1)
