"""`hpcconf rules`: its options; the work is :func:`hpcconf.lint.command.run_rules`."""

from __future__ import annotations

import typer

from .. import completion


def rules_command(fmt: str = typer.Option("text", "--format", metavar="FORMAT", help="text or json.",
                                          autocompletion=completion.choices("text", "json"))) -> None:
    """List every rule: code, name, default severity, summary."""
    from ..lint.command import run_rules

    run_rules(fmt=fmt)
