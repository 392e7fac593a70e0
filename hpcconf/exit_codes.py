"""hpcconf's exit codes (README "Exit codes") and :func:`fail`, the one way a command reports an HpcconfError.

A leaf module: every command imports it, and it imports no command.
"""

from __future__ import annotations

import typer

from .diagnostics import HpcconfError, render_all

EXIT_OK, EXIT_FINDINGS, EXIT_INVALID, EXIT_INTERNAL = 0, 1, 2, 70


def fail(error: HpcconfError) -> "typer.Exit":
    from .term import echo_findings

    echo_findings(render_all(error.diagnostics))
    count = len(error.diagnostics)
    typer.echo(f"\n{count} error{'s' if count != 1 else ''}.", err=True)
    return typer.Exit(EXIT_INVALID)
