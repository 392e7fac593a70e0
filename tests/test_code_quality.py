"""The checks a reviewer runs, enforced by the test suite: ruff, mypy and the import contracts.

Each runs the tool from this environment on the package (configured in pyproject.toml) and is
skipped, with the reason, when the tool is not installed (``pip install -e '.[test]'`` has them).
Run them alone with ``pytest -m code_quality``; the type check alone with ``pytest -m mypy``.
"""

from __future__ import annotations

import importlib.util
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
pytestmark = pytest.mark.code_quality


def _run(module: str, *args: str) -> subprocess.CompletedProcess[str]:
    if importlib.util.find_spec(module) is None:
        pytest.skip(f"{module} is not installed (pip install -e '.[test]')")
    return subprocess.run([sys.executable, "-m", module, *args], cwd=ROOT, capture_output=True, text=True,
                          timeout=600)


def test_ruff_reports_nothing() -> None:
    result = _run("ruff", "check", "hpcconf", "tests", "--output-format", "concise", "--no-cache")
    assert result.returncode == 0, result.stdout + result.stderr


@pytest.mark.mypy
def test_mypy_reports_nothing() -> None:
    result = _run("mypy", "hpcconf")
    assert result.returncode == 0, result.stdout + result.stderr


def test_import_contracts_hold() -> None:
    if importlib.util.find_spec("importlinter") is None:
        pytest.skip("import-linter is not installed (pip install -e '.[test]')")
    result = subprocess.run([str(Path(sys.executable).with_name("lint-imports")), "--no-cache"], cwd=ROOT,
                            capture_output=True, text=True, timeout=600)
    assert result.returncode == 0, result.stdout + result.stderr
