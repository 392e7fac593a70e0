"""The build manifest (``.hpcconf-manifest.json``) read as untrusted input.

The manifest sits in the output directory, so a pull request can change it like any other file.
A build uses it to decide what it may overwrite and what it deletes, so before anything is
done with it, it is validated against ``schemas/hpcconf-manifest.schema.json`` and every path it
names is checked to stay inside the cluster's output directory (no absolute path, no ``..``,
no backslash, no control character, no symlink on the way). A manifest that fails any check
stops the build with :class:`OutputRefused`; nothing is read, written or deleted because of it.
"""

from __future__ import annotations

import json
import os
import stat
from functools import lru_cache
from pathlib import Path, PurePosixPath
from typing import Any

from .resources import resource_dir

MANIFEST_NAME = ".hpcconf-manifest.json"
MAX_MANIFEST_BYTES = 4 * 1024 * 1024  # ~10,000 files' entries; far above any build


class OutputRefused(Exception):
    """The output directory (or its manifest) is not one hpcconf may write; ``str()`` says where and why."""


@lru_cache(maxsize=1)
def _validator() -> Any:
    import jsonschema

    schema = json.loads((resource_dir("schemas") / "hpcconf-manifest.schema.json").read_text(encoding="utf-8"))
    return jsonschema.Draft202012Validator(schema)


def check_relative_path(rel: str) -> str | None:
    """Why ``rel`` may not name a file inside an output directory, or None when it may."""
    if not rel or len(rel) > 1024:
        return "an empty or over-long path"
    if any(ord(ch) < 0x20 or ord(ch) == 0x7F for ch in rel):
        return "a path with a control character"
    if "\\" in rel:
        return "a path with a backslash"
    if rel.startswith("/") or PurePosixPath(rel).is_absolute() or (len(rel) > 1 and rel[1] == ":"):
        return "an absolute path"
    parts = rel.split("/")
    if any(part in ("", ".", "..") for part in parts):
        return "a path with '..', '.' or an empty component (it could leave the output directory)"
    return None


def refuse_symlinks(out_dir: Path, rel: str = "") -> None:
    """Refuse when ``out_dir`` or any existing component of ``out_dir/rel`` is a symbolic link.

    The output root itself may be a link (it is where the user keeps outputs); the cluster's
    directory and everything below it may not: a link there would send generated files (or
    deletions) wherever it points.
    """
    path = out_dir
    for part in [""] + ([p for p in rel.split("/") if p] if rel else []):
        path = path / part if part else path
        try:
            info = os.lstat(path)
        except FileNotFoundError:
            return
        except NotADirectoryError:
            raise OutputRefused(f"{path.as_posix()}: a parent of this path is a file, not a directory; "
                                "move it away and rebuild") from None
        if stat.S_ISLNK(info.st_mode):
            raise OutputRefused(f"{path.as_posix()}: is a symbolic link (to {os.readlink(path)}); hpcconf does not "
                                "write, read or delete through links under the output directory. Replace the link "
                                "with a real directory or file, or build with --out somewhere else.")


def inside(out_dir: Path, rel: str) -> Path:
    """``out_dir/rel`` after checking that it stays in ``out_dir`` and meets no symlink."""
    why = check_relative_path(rel)
    if why:
        raise OutputRefused(f"{out_dir.as_posix()}: refusing {rel!r}: {why}")
    refuse_symlinks(out_dir, rel)
    return out_dir / rel


def _schema_error_text(error: Any) -> str:
    where = "".join(f"[{json.dumps(step)}]" for step in error.absolute_path) or "(top level)"
    message = error.message if len(error.message) <= 200 else error.message[:200] + "..."
    return f"{where}: {message}"


def load_manifest(out_dir: Path) -> dict | None:
    """The manifest of ``out_dir``, validated; None when there is none.

    Raises :class:`OutputRefused` (with the file, and line:col for JSON syntax errors) when it
    cannot be trusted: not JSON, wrong shape, a path leaving the directory, or a link.
    """
    path = out_dir / MANIFEST_NAME
    refuse_symlinks(out_dir, MANIFEST_NAME)
    try:  # non-blocking, no link followed: a fifo planted as the manifest is refused, never waited on
        fd = os.open(path, os.O_RDONLY | getattr(os, "O_NONBLOCK", 0) | getattr(os, "O_NOFOLLOW", 0))
    except FileNotFoundError:
        return None
    except IsADirectoryError:
        raise OutputRefused(f"{path.as_posix()}: is a directory, not a manifest; remove it and rebuild") from None
    with os.fdopen(fd, "rb") as handle:
        mode = os.fstat(handle.fileno()).st_mode
        if stat.S_ISDIR(mode):
            raise OutputRefused(f"{path.as_posix()}: is a directory, not a manifest; remove it and rebuild")
        if not stat.S_ISREG(mode):
            raise OutputRefused(f"{path.as_posix()}: is not a regular file (a fifo, socket or device); "
                                "remove it and rebuild")
        raw = handle.read(MAX_MANIFEST_BYTES + 1)
    shown = path.as_posix()
    fix = f"; delete {shown} and rebuild with --force (hand edits in {out_dir.as_posix()}/ are then overwritten)"
    if len(raw) > MAX_MANIFEST_BYTES:
        raise OutputRefused(f"{shown}:1:1: manifest larger than {MAX_MANIFEST_BYTES // (1024 * 1024)} MiB{fix}")
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError as exc:
        line = raw[:exc.start].count(b"\n") + 1
        col = exc.start - (raw.rfind(b"\n", 0, exc.start) + 1) + 1
        raise OutputRefused(f"{shown}:{line}:{col}: manifest is not UTF-8{fix}") from None
    try:
        data = json.loads(text)
    except RecursionError:
        raise OutputRefused(f"{shown}:1:1: manifest nested too deeply{fix}") from None
    except ValueError as exc:
        line, col = getattr(exc, "lineno", 1), getattr(exc, "colno", 1)
        raise OutputRefused(f"{shown}:{line}:{col}: manifest is not valid JSON ({getattr(exc, 'msg', exc)}){fix}") from None
    errors = sorted(_validator().iter_errors(data), key=lambda e: list(map(str, e.absolute_path)))
    if errors:
        raise OutputRefused(f"{shown}: manifest does not have hpcconf's format: {_schema_error_text(errors[0])}{fix}")
    for rel in data["files"]:
        why = check_relative_path(rel)
        if why:
            raise OutputRefused(f"{shown}: files[{json.dumps(rel)}]: {why}; a build never reads, writes or deletes "
                                f"outside {out_dir.as_posix()}/{fix}")
    return data
