"""`hpcconf schema`: its options; the schema is :func:`hpcconf.spec.schema.schema_text`."""

from __future__ import annotations

from pathlib import Path
from typing import Optional

import typer


def schema_command(output: Optional[Path] = typer.Option(None, "--output", "-o", "--out", metavar="FILE",
                                                 help="Write to this file instead of stdout ('-': stdout).")) -> None:
    """Print the spec's JSON Schema (for editors: yaml-language-server)."""
    from ..spec.schema import schema_text

    text = schema_text()
    if output and str(output) != "-":
        output.write_text(text, encoding="utf-8")
    else:
        typer.echo(text, nl=False)
