"""The checks a reviewer runs, enforced by the test suite: ruff, mypy and the import contracts.

Each runs the tool from this environment on the package (configured in pyproject.toml) and is
skipped, with the reason, when the tool is not installed (``pip install -e '.[test]'`` has them).
Run them alone with ``pytest -m code_quality``; the type check alone with ``pytest -m mypy``.
"""

from __future__ import annotations

import importlib.util
import re
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


def _contracts() -> list[dict]:
    import tomllib  # noqa: PLC0415 - Python 3.11+; the contracts test below needs it only

    return tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))["tool"]["importlinter"]["contracts"]


@pytest.mark.skipif(sys.version_info < (3, 11), reason="tomllib is Python 3.11+")
def test_targets_are_forbidden_knowledge_catalog_and_spec() -> None:
    """Issue #23: the targets transcribe the resolved model. The contract that keeps it is there, with no
    exception listed (test_import_contracts_hold runs it)."""
    forbidden = [c for c in _contracts() if c.get("type") == "forbidden" and c.get("source_modules") == ["hpcconf.targets"]]
    assert forbidden, "no forbidden contract for hpcconf.targets in pyproject.toml"
    (contract,) = forbidden
    assert set(contract["forbidden_modules"]) >= {"hpcconf.knowledge", "hpcconf.catalog", "hpcconf.spec"}
    assert not contract.get("ignore_imports")


# A branch on the GPU vendor or the collective library, in a target or a template: a profile field
# (data/accelerators.yaml) or a resolved field reads it instead, so a new accelerator touches neither.
VENDOR_COMPARISON = r"""(==|!=)\s*["'](nvidia|amd|nccl|rccl|NCCL|RCCL)["']|["'](nvidia|amd|nccl|rccl)["']\s*(==|!=)"""


def test_no_vendor_or_library_comparison_in_targets_resolve_or_templates() -> None:
    """resolve/ too: what differs between accelerators is a profile field, so a new one is a data row."""
    pattern = re.compile(VENDOR_COMPARISON)
    files = (sorted((ROOT / "hpcconf" / "targets").rglob("*.py")) + sorted((ROOT / "hpcconf" / "resolve").rglob("*.py"))
             + sorted((ROOT / "templates").rglob("*.j2")))
    hits = [f"{path.relative_to(ROOT)}:{number}: {line.strip()}" for path in files
            for number, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1) if pattern.search(line)]
    assert not hits, "\n".join(hits)


def test_targets_read_the_resolved_model_not_the_spec() -> None:
    """ResolvedCluster holds no spec (tests/test_resolved_types.py); nor does a target reach for one by name."""
    hits = [f"{path.relative_to(ROOT)}:{number}: {line.strip()}" for path in sorted((ROOT / "hpcconf" / "targets").rglob("*.py"))
            for number, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1)
            if re.search(r"\bcluster\.spec\b", line)]
    assert not hits, "\n".join(hits)
