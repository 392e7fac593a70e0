"""`hpcconf build`: compile specs, then write, check (--check) or show (--diff) the result.

Status of each file against disk, using the manifest the writer keeps:
  new        generated now, not on disk
  stale      on disk as a previous build wrote it, but the build now differs
  edited     on disk with content no build wrote (its hash differs from the manifest)
  extra      on disk under the cluster's directory, but the build does not produce it
"""

from __future__ import annotations

import difflib
from dataclasses import dataclass, field
from pathlib import Path
from typing import Sequence

import typer

from . import __version__
from .artifacts import Artifact
from .diagnostics import HpcconfError, render_all
from .pipeline import Build, compile_spec
from .writer import MANIFEST_NAME, manifest_text, read_manifest, sha256, write_artifacts

EXIT_OK, EXIT_STALE, EXIT_INVALID = 0, 1, 2


@dataclass
class Comparison:
    out_dir: Path
    new: list[str] = field(default_factory=list)
    stale: list[str] = field(default_factory=list)
    edited: list[str] = field(default_factory=list)
    extra: list[str] = field(default_factory=list)
    diffs: dict[str, str] = field(default_factory=dict)

    @property
    def clean(self) -> bool:
        return not (self.new or self.stale or self.edited or self.extra)


def _read(path: Path) -> str | None:
    try:
        return path.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError):
        return None


def _unified(path: str, old: str | None, new: str | None) -> str:
    lines = difflib.unified_diff((old or "").splitlines(keepends=True), (new or "").splitlines(keepends=True),
                                 fromfile=f"a/{path}" if old is not None else "/dev/null",
                                 tofile=f"b/{path}" if new is not None else "/dev/null")
    text = "".join(line if line.endswith("\n") else line + "\n" for line in lines)
    return text


def expected_files(build: Build) -> dict[str, str]:
    files = {a.path: a.content for a in build.artifacts}
    files[MANIFEST_NAME] = manifest_text(build.artifacts, build.cluster.spec_file, f"hpcconf {__version__}")
    return files


def compare(build: Build, out_dir: Path) -> Comparison:
    result = Comparison(out_dir)
    recorded = (read_manifest(out_dir) or {}).get("files", {})
    expected = expected_files(build)
    for rel, content in sorted(expected.items()):
        current = _read(out_dir / rel)
        if current is None:
            result.new.append(rel)
        elif current != content:
            hand_edited = rel in recorded and sha256(current) != recorded[rel]["sha256"]
            (result.edited if hand_edited else result.stale).append(rel)
        else:
            continue
        result.diffs[rel] = _unified(rel, current, content)
    if out_dir.is_dir():
        for path in sorted(p for p in out_dir.rglob("*") if p.is_file()):
            rel = path.relative_to(out_dir).as_posix()
            if rel not in expected:
                result.extra.append(rel)
                result.diffs[rel] = _unified(rel, _read(path), None)
    return result


def edited_lines(diff_text: str) -> list[int]:
    """Line numbers (in the file on disk) that differ from what hpcconf generates."""
    lines, old_line = [], 0
    for line in diff_text.splitlines():
        if line.startswith("@@"):
            old_line = int(line.split()[1].split(",")[0].lstrip("-")) - 1
        elif line.startswith("-") and not line.startswith("---"):
            old_line += 1
            lines.append(old_line)
        elif line.startswith(" "):
            old_line += 1
    return lines


def _compile_all(specs: Sequence[Path], sku_dirs: Sequence[Path]) -> list[Build] | None:
    builds, failed = [], False
    for spec in specs:
        try:
            builds.append(compile_spec(spec, sku_dirs))
        except HpcconfError as exc:
            typer.echo(render_all(exc.diagnostics), err=True)
            failed = True
    if failed:
        typer.echo("\nbuild refused: fix the errors above; nothing was written.", err=True)
        return None
    return builds


def _report_check(build: Build, comparison: Comparison, show_diff: bool, explain: bool) -> None:
    spec = build.spec.file
    if comparison.clean:
        typer.echo(f"{spec}: {comparison.out_dir.as_posix()}/ is up to date ({len(build.artifacts)} files)")
        return
    for label, names in (("missing", comparison.new), ("stale", comparison.stale),
                         ("edited by hand", comparison.edited), ("not generated (extra)", comparison.extra)):
        for name in names:
            typer.echo(f"{spec}: {label}: {comparison.out_dir.as_posix()}/{name}")
    if show_diff:
        for name in sorted(comparison.diffs):
            typer.echo(comparison.diffs[name], nl=False)
    if explain:
        from .explain_diff import explain_changes

        typer.echo(explain_changes(build, comparison))
    typer.echo(f"fix: hpcconf build {spec} --out {comparison.out_dir.parent.as_posix()}"
               + (" --force  (after moving the hand edits into the spec)" if comparison.edited else ""))


def _write(build: Build, out_dir: Path, force: bool, quiet: bool) -> int:
    comparison = compare(build, out_dir)
    if comparison.edited and not force:
        for name in comparison.edited:
            lines = edited_lines(comparison.diffs[name])
            shown = ", ".join(map(str, lines[:10])) + (" ..." if len(lines) > 10 else "")
            typer.echo(f"{out_dir.as_posix()}/{name}: edited by hand (lines {shown}); refusing to overwrite.", err=True)
        typer.echo("Move the change into the spec (or an override such as nccl_env), or pass --force to discard it.", err=True)
        return EXIT_STALE
    manifest = manifest_text(build.artifacts, build.cluster.spec_file, f"hpcconf {__version__}")
    report = write_artifacts(out_dir, build.artifacts, manifest)
    if not quiet:
        for name in report.written:
            typer.echo(f"wrote     {out_dir.as_posix()}/{name}")
        for name in report.removed:
            typer.echo(f"removed   {out_dir.as_posix()}/{name}")
        typer.echo(f"{build.spec.file}: {len(report.written)} written, {len(report.unchanged)} unchanged, "
                   f"{len(report.removed)} removed in {out_dir.as_posix()}/")
    return EXIT_OK


def run_build(specs: Sequence[Path], out: Path, sku_dirs: Sequence[Path], *, check: bool, diff: bool,
              explain: bool, force: bool, quiet: bool) -> int:
    builds = _compile_all(specs, sku_dirs)
    if builds is None:
        return EXIT_INVALID
    if check or diff:
        dirty = False
        for b in builds:
            comparison = compare(b, out / b.name)
            dirty |= not comparison.clean
            _report_check(b, comparison, show_diff=True, explain=explain)
        return EXIT_STALE if (dirty and check) else EXIT_OK
    status = EXIT_OK
    for b in builds:
        status = max(status, _write(b, out / b.name, force, quiet))
    return status
