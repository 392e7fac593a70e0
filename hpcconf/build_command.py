"""`hpcconf build`: compile specs, lint them, then choose what to do with the output directories.

Writing (the default), checking (--check) and showing the patch (--diff) are the output directory's
owner's (:mod:`hpcconf.output_dir`, which also says what "stale", "edited" and "extra" mean); this module
finds the specs, compiles and lints them, groups them by output root and picks the action.

SPEC arguments may be files, quoted globs or directories (hpcconf.spec_discovery).
"""

from __future__ import annotations

from pathlib import Path
from typing import Sequence

import typer

from . import output_dir
from .build_lint import lint_builds, report_lint
from .diagnostic_text import render_all
from .diagnostics import HpcconfError
from .exit_codes import EXIT_INVALID, EXIT_OK
from .pipeline import Build, compile_spec

EXIT_STALE = output_dir.EXIT_STALE


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
        return EXIT_OK
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
            status = max(status, _act(group, root, specs, sku_dirs, check=check, diff=diff,
                                       explain=explain, force=force, quiet=quiet, lint_failed=lint_failed))
        return status
    except output_dir.OutputRefused as refusal:
        typer.echo(f"hpcconf: error: {refusal}", err=True)
        typer.echo("build refused: nothing was written.", err=True)
        return EXIT_INVALID


def _act(builds: list[Build], out_root: Path, specs: Sequence[Path], sku_dirs: Sequence[Path], *,
         check: bool, diff: bool, explain: bool, force: bool, quiet: bool, lint_failed: bool) -> int:
    """The one choice this module makes about an output root: which of the owner's actions runs."""
    leftovers = _covers_output_root(list(specs) or [Path(".")], out_root)
    if check:
        return output_dir.check(builds, out_root, leftovers=leftovers, explain=explain, sku_dirs=sku_dirs,
                                lint_failed=lint_failed)
    if diff:
        return output_dir.diff(builds, out_root, leftovers=leftovers, explain=explain, sku_dirs=sku_dirs)
    return output_dir.write(builds, out_root, leftovers=leftovers, force=force, quiet=quiet)


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
