"""mypy holds every module to annotated definitions and parametrised generics (``dict[str, Any]``, not ``dict``):
no override may relax either, targets/ and resolve/ included since issue #23 item 1 finished them (the mypy run
itself is tests/test_code_quality.py)."""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any

import pytest

if sys.version_info >= (3, 11):
    import tomllib
else:  # pragma: no cover - Python 3.10
    import tomli as tomllib

PYPROJECT = Path(__file__).resolve().parents[1] / "pyproject.toml"
STRICT = ("disallow_untyped_defs", "disallow_any_generics", "check_untyped_defs")


def _mypy() -> dict[str, Any]:
    return tomllib.loads(PYPROJECT.read_text(encoding="utf-8"))["tool"]["mypy"]


@pytest.mark.parametrize("option", STRICT)
def test_no_module_relaxes_strictness(option: str) -> None:
    assert _mypy()[option] is True
    relaxed = [module for override in _mypy().get("overrides", []) if option in override
               for module in override["module"]]
    assert relaxed == [], f"{option} relaxed for {relaxed}"


def test_overrides_only_silence_untyped_third_party_packages() -> None:
    """What an override may still say: a third-party package ships no types (ignore_missing_imports)."""
    for override in _mypy().get("overrides", []):
        assert set(override) <= {"module", "ignore_missing_imports"}, override
        assert not any(module.startswith("hpcconf") for module in override["module"]), override
