"""The output directory's one owner: everything `hpcconf build` does to ``OUT/<name>/`` after rendering.

One entry per action, each taking the rendered builds of one output root: :func:`write` (the default),
:func:`check` (``--check``) and :func:`diff` (``--diff``). `hpcconf build` (:mod:`hpcconf.build_command`)
only chooses the action; reading the manifest, comparing with disk, refusing hand edits, writing
atomically, the patches and the explanations of differences are all here.

Status of each file against disk, using the manifest this module keeps:
  new        generated now, not on disk (reported as "missing")
  stale      on disk as a previous build wrote it, but the build now differs
  edited     on disk with content no build wrote (its hash differs from the manifest, or it is
             not in the manifest at all: "not written by hpcconf"); a build refuses to
             overwrite or delete it without --force
  extra      on disk under the cluster's directory, but the build does not produce it
             (no longer generated, or never written by hpcconf: the "unowned" ones)
When the specs come from a directory containing the output root, OUT/<name>/ directories
that no spec builds any more are reported as left over.

The manifest (``.hpcconf-manifest.json``) lists every file with its SHA-256 (of the bytes) and the
spec it came from. It sits in the output directory, so a pull request can change it like any other
file; it decides what a build may overwrite and what it deletes, so it is read as untrusted input:
validated against ``schemas/hpcconf-manifest.schema.json``, every path it names checked to stay
inside the cluster's output directory (no absolute path, no ``..``, no backslash, no control
character, no symlink on the way). A manifest that fails any check stops the build with
:class:`OutputRefused`; nothing is read, written or deleted because of it.

How a directory is replaced: a sibling staging directory ``OUT/.<name>.hpcconf-new-*`` gets a
hard-linked copy of the current tree, the changed files, the deletions and the new manifest;
then one ``renameat2(RENAME_EXCHANGE)`` swaps it with ``OUT/<name>`` and the old tree is
removed. A build killed at any point leaves either the previous directory or the new one,
never a mix. Where the file system cannot exchange (no renameat2), two renames are used and
the next build puts the previous directory back if it was killed between them. Concurrent
builds into one output root are serialised with an ``flock`` on the root directory.
"""

from __future__ import annotations

import contextlib
import ctypes
import ctypes.util
import difflib
import errno
import hashlib
import json
import os
import shlex
import shutil
import signal
import stat
import tempfile
from collections.abc import Iterable, Iterator, Sequence
from dataclasses import dataclass, field
from functools import lru_cache
from pathlib import Path, PurePosixPath
from typing import TYPE_CHECKING, Any

import typer

from .artifacts import Artifact
from .exit_codes import EXIT_FINDINGS, EXIT_INVALID, EXIT_OK
from .resources import resource_dir

if TYPE_CHECKING:
    from .pipeline import Build

MANIFEST_NAME = ".hpcconf-manifest.json"
GENERATOR = "hpcconf"  # no version: an upgrade must not make every committed manifest stale
STAGING_MARK = ".hpcconf-"  # OUT/.<name>.hpcconf-new-*, OUT/.<name>.hpcconf-old: never cluster directories
CRASH_HOOK = "HPCCONF_TEST_CRASH_AT"  # tests only: SIGKILL this process at the named step
MAX_MANIFEST_BYTES = 4 * 1024 * 1024  # ~10,000 files' entries; far above any build
MAX_OUTPUT_FILE_BYTES = 64 * 1024 * 1024  # a file under OUT/<name>/ hpcconf reads back to compare
EXIT_STALE = EXIT_FINDINGS  # --check found differences; a write refused hand edits
EXIT_DIFFERS = EXIT_FINDINGS  # --diff: there are changes to show (like `git diff --exit-code`)


class OutputRefused(Exception):
    """The output directory (or its manifest) is not one hpcconf may write; ``str()`` says where and why."""


# -- the three actions ---------------------------------------------------------------------------

def check(builds: list[Build], out_root: Path, *, leftovers: bool, explain: bool, sku_dirs: Sequence[Path],
          lint_failed: bool) -> int:
    """``build --check``: write nothing; report every difference; exit 1 on any, or on lint errors.

    ``leftovers``: the specs are every spec that writes to ``out_root``, so a directory none builds is reported.
    """
    dirty = _compare_and_report(builds, out_root, leftovers=leftovers, explain=explain, sku_dirs=sku_dirs)
    if dirty:
        typer.echo("check failed: the generated files differ from their specs (see above).", err=True)
    return EXIT_STALE if (dirty or lint_failed) else EXIT_OK


def diff(builds: list[Build], out_root: Path, *, leftovers: bool, explain: bool, sku_dirs: Sequence[Path]) -> int:
    """``build --diff``: write nothing; show the patch a build would apply; exit 1 when there is one."""
    dirty = _compare_and_report(builds, out_root, leftovers=leftovers, explain=explain, sku_dirs=sku_dirs)
    return EXIT_DIFFERS if dirty else EXIT_OK


def write(builds: list[Build], out_root: Path, *, leftovers: bool, force: bool, quiet: bool) -> int:
    """``build``: write each cluster's directory atomically under the root's lock; hand edits refused without --force."""
    orphans = _orphaned_outputs(builds, out_root) if leftovers else []
    status = EXIT_OK
    with output_lock(out_root):  # a concurrent build into the same root waits: the two never interleave
        if _refuse_other_specs_outputs(builds, out_root):  # under the lock: a concurrent build's manifest counts
            return EXIT_INVALID
        for b in builds:
            status = max(status, _write_build(b, out_root / b.name, force, quiet))
    _report_orphans(orphans, out_root, err=True)
    return status


def _compare_and_report(builds: list[Build], out_root: Path, *, leftovers: bool, explain: bool,
                        sku_dirs: Sequence[Path]) -> bool:
    orphans = _orphaned_outputs(builds, out_root) if leftovers else []
    dirty = bool(orphans)
    for b in builds:
        comparison = compare(b, out_root / b.name)
        dirty |= not comparison.clean
        _report_comparison(b, comparison, explain=explain, sku_dirs=sku_dirs)
    _report_orphans(orphans, out_root, err=False)
    return dirty


# -- paths inside the output directory -------------------------------------------------------------

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


def read_bytes(out_dir: Path, rel: str) -> bytes | None:
    """The bytes of ``out_dir/rel`` without following a link; None when there is no such file."""
    path = inside(out_dir, rel)
    try:
        fd = os.open(path, os.O_RDONLY | getattr(os, "O_NOFOLLOW", 0) | getattr(os, "O_NONBLOCK", 0))
    except FileNotFoundError:
        return None
    except OSError as exc:
        if exc.errno == errno.ELOOP:  # replaced by a link since refuse_symlinks looked
            refuse_symlinks(out_dir, rel)
        if exc.errno == errno.ENOTDIR:
            return None
        raise
    with os.fdopen(fd, "rb") as handle:
        info = os.fstat(handle.fileno())
        if not stat.S_ISREG(info.st_mode):
            raise OutputRefused(f"{path.as_posix()}: is not a regular file (a directory, FIFO or device); "
                                "move it away and rebuild")
        if info.st_size > MAX_OUTPUT_FILE_BYTES:  # no generated file comes near it: refused unread
            raise OutputRefused(f"{path.as_posix()}: larger than {MAX_OUTPUT_FILE_BYTES // (1024 * 1024)} MiB, "
                                "not a file hpcconf generated; move it away and rebuild")
        return handle.read(MAX_OUTPUT_FILE_BYTES + 1)


def _files_on_disk(out_dir: Path) -> list[str]:
    """Every regular file under ``out_dir`` (relative, sorted); a link anywhere is refused, never followed."""
    refuse_symlinks(out_dir)
    if not out_dir.is_dir():
        return []
    found = []
    for directory, dirnames, filenames in os.walk(out_dir, followlinks=False):
        for name in sorted(dirnames + filenames):
            rel = (Path(directory) / name).relative_to(out_dir).as_posix()
            mode = os.lstat(Path(directory) / name).st_mode
            if stat.S_ISLNK(mode):
                refuse_symlinks(out_dir, rel)
            if stat.S_ISREG(mode):
                found.append(rel)
    return sorted(found)


# -- the manifest ----------------------------------------------------------------------------------

def sha256(content: str | bytes) -> str:
    return hashlib.sha256(content.encode("utf-8") if isinstance(content, str) else content).hexdigest()


def manifest_text(artifacts: Iterable[Artifact], spec_file: str, generator: str) -> str:
    files = {a.path: {"sha256": sha256(a.content), "kind": a.kind, "target": a.target}
             for a in sorted(artifacts, key=lambda a: a.path)}
    data = {"generator": generator, "spec": spec_file, "files": files}
    return json.dumps(data, indent=2, sort_keys=True) + "\n"


@lru_cache(maxsize=1)
def _validator() -> Any:
    import jsonschema

    schema = json.loads((resource_dir("schemas") / "hpcconf-manifest.schema.json").read_text(encoding="utf-8"))
    return jsonschema.Draft202012Validator(schema)


def _schema_error_text(error: Any) -> str:
    where = "".join(f"[{json.dumps(step)}]" for step in error.absolute_path) or "(top level)"
    message = error.message if len(error.message) <= 200 else error.message[:200] + "..."
    return f"{where}: {message}"


def read_manifest(out_dir: Path) -> dict[str, Any] | None:
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


# -- comparing with disk ---------------------------------------------------------------------------

@dataclass
class Comparison:
    out_dir: Path
    new: list[str] = field(default_factory=list)
    stale: list[str] = field(default_factory=list)
    edited: list[str] = field(default_factory=list)
    extra: list[str] = field(default_factory=list)
    diffs: dict[str, str] = field(default_factory=dict)
    # Files on disk that no hpcconf build wrote (not in the manifest): a build never deletes
    # them, and an edited generated file that is not in the manifest is protected the same way.
    unowned: list[str] = field(default_factory=list)
    # Why a file differs when its text alone would not say (CRLF line endings, not UTF-8).
    notes: dict[str, str] = field(default_factory=dict)

    @property
    def clean(self) -> bool:
        return not (self.new or self.stale or self.edited or self.extra)


def expected_files(build: Build) -> dict[str, str]:
    files = {a.path: a.content for a in build.artifacts}
    files[MANIFEST_NAME] = manifest_text(build.artifacts, build.cluster.spec_file, GENERATOR)
    return files


def compare(build: Build, out_dir: Path) -> Comparison:
    """Compare byte for byte: a file re-encoded (Latin-1) or converted to CRLF differs from what hpcconf wrote."""
    result = Comparison(out_dir)
    refuse_symlinks(out_dir)
    recorded = (read_manifest(out_dir) or {}).get("files", {})
    expected = expected_files(build)
    for rel, content in sorted(expected.items()):
        data = read_bytes(out_dir, rel)
        current = _as_text(data)
        if data is None:
            result.new.append(rel)
        elif data != content.encode("utf-8"):
            if rel == MANIFEST_NAME or (rel in recorded and sha256(data) == recorded[rel]["sha256"]):
                result.stale.append(rel)
            else:  # changed since hpcconf wrote it, or never written by hpcconf
                result.edited.append(rel)
                if rel not in recorded:
                    result.unowned.append(rel)
        else:
            continue
        result.diffs[rel] = git_patch(_patch_path(out_dir, rel), current, content)
        note = _encoding_note(data, content) if data is not None else None
        if note:
            result.notes[rel] = note
    for rel in _files_on_disk(out_dir):
        if rel in expected:
            continue
        data = read_bytes(out_dir, rel)
        current = _as_text(data)
        if rel not in recorded:
            result.extra.append(rel)
            result.unowned.append(rel)
        elif data is None or sha256(data) != recorded[rel]["sha256"]:
            result.edited.append(rel)  # generated once, edited since, and a build would delete it
        else:
            result.extra.append(rel)
        result.diffs[rel] = git_patch(_patch_path(out_dir, rel), current, None)
    result.edited.sort()
    return result


def _encoding_note(data: bytes, content: str) -> str | None:
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError:
        return "not UTF-8: saved in another encoding"
    if text.replace("\r\n", "\n") == content:
        return "only the line endings differ (CRLF)"
    return None


def _as_text(data: bytes | None) -> str | None:
    """Bytes on disk as text for a diff; bytes that are not UTF-8 show as U+FFFD (compared as bytes anyway)."""
    return None if data is None else data.decode("utf-8", errors="replace")


def git_patch(path: str, old: str | None, new: str | None) -> str:
    """A unified diff of one file with git's headers (``diff --git``, new/deleted file mode, the
    no-newline marker), so that ``git apply`` accepts the output of ``build --diff`` and ``review``."""
    body = list(difflib.unified_diff((old or "").splitlines(keepends=True), (new or "").splitlines(keepends=True),
                                     fromfile=f"a/{path}" if old is not None else "/dev/null",
                                     tofile=f"b/{path}" if new is not None else "/dev/null"))
    if not body:
        return ""
    header = [f"diff --git a/{path} b/{path}\n"]
    if old is None:
        header.append("new file mode 100644\n")
    elif new is None:
        header.append("deleted file mode 100644\n")
    return "".join(header + [line if line.endswith("\n") else line + "\n\\ No newline at end of file\n" for line in body])


def _patch_path(out_dir: Path, rel: str) -> str:
    """The file as the patch names it: relative to the working directory where possible, so that
    ``hpcconf build --diff > p && git apply p`` works from the repository root."""
    path = out_dir / rel
    if path.is_absolute():
        try:
            return Path(os.path.relpath(path, Path.cwd())).as_posix()
        except ValueError:  # another drive on Windows
            return path.as_posix()
    return Path(os.path.normpath(path)).as_posix()


def edited_lines(diff_text: str) -> list[int]:
    """Line numbers (in the file on disk) that differ from what hpcconf generates.

    A changed or added line is named by its own number; a deleted generated line by the
    number of the line now in its place.
    """
    lines: list[int] = []
    old_line = 0
    removed_in_block = False
    for line in diff_text.splitlines():
        if line.startswith("@@"):
            old_line = int(line.split()[1].split(",")[0].lstrip("-")) - 1
            removed_in_block = False
        elif line.startswith(("---", "+++", "\\", "diff --git ", "new file mode", "deleted file mode")):
            continue  # headers, and git's "\ No newline at end of file" marker
        elif line.startswith("-"):
            old_line += 1
            lines.append(old_line)
            removed_in_block = True
        elif line.startswith("+"):
            if not removed_in_block and (not lines or lines[-1] != old_line + 1):
                lines.append(max(old_line + 1, 1))  # an empty file on disk: its "line 0" is line 1
            removed_in_block = True
        else:
            old_line += 1
            removed_in_block = False
    return sorted(set(lines))


def _lines_text(lines: list[int]) -> str:
    """'at line 7' / 'at lines 3, 5' for messages about a file that differs from the generated one."""
    if not lines:
        return "the whole file differs"
    shown = ", ".join(map(str, lines[:10])) + (" ..." if len(lines) > 10 else "")
    return f"differs at line{'s' if len(lines) > 1 else ''} {shown}"


def _why_differs(comparison: Comparison, name: str) -> str:
    return comparison.notes.get(name) or _lines_text(edited_lines(comparison.diffs[name]))


# -- reporting a comparison --------------------------------------------------------------------------

def _out_option(build: Build, root: Path) -> str:
    """`` --out ROOT`` unless ROOT is where the spec builds to anyway (its settings' out, or out/ beside it)."""
    from .settings.config import ConfigError
    from .spec_discovery import spec_output_root

    try:
        default = spec_output_root(build.spec.path, None)
    except ConfigError:
        default = None
    if default is not None and default.resolve() == root.resolve():
        return ""
    return f" --out {shlex.quote(root.as_posix())}"


def _report_comparison(build: Build, comparison: Comparison, *, explain: bool, sku_dirs: Sequence[Path]) -> None:
    spec = build.spec.file
    out = comparison.out_dir.as_posix()
    if comparison.clean:
        typer.echo(f"{spec}: {out}/ is up to date ({len(build.artifacts)} files)")
        return
    for label, names in (("missing", comparison.new), ("stale", comparison.stale)):
        for name in names:
            note = f" ({comparison.notes[name]})" if name in comparison.notes else ""
            typer.echo(f"{spec}: {label}: {out}/{name}{note}")
    for name in comparison.edited:
        origin = "not written by hpcconf" if name in comparison.unowned else "edited by hand"
        typer.echo(f"{spec}: {origin}: {out}/{name} ({_why_differs(comparison, name)})")
    for name in comparison.extra:
        why = "not generated by this spec" if name in comparison.unowned else "no longer generated"
        typer.echo(f"{spec}: extra ({why}): {out}/{name}")
    shown = sorted(comparison.diffs)
    if len(shown) > 1:  # the manifest's hash lines only restate the other diffs: keep the review short
        shown = [n for n in shown if n != MANIFEST_NAME]
    for name in shown:
        typer.echo(comparison.diffs[name], nl=False)
    if explain:
        from .explain_diff import explain_changes

        changed = [n for n in sorted(comparison.diffs) if n != MANIFEST_NAME]
        typer.echo(explain_changes(build, comparison.out_dir, changed, sku_dirs), nl=False)
    fixable = comparison.new or comparison.stale or comparison.edited or set(comparison.extra) - set(comparison.unowned)
    if fixable:
        force = ""
        if comparison.edited:
            force = " --force   # first move the hand edits into the spec: --force discards them"
        typer.echo(f"fix: hpcconf build {shlex.quote(spec)}{_out_option(build, comparison.out_dir.parent)}{force}")
    foreign = [n for n in comparison.extra if n in comparison.unowned]
    if foreign:
        typer.echo(f"fix: delete {', '.join(f'{out}/{n}' for n in foreign)} "
                   f"(hpcconf owns {out}/; keep hand-written files outside it)")


def _orphaned_outputs(builds: list[Build], out_root: Path) -> list[tuple[str, str]]:
    """(directory name, spec it came from) for OUT/<name>/ dirs with a manifest that no spec builds now."""
    if not out_root.is_dir():
        return []
    names = {b.name for b in builds}
    found = []
    for directory in sorted(d for d in out_root.iterdir()
                            if d.is_dir() and not d.is_symlink() and d.name not in names and STAGING_MARK not in d.name):
        try:
            manifest = read_manifest(directory)
        except OutputRefused:
            manifest = {"spec": "? (its manifest is invalid)"}
        if manifest is not None:
            found.append((directory.name, str(manifest.get("spec", "?"))))
    return found


def _report_orphans(orphans: list[tuple[str, str]], out_root: Path, err: bool) -> None:
    for name, spec in orphans:
        where = f"{out_root.as_posix()}/{name}/"
        typer.echo(f"{where}: left over: generated from {spec}, but no spec builds metadata.name '{name}' now "
                   f"(renamed or deleted)", err=err)
        typer.echo(f"fix: git rm -r {where}   (or delete it)", err=err)


# -- writing -----------------------------------------------------------------------------------------

def _other_spec_output(build: Build, out_dir: Path) -> str | None:
    """The spec beside this one whose output ``out_dir`` is (its manifest names it), or None: two specs with one
    metadata.name built in separate runs would otherwise take turns overwriting one directory."""
    try:
        manifest = read_manifest(out_dir)
    except OutputRefused:
        return None  # compare() reports an untrusted manifest
    recorded = str(manifest.get("spec") or "") if manifest else ""
    if not recorded or recorded == build.cluster.spec_file or "/" in recorded or recorded in (".", ".."):
        return None
    # A renamed spec leaves no file under its old name; a spec still there is a second owner.
    return recorded if (build.spec.path.parent / recorded).is_file() else None


def _refuse_other_specs_outputs(builds: list[Build], out_root: Path) -> bool:
    refused = False
    for build in builds:
        out_dir = out_root / build.name
        other = _other_spec_output(build, out_dir)
        if other is not None:
            typer.echo(f"hpcconf: error: {out_dir.as_posix()}/ was generated from {other}, which is still there; "
                       f"{build.spec.file} has the same metadata.name '{build.name}'. Give each cluster its own "
                       f"name (or delete {out_dir.as_posix()}/ to hand it over). Nothing was written.", err=True)
            refused = True
    return refused


def _write_build(build: Build, out_dir: Path, force: bool, quiet: bool) -> int:
    comparison = compare(build, out_dir)
    if comparison.edited and not force:
        for name in comparison.edited:
            lines = _why_differs(comparison, name)
            action = "delete" if name not in {a.path for a in build.artifacts} else "overwrite"
            origin = "not written by hpcconf" if name in comparison.unowned else "edited by hand"
            typer.echo(f"{out_dir.as_posix()}/{name}: {origin} ({lines}); refusing to {action} it.", err=True)
        typer.echo(f"Move the change into the spec ({build.spec.file}; overrides such as nccl_env or mpi_env), "
                   "or pass --force to discard it. Nothing was written.", err=True)
        return EXIT_STALE
    manifest = manifest_text(build.artifacts, build.cluster.spec_file, GENERATOR)
    report = write_artifacts(out_dir, build.artifacts, manifest)
    if not quiet:
        for name in report.written:
            typer.echo(f"wrote     {out_dir.as_posix()}/{name}")
        for name in report.removed:
            typer.echo(f"removed   {out_dir.as_posix()}/{name}")
        typer.echo(f"{build.spec.file}: {len(report.written)} written, {len(report.unchanged)} unchanged, "
                   f"{len(report.removed)} removed in {out_dir.as_posix()}/")
    return EXIT_OK


@dataclass
class WriteReport:
    written: list[str] = field(default_factory=list)
    unchanged: list[str] = field(default_factory=list)
    removed: list[str] = field(default_factory=list)


@contextlib.contextmanager
def output_lock(out_root: Path) -> Iterator[None]:
    """Hold an exclusive ``flock`` on the output root while a build compares and writes.

    The lock is on the directory itself, so no lock file is left in the tree; a second build
    into the same root waits for the first instead of interleaving with it.
    """
    import fcntl

    out_root.mkdir(parents=True, exist_ok=True)
    fd = os.open(out_root, os.O_RDONLY | getattr(os, "O_DIRECTORY", 0))
    try:
        fcntl.flock(fd, fcntl.LOCK_EX)
        yield
    finally:
        os.close(fd)  # closing releases the lock


def write_artifacts(out_dir: Path, artifacts: list[Artifact], manifest: str) -> WriteReport:
    """Write changed files, remove files a previous build generated that are gone now, update the manifest.

    The caller holds :func:`output_lock` on ``out_dir.parent``. All or nothing (see the module's
    docstring); a link anywhere at or under ``out_dir`` stops the build before anything is written.
    """
    recover(out_dir)
    refuse_symlinks(out_dir)
    previous = read_manifest(out_dir) or {}
    report = WriteReport()
    changed: list[Artifact] = []
    for artifact in sorted(artifacts, key=lambda a: a.path):
        if read_bytes(out_dir, artifact.path) == artifact.content.encode("utf-8"):
            report.unchanged.append(artifact.path)
        else:
            changed.append(artifact)
            report.written.append(artifact.path)
    new_paths = {a.path for a in artifacts}
    for stale in sorted(set(previous.get("files", {})) - new_paths):
        path = inside(out_dir, stale)
        if path.is_file():
            report.removed.append(stale)
    manifest_changed = read_bytes(out_dir, MANIFEST_NAME) != manifest.encode("utf-8")
    if not (changed or report.removed or manifest_changed):
        return report
    _replace_directory(out_dir, changed, report.removed, manifest)
    return report


def _crash_point(step: str) -> None:
    if os.environ.get(CRASH_HOOK) == step:
        os.kill(os.getpid(), signal.SIGKILL)


def _old_dir(out_dir: Path) -> Path:
    return out_dir.with_name(f".{out_dir.name}{STAGING_MARK}old")


def recover(out_dir: Path) -> None:
    """Finish or undo what a build killed mid-swap left behind (called under the lock)."""
    old = _old_dir(out_dir)
    if old.is_dir() and not old.is_symlink():
        if not os.path.lexists(out_dir):
            os.rename(old, out_dir)  # killed between the two renames: the previous output comes back
        else:
            shutil.rmtree(old)
    for leftover in out_dir.parent.glob(f".{out_dir.name}{STAGING_MARK}new-*"):
        if leftover.is_dir() and not leftover.is_symlink():
            shutil.rmtree(leftover)


def _replace_directory(out_dir: Path, changed: list[Artifact], removed: list[str], manifest: str) -> None:
    made = [d for d in [out_dir.parent, *out_dir.parent.parents] if not d.exists()]
    out_dir.parent.mkdir(parents=True, exist_ok=True)
    staging = Path(tempfile.mkdtemp(prefix=f".{out_dir.name}{STAGING_MARK}new-", dir=out_dir.parent))
    try:
        _fill_and_swap(staging, out_dir, changed, removed, manifest)
    except BaseException:
        if staging.is_dir():
            shutil.rmtree(staging, ignore_errors=True)
        for directory in made:  # the directories this build created, innermost first
            with contextlib.suppress(OSError):
                directory.rmdir()
        raise


def _fill_and_swap(staging: Path, out_dir: Path, changed: list[Artifact], removed: list[str], manifest: str) -> None:
    exists = out_dir.is_dir()
    os.chmod(staging, stat.S_IMODE(os.stat(out_dir).st_mode) if exists else _default_dir_mode())
    if exists:
        _copy_tree(out_dir, staging)
    _crash_point("copied")
    for artifact in changed:
        _write_file(staging, artifact.path, artifact.content, out_dir)
    for rel in removed:
        (staging / rel).unlink(missing_ok=True)
    _write_file(staging, MANIFEST_NAME, manifest, out_dir)
    _crash_point("staged")
    _swap_in(staging, out_dir)
    _crash_point("done")


def _copy_tree(source: Path, staging: Path) -> None:
    """Hard-link every file of ``source`` into ``staging`` (copy where links are not allowed)."""
    for directory, dirnames, filenames in os.walk(source, followlinks=False):
        rel_dir = Path(directory).relative_to(source)
        for name in dirnames + filenames:
            path = Path(directory) / name
            info = os.lstat(path)
            if stat.S_ISLNK(info.st_mode):
                refuse_symlinks(source, (rel_dir / name).as_posix())
            target = staging / rel_dir / name
            if stat.S_ISDIR(info.st_mode):
                target.mkdir()
                os.chmod(target, stat.S_IMODE(info.st_mode))
            elif stat.S_ISREG(info.st_mode):
                try:
                    os.link(path, target, follow_symlinks=False)
                except OSError:
                    shutil.copy2(path, target, follow_symlinks=False)
            else:
                raise OutputRefused(f"{path.as_posix()}: is not a regular file or directory; move it away and rebuild")


def _write_file(staging: Path, rel: str, content: str, out_dir: Path) -> None:
    target = staging / rel
    try:
        target.parent.mkdir(parents=True, exist_ok=True)
        target.unlink(missing_ok=True)  # a hard link to the previous version: never write through it
        mode = 0o755 if content.startswith("#!") else 0o644
        fd = os.open(target, os.O_WRONLY | os.O_CREAT | os.O_EXCL | getattr(os, "O_NOFOLLOW", 0), mode)
        with os.fdopen(fd, "wb") as handle:
            handle.write(content.encode("utf-8"))
        os.chmod(target, mode)  # whatever the umask: the modes are part of the output
    except OSError as exc:  # name the file the user asked for, not our staging copy
        raise OSError(exc.errno, exc.strerror, str(out_dir / rel)) from None


def _default_dir_mode() -> int:
    mask = os.umask(0)
    os.umask(mask)
    return 0o777 & ~mask


def _rename_exchange(a: Path, b: Path) -> bool:
    """Atomically swap two directories (Linux renameat2 RENAME_EXCHANGE); False where unsupported."""
    libc_name = ctypes.util.find_library("c")
    if not libc_name:
        return False
    libc = ctypes.CDLL(libc_name, use_errno=True)
    renameat2 = getattr(libc, "renameat2", None)
    if renameat2 is None:
        return False
    at_fdcwd, rename_exchange = -100, 2
    if renameat2(at_fdcwd, os.fsencode(a), at_fdcwd, os.fsencode(b), rename_exchange) == 0:
        return True
    code = ctypes.get_errno()
    if code in (errno.EINVAL, errno.ENOSYS, errno.EOPNOTSUPP, errno.ENOTSUP):
        return False
    raise OSError(code, os.strerror(code), str(b))


def _swap_in(staging: Path, out_dir: Path) -> None:
    if not os.path.lexists(out_dir):
        os.rename(staging, out_dir)
        return
    if _rename_exchange(staging, out_dir):
        _crash_point("exchanged")
        shutil.rmtree(staging)  # now the previous tree
        return
    old = _old_dir(out_dir)
    os.rename(out_dir, old)
    _crash_point("moved-old")
    os.rename(staging, out_dir)
    _crash_point("moved-new")
    shutil.rmtree(old)
