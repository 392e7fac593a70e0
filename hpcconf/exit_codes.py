"""hpcconf's exit codes (README "Exit codes"), :func:`fail`, the one way a command reports an HpcconfError, and
:func:`usage_error`, the one way it reports a bad option.

Exit codes:
  0  success / nothing to report
  1  lint findings at or above --fail-level; `build --check` found stale or hand-edited files or lint
     errors; `build --diff` has changes to show; `build` refused to overwrite hand edits or to write
     artifacts with lint errors; `review` found hand-edited or stale generated files or a spec that
     does not build
  2  invalid input or usage: a spec that does not validate, an unreadable file, a bad option;
     `review` outside a git repository or with an unknown revision
  3  `review --detailed-exitcode`: changes, none of them disruptive
  4  `review --detailed-exitcode`: changes that drain, delete or replace nodes or change the IB network
 70  an internal error (a bug in hpcconf): one line saying so; HPCCONF_DEBUG=1 shows the traceback
141  the reader of stdout left (`hpcconf rules | head`): the command ends quietly, as shell tools do

A leaf module: every command imports it, and it imports no command.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from .diagnostic_text import render_all
from .diagnostics import HpcconfError

if TYPE_CHECKING:  # typer loads with the command that raises its Exit: lint's own path never imports it
    import typer

EXIT_OK = 0
EXIT_FINDINGS = 1  # lint findings, a stale or hand-edited output, a run below its floor, a refused write
EXIT_INVALID = 2  # invalid input or usage
EXIT_CHANGES, EXIT_DISRUPTIVE = 3, 4  # `review --detailed-exitcode` only
EXIT_INTERNAL = 70  # a bug in hpcconf
EXIT_BROKEN_PIPE = 141  # the reader of stdout left (128 + SIGPIPE), as shell tools end


def usage_error(message: str) -> "typer.Exit":
    """A bad option or argument: one line on stderr, exit 2 (raise what it returns)."""
    import typer

    typer.echo(f"hpcconf: error: {message}", err=True)
    return typer.Exit(EXIT_INVALID)


def fail(error: HpcconfError) -> "typer.Exit":
    import typer

    from .term import echo_findings

    echo_findings(render_all(error.diagnostics))
    count = len(error.diagnostics)
    typer.echo(f"\n{count} error{'s' if count != 1 else ''}.", err=True)
    return typer.Exit(EXIT_INVALID)
