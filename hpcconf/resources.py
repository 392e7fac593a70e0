"""Where the package's data directories (skus/, templates/, schemas/) live.

A wheel carries them under ``hpcconf/_data/<name>`` (pyproject force-include); an editable or
source checkout has them at the repository root next to the package. One lookup serves both.
"""

from __future__ import annotations

from pathlib import Path

import hpcconf


def resource_dir(name: str) -> Path:
    """The directory of package data ``name`` ("skus", "templates", "schemas")."""
    package = Path(hpcconf.__file__).resolve().parent
    bundled = package / "_data" / name
    if bundled.is_dir():
        return bundled
    return package.parent / name
