"""`hpcconf build`: its options; the work is :func:`hpcconf.build_command.run_build`."""

from __future__ import annotations

from pathlib import Path
from typing import List, Optional

import typer

from ..exit_codes import EXIT_INVALID
from ..sku_dirs import sku_dir_option


def build_command(
    specs: Optional[List[Path]] = typer.Argument(None, metavar="SPEC", help="Spec files, quoted globs ('examples/*.yaml') or directories (every tracked hpcconf spec in them). Default: the current directory."),
    out: Optional[Path] = typer.Option(None, "--output", "-o", "--out", metavar="DIR", help="Output root; each cluster goes to DIR/<name>/. Default: the `out` key of [tool.hpcconf] / .hpcconf.toml, else out/ next to each spec."),
    sku_dir: List[Path] = sku_dir_option(),
    check: bool = typer.Option(False, "--check", help="Write nothing; exit 1 if the files on disk differ from a fresh build."),
    diff: bool = typer.Option(False, "--diff", help="Write nothing; print a unified diff of what a build would change."),
    explain: bool = typer.Option(False, "--explain", help="With --diff/--check: say which spec fields each changed file depends on."),
    force: bool = typer.Option(False, "--force", help="Overwrite generated files even if they were edited by hand, and write despite lint errors."),
    quiet: bool = typer.Option(False, "--quiet", "-q", help="Print only problems."),
    config_file: Optional[Path] = typer.Option(None, "--config", metavar="FILE", help="Settings file (.hpcconf.toml or pyproject.toml); default: the nearest one."),
) -> None:
    """Compile specs into their artifacts under DIR/<cluster name>/ (DIR: -o, default out/ next to the spec)."""
    from ..build_command import run_build

    if explain and not (check or diff):
        typer.echo("hpcconf: error: --explain needs --diff or --check (it explains a comparison)", err=True)
        raise typer.Exit(EXIT_INVALID)
    raise typer.Exit(run_build(specs or [], out, sku_dir, check=check, diff=diff, explain=explain, force=force, quiet=quiet,
                               config_file=config_file))
