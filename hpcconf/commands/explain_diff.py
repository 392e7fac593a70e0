"""`hpcconf explain-diff`: which spec field changed which artifact (the work is in :mod:`hpcconf.explain_diff`)."""

from __future__ import annotations

from pathlib import Path
from typing import List, Optional

import typer

from ..diagnostic_text import render_all
from ..diagnostics import HpcconfError
from ..exit_codes import EXIT_INVALID, usage_error
from ..sku_dirs import sku_dir_option, with_settings_dirs


def explain_diff_command(
    spec: Path = typer.Argument(..., metavar="SPEC", help="The spec as it is now."),
    against: Optional[Path] = typer.Option(None, "--against", metavar="FILE", help="The earlier spec file (default: the spec at --rev)."),
    rev: str = typer.Option("HEAD", "--rev", metavar="REV", help="Git revision of the earlier spec (when --against is not given)."),
    show_diff: bool = typer.Option(False, "--diff", help="Also print the unified diff of each changed artifact."),
    sku_dir: List[Path] = sku_dir_option(),
) -> None:
    """Say which spec field caused each artifact change between an earlier spec and this one."""
    from ..explain_diff import explain_specs, load_old_spec, spec_at_revision
    from ..output_dir import git_patch
    from ..pipeline import compile_spec

    sku_dir = with_settings_dirs(sku_dir)
    try:
        build = compile_spec(spec, sku_dir)
        if against is not None:
            from ..spec.load import read_spec_text

            old_text, old_label = read_spec_text(against), against.as_posix()
        else:
            earlier = spec_at_revision(spec, rev)
            if earlier is None:
                raise usage_error(f"{spec} has no version at git revision {rev!r}; pass --against OLD_SPEC")
            old_text, old_label = earlier
        old_data = load_old_spec(old_text, old_label)
    except HpcconfError as error:
        typer.echo(render_all(error.diagnostics), err=True)
        raise typer.Exit(EXIT_INVALID) from None
    try:  # an earlier spec that does not build leaves nothing to compare with: say so instead of guessing
        compile_spec(spec, sku_dir, text=old_text, display_name=old_label)
    except HpcconfError as error:
        typer.echo(f"hpcconf: error: the earlier spec {old_label} does not build, so there is nothing to compare "
                   "against:", err=True)
        typer.echo(render_all(error.diagnostics), err=True)
        raise typer.Exit(EXIT_INVALID) from None
    explanation = explain_specs(build, old_data, old_label, sku_dir)
    typer.echo(explanation.render(), nl=False)
    if show_diff and explanation.artifacts:
        from ..explain_diff import compile_data

        try:
            old_files = compile_data(old_data, build, sku_dir, old_label)
        except HpcconfError as error:
            typer.echo(f"(no diff: the earlier spec does not build: {error.diagnostics[0].message})", err=True)
            return
        new_files = {a.path: a.content for a in build.artifacts}
        for artifact in explanation.artifacts:
            typer.echo(git_patch(artifact.path, old_files.get(artifact.path), new_files.get(artifact.path)), nl=False)
