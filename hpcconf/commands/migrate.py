"""`hpcconf migrate`: its options and report; the steps are :mod:`hpcconf.spec.migrations`."""

from __future__ import annotations

from pathlib import Path
from typing import List

import typer

from ..diagnostic_text import render_all
from ..diagnostics import HpcconfError
from ..exit_codes import EXIT_INVALID, EXIT_OK


def migrate_command(
    specs: List[Path] = typer.Argument(..., metavar="SPEC", help="Spec files to convert to the current apiVersion."),
    write: bool = typer.Option(False, "--write", "-w", help="Rewrite the files in place (comments are kept)."),
) -> None:
    """Convert specs to the current spec format version (hpcconf/v1 is the only one so far)."""
    from ..spec.migrations import MigrationError, current_version, migrate_text

    status = EXIT_OK
    for spec in specs:
        try:
            from ..spec.load import read_spec_text
            from ..yamlpos import load_document

            text = read_spec_text(spec)
            load_document(text, str(spec))  # YAML errors with file:line:col, as build reports them
            new_text, steps = migrate_text(text)
        except HpcconfError as error:
            typer.echo(render_all(error.diagnostics), err=True)
            status = EXIT_INVALID
            continue
        except MigrationError as exc:
            typer.echo(f"{spec}: error: {exc}", err=True)
            status = EXIT_INVALID
            continue
        if not steps:
            typer.echo(f"{spec}: no migration needed: {current_version()} is the only version")
        elif write:
            spec.write_text(new_text, encoding="utf-8")
            typer.echo(f"{spec}: migrated ({', '.join(steps)})")
        else:
            typer.echo(new_text, nl=False)
    raise typer.Exit(status)
