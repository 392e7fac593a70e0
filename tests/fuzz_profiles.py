"""Hypothesis profiles of the property tests (tests/test_property_*.py).

``ci`` (the default, and what CI runs) runs a few thousand cases in all within about a minute,
derandomised: one fixed seed (``HPCCONF_FUZZ_SEED``, default 0; what ``pytest --hypothesis-seed``
sets, which wins when given), so a CI run tests the same cases as the run before it and a red
build is red again on rerun. ``HPCCONF_FUZZ=thorough`` is a long
local campaign with a new random seed each run. Both keep their example database in the run's
directory (``.hypothesis/examples`` under the checkout, git-ignored), so a failure found there is
replayed first by the next run, and print the failing example's blob for a reproduction.
"""

from __future__ import annotations

import os
from pathlib import Path

from hypothesis import HealthCheck, core, settings
from hypothesis.database import DirectoryBasedExampleDatabase

DATABASE = Path(__file__).resolve().parents[1] / ".hypothesis" / "examples"
_COMMON = dict(deadline=None, suppress_health_check=[HealthCheck.too_slow, HealthCheck.filter_too_much,
                                                     HealthCheck.data_too_large], print_blob=True,
               database=DirectoryBasedExampleDatabase(str(DATABASE)))
settings.register_profile("ci", max_examples=1, **_COMMON)  # scaled per test with examples()
settings.register_profile("thorough", max_examples=1, **_COMMON)
PROFILE = os.environ.get("HPCCONF_FUZZ", "ci")
settings.load_profile(PROFILE)
SEED = int(os.environ.get("HPCCONF_FUZZ_SEED", "0")) if PROFILE == "ci" else None
if SEED is not None and core.global_force_seed is None:  # `pytest --hypothesis-seed=N` already set it: keep N
    # hypothesis' derandomize=True would fix the seed too, but forbids a database; this is the seed
    # the pytest plugin's --hypothesis-seed forces, with the database kept.
    core.global_force_seed = SEED


def examples(ci: int) -> int:
    """The number of examples for a test: ``ci`` in CI, 25x that when thorough."""
    return ci * 25 if PROFILE == "thorough" else ci


def tree_paths(node, path=()):
    """Every path into a YAML-like tree (dict keys and list indexes), the root's () first."""
    yield path
    if isinstance(node, dict):
        for key, value in node.items():
            yield from tree_paths(value, path + (key,))
    elif isinstance(node, list):
        for index, value in enumerate(node):
            yield from tree_paths(value, path + (index,))
