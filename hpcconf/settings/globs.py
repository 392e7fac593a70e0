"""How every settings glob matches a path; a leaf that both the settings reader and path contexts use."""

from __future__ import annotations

import functools
from typing import TYPE_CHECKING, Any

from ..display_path import DisplayPath

if TYPE_CHECKING:
    import pathspec


def glob_match(path: str, pattern: str) -> bool:
    """How every settings glob matches a path (exclude, per-file-ignores, per-path-context).

    A path matches as given or by any trailing part of it (so a pattern applies below any directory),
    with git's wildmatch rules (pathspec): ``*`` stays within one directory, ``**`` spans any number
    of them, zero included (``charts/**/values.yaml`` matches ``charts/values.yaml``), ``dir/`` and
    ``dir/**`` match everything below ``dir``, a pattern without ``/`` matches a file name.
    A compiled artifact ("spec.yaml -> aks/job.yaml") matches through either side of the arrow."""
    where = DisplayPath.parse(path)
    spec = _compiled_glob(pattern)
    for part in (where.spec, where.file) if where.compiled else (path,):
        segments = [s for s in part.replace("\\", "/").split("/") if s not in ("", ".")]
        if any(spec.match_file("/".join(segments[index:])) for index in range(len(segments))):
            return True
    return False


@functools.lru_cache(maxsize=1024)
def _compiled_glob(pattern: str) -> "pathspec.PathSpec[Any]":
    import pathspec  # only when a settings glob is matched: its import (~12 ms) is a lint of one file's 5%

    return pathspec.GitIgnoreSpec.from_lines([pattern])
