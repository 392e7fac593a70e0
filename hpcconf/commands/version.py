"""`hpcconf version`: the same line as `hpcconf --version` (which hpcconf.entry answers before typer loads)."""

from __future__ import annotations

import typer

from .. import __version__


def version_command() -> None:
    """Print the hpcconf version (same as `hpcconf --version`)."""
    typer.echo(f"hpcconf {__version__}")
