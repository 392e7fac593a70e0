"""Shared test fixtures: the repo root and the read-only ../shared oracles."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[1]
SHARED = REPO.parent / "shared"
# Tests compare reports byte for byte: a FORCE_COLOR in the developer's environment (hpcconf.term honours
# it) must not colour them. tests/test_term.py sets it where it is the point.
os.environ.pop("FORCE_COLOR", None)


def shared_path(*parts: str) -> Path:
    """Path under ../shared, or skip the test with a reason when the oracle is absent."""
    path = SHARED.joinpath(*parts)
    if not path.exists():
        pytest.skip(f"upstream oracle {path} is absent (../shared is provided in CI)")
    return path


@pytest.fixture
def shared_dir() -> Path:
    if not SHARED.is_dir():
        pytest.skip("../shared is absent: upstream oracles are provided beside the checkout in CI")
    return SHARED


@pytest.fixture
def repo_root() -> Path:
    return REPO


def pytest_addoption(parser: pytest.Parser) -> None:
    parser.addoption("--update-snapshots", action="store_true", default=False,
                     help="Rewrite tests/rules/<CODE>/expect.snap from the current rendering "
                          "(same as HPCCONF_UPDATE_SNAPSHOTS=1).")


def pytest_configure(config: pytest.Config) -> None:
    """Snapshots are written by a person who then reviews the diff, never by CI: with ``CI`` set
    (every CI service sets it) ``--update-snapshots`` is a usage error, so a pipeline cannot bless
    what it renders."""
    updating = config.getoption("--update-snapshots") or os.environ.get("HPCCONF_UPDATE_SNAPSHOTS") == "1"
    if updating and os.environ.get("CI", "").strip().lower() not in ("", "0", "false", "no"):
        raise pytest.UsageError("--update-snapshots (or HPCCONF_UPDATE_SNAPSHOTS=1) is refused when CI is set: "
                                "update snapshots locally and commit the reviewed diff")
