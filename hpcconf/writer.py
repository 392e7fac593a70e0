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


def _atomic_write(path: Path, text: str, mode: int | None) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.", suffix=".tmp", dir=path.parent)
    try:
        with os.fdopen(fd, "w", encoding="utf-8", newline="\n") as handle:
            handle.write(text)
        if mode is not None:
            os.chmod(tmp, mode)
        os.replace(tmp, path)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise


def _mode_for(artifact: Artifact) -> int:
    return 0o755 if artifact.content.startswith("#!") else 0o644


def write_artifacts(out_dir: Path, artifacts: list[Artifact], manifest: str) -> WriteReport:
    """Write changed files, remove files a previous build generated that are gone now, update the manifest."""
    report = WriteReport()
    previous = read_manifest(out_dir) or {}
    new_paths = {a.path for a in artifacts}
    for artifact in sorted(artifacts, key=lambda a: a.path):
        target = out_dir / artifact.path
        try:
            current = target.read_text(encoding="utf-8")
        except (OSError, UnicodeDecodeError):
            current = None
        if current == artifact.content:
            report.unchanged.append(artifact.path)
            continue
        _atomic_write(target, artifact.content, _mode_for(artifact))
        report.written.append(artifact.path)
    for stale in sorted(set(previous.get("files", {})) - new_paths):
        stale_path = out_dir / stale
        if stale_path.is_file():
            stale_path.unlink()
            report.removed.append(stale)
    _atomic_write(out_dir / MANIFEST_NAME, manifest, 0o644)
    return report
