"""Where a finding lies in the repository, for SARIF and GitHub annotations.

Text and JSON output name a compiled artifact ``SPEC -> ARTIFACT`` (it says where the file came
from); code scanning and workflow annotations need a file that exists in the checkout, or the
finding is dropped or pinned nowhere. So a finding in an artifact compiled from a spec points at:

1. the committed copy under the output root (``out/<cluster>/<artifact>``, the settings' ``out``)
   when it exists on disk and holds the finding's line (the same text; a stale copy whose line
   moved is matched by content, nearest first);
2. else the spec line that produced the artifact: the pool's entry for a per-pool file
   (``nccl/<pool>/...`` or the pool's topology file), the platform's section (``aks:``, ``azhop:``,
   ``slurm:``, ``test_image:``) for the others, else the spec's first line; the message then names the
   generated line (``generated as aks/volcano-job.yaml:12``).

Findings in files given directly keep their path.
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path, PurePosixPath
from typing import TYPE_CHECKING, Any

from ..artifacts import Kind
from ..diagnostics import HpcconfError
from ..safe_io import read_text
from .document import DisplayPath, Document

if TYPE_CHECKING:
    from ..diagnostics import Diagnostic
    from .engine import LintResult


@dataclass(frozen=True)
class Location:
    file: str  # a repository path (relative to the working directory when below it), POSIX separators
    line: int | None
    column: int | None = None
    end_line: int | None = None
    end_column: int | None = None
    note: str = ""  # said after the message when the finding moved away from the generated line


def real_location(finding: Diagnostic, result: LintResult) -> Location:
    """Where ``finding`` lies in the repository (see the module docstring)."""
    same = Location(finding.file.replace("\\", "/"), finding.line, finding.column, finding.end_line,
                    finding.end_column)
    where = DisplayPath.parse(finding.file)
    if not where.compiled:
        return same
    doc = next((d for d in result.documents if d.path == finding.file and d.artifact is not None), None)
    spec = next((d for d in result.documents if d.kind == Kind.SPEC and d.path == where.spec), None)
    if doc is None:
        return Location(where.spec, 1, note=f" (generated as {where.file})") if spec is None else \
            _at_spec(spec, None, finding)
    committed = _committed(doc, result.output_root)
    if committed is not None:
        moved = _in_committed(committed, doc, finding)
        if moved is not None:
            return moved
    return _at_spec(spec, doc, finding) if spec is not None else Location(where.spec, 1)


def _committed(doc: Document, output_root: Path | None) -> Path | None:
    cluster = doc.context.cluster if doc.context is not None else None
    if cluster is None or doc.artifact is None:
        return None
    path = (output_root or Path("out")) / cluster.name / doc.artifact.path
    return path if path.is_file() else None


def _in_committed(path: Path, doc: Document, finding: Diagnostic) -> Location | None:
    """The finding's line in the committed copy, found by its text; None when the copy lacks it."""
    shown = _shown(path)
    if not finding.line:
        return Location(shown, None)
    generated = doc.text.splitlines()
    if not 0 < finding.line <= len(generated):
        return None
    try:
        on_disk = read_text(path, "linted").splitlines()
    except HpcconfError:
        return None
    wanted = generated[finding.line - 1]
    candidates = [number for number, text in enumerate(on_disk, start=1) if text == wanted]
    if not candidates:
        return None
    generated_line = finding.line
    line = min(candidates, key=lambda number: abs(number - generated_line))
    end_line = line + (finding.end_line - generated_line) if finding.end_line else None
    return Location(shown, line, finding.column, end_line, finding.end_column)


def _at_spec(spec: Document, doc: Document | None, finding: Diagnostic) -> Location:
    where = DisplayPath.parse(finding.file)
    generated = f"{where.file}:{finding.line}" if finding.line else where.file
    note = f" (generated as {generated})"
    key = _spec_key(spec, doc)
    if key is not None and spec.yaml is not None:
        span = spec.yaml.position(key)
        return Location(spec.path.replace("\\", "/"), span.line, span.column, note=note)
    return Location(spec.path.replace("\\", "/"), 1, 1, note=note)


def _spec_key(spec: Document, doc: Document | None) -> tuple[Any, ...] | None:
    """The spec entry an artifact comes from: its pool's entry, else its platform's section."""
    data = spec.data if isinstance(spec.data, dict) else {}
    if doc is None or doc.artifact is None:
        return None
    parts = PurePosixPath(doc.artifact.path).parts
    pools = data.get("pools")
    for index, pool in enumerate(pools if isinstance(pools, list) else []):
        name = pool.get("name") if isinstance(pool, dict) else None
        if name and (name in parts[:-1] or parts[-1].startswith(f"{name}-")):
            return ("pools", index)
    for section in (doc.artifact.target.replace("-", "_"), parts[0] if parts else ""):
        if section and section in data:
            return (section,)
    return None


def _shown(path: Path) -> str:
    """``path`` as a repository path: relative to the working directory when below it."""
    try:
        relative = os.path.relpath(path.resolve(), Path.cwd().resolve())
    except ValueError:  # another drive on Windows
        return path.as_posix()
    return Path(relative).as_posix() if not relative.startswith("..") else path.resolve().as_posix()
