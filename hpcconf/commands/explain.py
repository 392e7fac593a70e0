"""`hpcconf explain CODE`: its options; the work is :func:`hpcconf.lint.command.run_explain`."""

from __future__ import annotations

import typer

from .. import completion


def explain_command(code: str = typer.Argument(..., metavar="CODE", help="A rule code (NCCL001) or name.",
                                                   autocompletion=completion.rule_code)) -> None:
    """Print a rule's page: what it catches, why it matters, an example and the fix."""
    from ..lint.command import run_explain

    run_explain(code=code)
