"""Spec format versions and the steps between them (``hpcconf migrate``; its face is :mod:`hpcconf.commands.migrate`).

A spec says ``apiVersion: hpcconf/v1``; the loader refuses any other value (HPC007). When a v2 exists,
:func:`migrate_text` converts a spec step by step (``MIGRATIONS``: from-version -> (to-version, step)), editing the
ruamel round-trip tree in place so that the user's comments, key order and quoting survive. Today v1 is the only
version, so there is nothing to do (or a version it does not know is refused).
"""

from __future__ import annotations

import io
from typing import Any, Callable


def current_version() -> str:
    """The current spec format version, read when a migration runs (the spec models cost ~0.3 s to build)."""
    from .model import API_VERSION

    return API_VERSION


# from apiVersion -> (to apiVersion, step that edits the round-trip tree in place). Empty: v1 is the first.
MIGRATIONS: dict[str, tuple[str, Callable[[Any], None]]] = {}


class MigrationError(ValueError):
    pass


def _round_trip_yaml() -> Any:
    from ruamel.yaml import YAML

    yaml = YAML(typ="rt")
    yaml.preserve_quotes = True
    yaml.indent(mapping=2, sequence=4, offset=2)  # the layout `hpcconf init` and the examples use
    yaml.width = 4096  # never re-wrap long lines
    return yaml


def migrate_text(text: str) -> tuple[str, list[str]]:
    """Convert a spec to the current apiVersion; returns (new text, steps applied). Comments survive."""
    yaml = _round_trip_yaml()
    data = yaml.load(text)
    if not hasattr(data, "get"):
        raise MigrationError("not a spec: the file is not a YAML mapping")
    version = data.get("apiVersion")
    if version is None:
        raise MigrationError(f"no apiVersion; add 'apiVersion: {current_version()}' at the top")
    steps: list[str] = []
    while version != current_version():
        if version not in MIGRATIONS:
            known = ", ".join([current_version(), *MIGRATIONS])
            raise MigrationError(f"apiVersion {version!r} is not one this hpcconf knows ({known})")
        to_version, step = MIGRATIONS[version]
        step(data)
        data["apiVersion"] = to_version
        steps.append(f"{version} -> {to_version}")
        version = to_version
    if not steps:
        return text, steps
    out = io.StringIO()
    yaml.dump(data, out)
    return out.getvalue(), steps
