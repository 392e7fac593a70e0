"""mypy holds every module to annotated definitions and parametrised generics (``dict[str, Any]``, not ``dict``);
targets/ and resolve/ alone keep an override while issue #23 item 1 reworks them (the mypy run itself is
tests/test_code_quality.py)."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

if sys.version_info >= (3, 11):
    import tomllib
else:  # pragma: no cover - Python 3.10
    import tomli as tomllib

PYPROJECT = Path(__file__).resolve().parents[1] / "pyproject.toml"
REWORKED = ("hpcconf.targets", "hpcconf.resolve")


def _mypy() -> dict:
    return tomllib.loads(PYPROJECT.read_text(encoding="utf-8"))["tool"]["mypy"]


def _relaxed(option: str) -> list[str]:
    return [module for override in _mypy().get("overrides", []) if override.get(option) is False
            for module in override["module"]]


@pytest.mark.parametrize("option", ["disallow_untyped_defs", "disallow_any_generics"])
def test_only_the_reworked_packages_are_relaxed(option):
    assert _mypy()[option] is True
    assert [m for m in _relaxed(option) if not any(m == r or m.startswith(r + ".") for r in REWORKED)] == []
