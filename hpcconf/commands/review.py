"""`hpcconf review`: its options; the work is :func:`hpcconf.review.command.run_review`."""

from __future__ import annotations

from pathlib import Path
from typing import List, Optional

import typer

from .. import completion


def review_command(
    base: Optional[str] = typer.Option(None, "--base", metavar="REV", help="Earlier revision. Default: the merge-base of HEAD with the default branch (origin/HEAD, origin/main, origin/master, main, master); HEAD when HEAD is on it."),
    head: Optional[str] = typer.Option(None, "--head", metavar="REV", help="Later revision. Default: the working tree."),
    output_format: str = typer.Option("text", "--format", "-f", metavar="FORMAT", help="text, markdown (PR comment, GitHub job summary) or json.",
                                      autocompletion=completion.choices_of("hpcconf.review.command", "FORMATS")),
    output: Optional[Path] = typer.Option(None, "--output", "-o", "--out", metavar="FILE", help="Write the report to FILE ('-': stdout)."),
    sku_dir: List[Path] = typer.Option([], "--sku-dir", metavar="DIR", help="Extra SKU directory (adds or overrides; repeatable)."),
    config_file: Optional[Path] = typer.Option(None, "--config", metavar="FILE", help="Settings file; default: the one at the repository root."),
    detailed_exitcode: bool = typer.Option(False, "--detailed-exitcode", help="Exit 0 when nothing changed, 3 for changes that disrupt nothing running, 4 when applying them drains, deletes or replaces nodes or changes the InfiniBand network (1 and 2 as always, first)."),
) -> None:
    """Review every spec and generated file between two git revisions: what changed, which spec field
    caused it, what applying it does to a running cluster; hand edits and stale outputs (exit 1)."""
    from ..review.command import run_review

    raise typer.Exit(run_review(base, head, output_format, output, sku_dir, config_file, detailed_exitcode))
