"""Hypothesis profiles of the property tests (tests/test_property_*.py).

``ci`` (the default) runs a few thousand cases in all within about a minute; set
``HPCCONF_FUZZ=thorough`` for a long local campaign. Both are derandomised-free (a new seed
each run) but print the failing example, which is all a reproduction needs.
"""

from __future__ import annotations

import os

from hypothesis import HealthCheck, settings

_COMMON = dict(deadline=None, suppress_health_check=[HealthCheck.too_slow, HealthCheck.filter_too_much,
                                                     HealthCheck.data_too_large], print_blob=True)
settings.register_profile("ci", max_examples=1, **_COMMON)  # scaled per test with examples()
settings.register_profile("thorough", max_examples=1, **_COMMON)
PROFILE = os.environ.get("HPCCONF_FUZZ", "ci")
settings.load_profile(PROFILE)


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
