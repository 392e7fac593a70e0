"""Write a build's artifacts atomically, with a manifest of what was written.

Everything is rendered and validated before this runs; here we only compare and write.
Each file goes to a temporary name in the same directory and is renamed into place, so a
crash never leaves a half-written file. The manifest (``.hpcconf-manifest.json``) lists
every file with its SHA-256 and the spec it came from; ``build --check`` and hand-edit
protection read it.
"""

from __future__ import annotations

import hashlib
import json
import os
import tempfile
from dataclasses import dataclass, field
from pathlib import Path
from typing import Iterable

from .artifacts import Artifact

MANIFEST_NAME = ".hpcconf-manifest.json"
GENERATOR = "hpcconf"  # no version: an upgrade must not make every committed manifest stale


def sha256(text: str) -> str:
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


def manifest_text(artifacts: Iterable[Artifact], spec_file: str, generator: str) -> str:
    files = {a.path: {"sha256": sha256(a.content), "kind": a.kind, "target": a.target}
             for a in sorted(artifacts, key=lambda a: a.path)}
    data = {"generator": generator, "spec": spec_file, "files": files}
    return json.dumps(data, indent=2, sort_keys=True) + "\n"


def read_manifest(out_dir: Path) -> dict | None:
    try:
        return json.loads((out_dir / MANIFEST_NAME).read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None


@dataclass
class WriteReport:
    written: list[str] = field(default_factory=list)
    unchanged: list[str] = field(default_factory=list)
    removed: list[str] = field(default_factory=list)


def _stage(path: Path, text: str, mode: int, created_dirs: list[Path]) -> Path:
    """Write ``text`` to a temporary file beside ``path``; the caller renames it into place."""
    missing = [d for d in [path.parent, *path.parent.parents] if not d.exists()]
    for directory in reversed(missing):
        directory.mkdir()
        created_dirs.append(directory)
    try:
        fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.", suffix=".tmp", dir=path.parent)
    except OSError as exc:  # name the file the user asked for, not our temporary one
        raise OSError(exc.errno, exc.strerror, str(path)) from None
    try:
        with os.fdopen(fd, "w", encoding="utf-8", newline="\n") as handle:
            handle.write(text)
        os.chmod(tmp, mode)
    except OSError as exc:
        Path(tmp).unlink(missing_ok=True)
        raise OSError(exc.errno, exc.strerror, str(path)) from None
    return Path(tmp)


def _mode_for(artifact: Artifact) -> int:
    return 0o755 if artifact.content.startswith("#!") else 0o644


def _unchanged(target: Path, content: str) -> bool:
    try:
        return target.read_text(encoding="utf-8") == content
    except (OSError, UnicodeDecodeError):
        return False


def write_artifacts(out_dir: Path, artifacts: list[Artifact], manifest: str) -> WriteReport:
    """Write changed files, remove files a previous build generated that are gone now, update the manifest.

    All or nothing: every changed file is first written to a temporary file beside its target;
    only when all of them (and the manifest) are staged are they renamed into place. If staging
    fails (a full disk, a read-only directory), the temporary files and any directories made for
    them are removed and the output directory is as it was.
    """
    report = WriteReport()
    previous = read_manifest(out_dir) or {}
    staged: list[tuple[Path, Path]] = []
    created_dirs: list[Path] = []
    try:
        for artifact in sorted(artifacts, key=lambda a: a.path):
            target = out_dir / artifact.path
            if _unchanged(target, artifact.content):
                report.unchanged.append(artifact.path)
                continue
            staged.append((_stage(target, artifact.content, _mode_for(artifact), created_dirs), target))
            report.written.append(artifact.path)
        staged.append((_stage(out_dir / MANIFEST_NAME, manifest, 0o644, created_dirs), out_dir / MANIFEST_NAME))
    except BaseException:
        for tmp, _ in staged:
            tmp.unlink(missing_ok=True)
        for directory in reversed(created_dirs):
            try:
                directory.rmdir()
            except OSError:
                pass
        raise
    try:
        for tmp, target in staged:
            os.replace(tmp, target)  # a rename: cannot run out of space half-way through a file
    finally:
        for tmp, _ in staged:
            tmp.unlink(missing_ok=True)
    new_paths = {a.path for a in artifacts}
    for stale in sorted(set(previous.get("files", {})) - new_paths):
        stale_path = out_dir / stale
        if stale_path.is_file():
            stale_path.unlink()
            report.removed.append(stale)
    return report
