"""`hpcconf build`: compile specs, then write, check (--check) or show (--diff) the result.

Status of each file against disk, using the manifest the writer keeps:
  new        generated now, not on disk (reported as "missing")
  stale      on disk as a previous build wrote it, but the build now differs
  edited     on disk with content no build wrote (its hash differs from the manifest, or it is
             not in the manifest at all: "not written by hpcconf"); a build refuses to
             overwrite or delete it without --force
  extra      on disk under the cluster's directory, but the build does not produce it
             (no longer generated, or never written by hpcconf: the "unowned" ones)
When the specs come from a directory containing the output root, OUT/<name>/ directories
that no spec builds any more are reported as left over.

SPEC arguments may be files, quoted globs or directories (hpcconf.spec_discovery).
"""

from __future__ import annotations

import difflib
import os
import shlex
import stat
from dataclasses import dataclass, field
from pathlib import Path
from typing import Sequence

import typer

from .build_lint import lint_builds, report_lint
from .diagnostics import HpcconfError, render_all
from .pipeline import Build, compile_spec
from .writer import (
    GENERATOR,
    MANIFEST_NAME,
    STAGING_MARK,
    OutputRefused,
    manifest_text,
    output_lock,
    read_bytes,
    read_manifest,
    refuse_symlinks,
    sha256,
    write_artifacts,
)

EXIT_OK, EXIT_STALE, EXIT_INVALID = 0, 1, 2
EXIT_CHANGES = 1  # build --diff: there are changes to show


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


def _compile_all(specs: Sequence[Path], sku_dirs: Sequence[Path]) -> list[Build] | None:
    builds, failed = [], False
    for spec in specs:
        try:
            builds.append(compile_spec(spec, sku_dirs))
        except HpcconfError as exc:
            from .term import echo_findings

            echo_findings(render_all(exc.diagnostics))
            failed = True
    if failed:
        typer.echo("\nbuild refused: fix the errors above; nothing was written.", err=True)
        return None
    return builds


def _lines_text(lines: list[int]) -> str:
    """'at line 7' / 'at lines 3, 5' for messages about a file that differs from the generated one."""
    if not lines:
        return "the whole file differs"
    shown = ", ".join(map(str, lines[:10])) + (" ..." if len(lines) > 10 else "")
    return f"differs at line{'s' if len(lines) > 1 else ''} {shown}"


def _why_differs(comparison: Comparison, name: str) -> str:
    return comparison.notes.get(name) or _lines_text(edited_lines(comparison.diffs[name]))


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


def _report_check(build: Build, comparison: Comparison, show_diff: bool, explain: bool,
                  sku_dirs: Sequence[Path] = ()) -> None:
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
    if show_diff:
        shown = sorted(comparison.diffs)
        if len(shown) > 1:  # the manifest's hash lines only restate the other diffs: keep the review short
            shown = [n for n in shown if n != MANIFEST_NAME]
        for name in shown:
            typer.echo(comparison.diffs[name], nl=False)
    if explain:
        from .explain_diff import explain_changes

        typer.echo(explain_changes(build, comparison, sku_dirs), nl=False)
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


def _write(build: Build, out_dir: Path, force: bool, quiet: bool) -> int:
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


def _same_output_dirs(builds: list[Build]) -> bool:
    """Two specs with one metadata.name would overwrite each other's OUT/<name>/."""
    first: dict[str, Build] = {}
    clash = False
    for b in builds:
        if b.name in first:
            typer.echo(f"hpcconf: error: {b.spec.file} and {first[b.name].spec.file} both have metadata.name "
                       f"'{b.name}' and would write the same directory; give each cluster its own name.", err=True)
            clash = True
        first.setdefault(b.name, b)
    return clash


def _by_output_root(builds: list[Build], out: Path | None, config_file: Path | None) -> dict[Path, list[Build]]:
    """The builds grouped by output root (``--out``, else the settings nearest each spec, else out/ beside it)."""
    from .spec_discovery import spec_output_root

    groups: dict[Path, list[Build]] = {}
    for b in builds:
        groups.setdefault(spec_output_root(b.spec.path, out, config_file), []).append(b)
    return groups


def run_build(specs: Sequence[Path], out: Path | None, sku_dirs: Sequence[Path], *, check: bool, diff: bool,
              explain: bool, force: bool, quiet: bool,
              config_file: Path | None = None) -> int:
    from .settings.config import ConfigError, load_settings
    from .spec_discovery import NO_SPEC_FOUND, expand_spec_args, output_root

    try:
        config = load_settings(config_file=config_file, sku_dirs=sku_dirs)
    except ConfigError as error:
        typer.echo(f"hpcconf: error: {error}", err=True)
        return EXIT_INVALID
    sku_dirs = config.lint.sku_dirs  # the settings' sku-dir, then --sku-dir (hpcconf.sku_dirs)
    out_root = output_root(out, config)  # what a directory argument's discovery leaves out
    spec_paths, problems = expand_spec_args(list(specs) or [Path(".")], out_root, config)
    if check and not spec_paths and problems and all(p.endswith(NO_SPEC_FOUND) for p in problems):
        # `--check` of a repository that holds no spec (the pre-commit hook in a repository that only lints):
        # nothing can drift from a spec, so there is nothing to fail.
        typer.echo(f"hpcconf: {problems[0]}: nothing to check", err=True)
        return 0
    for problem in problems:
        typer.echo(f"hpcconf: error: {problem}", err=True)
    if problems:
        return EXIT_INVALID
    builds = _compile_all(spec_paths, sku_dirs)
    if builds is None:
        return EXIT_INVALID
    try:
        groups = _by_output_root(builds, out, config_file)
    except ConfigError as error:
        typer.echo(f"hpcconf: error: {error}", err=True)
        return EXIT_INVALID
    if any(_same_output_dirs(group) for group in groups.values()):
        return EXIT_INVALID
    linted = lint_builds(builds, config.lint)  # what `hpcconf lint SPEC` says of them (hpcconf.build_lint)
    if linted is None:
        return EXIT_INVALID
    action = "check" if check else "diff" if diff else "force" if force else "write"
    lint_failed = report_lint(builds, linted, action=action, quiet=quiet)
    if lint_failed and action == "write":
        return EXIT_STALE
    try:
        status = EXIT_OK
        for root, group in groups.items():
            status = max(status, _check_or_write(group, root, specs, sku_dirs, check=check, diff=diff,
                                                 explain=explain, force=force, quiet=quiet, lint_failed=lint_failed))
        return status
    except OutputRefused as refusal:
        typer.echo(f"hpcconf: error: {refusal}", err=True)
        typer.echo("build refused: nothing was written.", err=True)
        return EXIT_INVALID


def _check_or_write(builds: list[Build], out_root: Path, specs: Sequence[Path], sku_dirs: Sequence[Path], *,
                    check: bool, diff: bool, explain: bool, force: bool, quiet: bool, lint_failed: bool) -> int:
    orphans = _orphaned_outputs(builds, out_root) if _covers_output_root(list(specs) or [Path(".")], out_root) else []
    if check or diff:
        dirty = bool(orphans)
        for b in builds:
            comparison = compare(b, out_root / b.name)
            dirty |= not comparison.clean
            _report_check(b, comparison, show_diff=True, explain=explain, sku_dirs=sku_dirs)
        _report_orphans(orphans, out_root, err=False)
        if check and dirty:
            typer.echo("check failed: the generated files differ from their specs (see above).", err=True)
        if check:
            return EXIT_STALE if (dirty or lint_failed) else EXIT_OK
        return EXIT_CHANGES if dirty else EXIT_OK  # --diff: like `git diff --exit-code`
    status = EXIT_OK
    with output_lock(out_root):  # a concurrent build into the same root waits: the two never interleave
        if _refuse_other_specs_outputs(builds, out_root):  # under the lock: a concurrent build's manifest counts
            return EXIT_INVALID
        for b in builds:
            status = max(status, _write(b, out_root / b.name, force, quiet))
    _report_orphans(orphans, out_root, err=True)
    return status


def _covers_output_root(args: Sequence[Path], out_root: Path) -> bool:
    """A directory argument that contains the output root means "every spec that writes there",
    so an output directory none of them builds is left over (a renamed or deleted spec)."""
    root = out_root.resolve()
    for arg in args:
        path = Path(arg)
        if path.is_dir():
            try:
                root.relative_to(path.resolve())
                return True
            except ValueError:
                continue
    return False


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
