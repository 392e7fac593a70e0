"""`hpcconf migrate`: convert a spec to the current format version.

Spec format versions: a spec says ``apiVersion: hpcconf/v1``; the loader refuses any other
value (HPC007). When a v2 exists, ``hpcconf migrate`` will convert a spec step by step
(``MIGRATIONS``: from-version -> (to-version, step)), editing the ruamel round-trip tree in
place so that the user's comments, key order and quoting survive. Today v1 is the only
version, so ``migrate`` says there is nothing to do (or refuses a version it does not know).
"""

from __future__ import annotations

import io
from pathlib import Path
from typing import Any, Callable, List

import typer

from ..diagnostics import HpcconfError, render_all
from ..exit_codes import EXIT_INVALID, EXIT_OK


def _api_version() -> str:
    """The current spec format version, read when a migration runs (the spec models cost ~0.3 s to build)."""
    from ..spec.model import API_VERSION

    return API_VERSION


# from apiVersion -> (to apiVersion, step that edits the round-trip tree in place). Empty: v1 is the first.
MIGRATIONS: dict[str, tuple[str, Callable[[Any], None]]] = {}


class MigrationError(ValueError):
    pass


def _round_trip_yaml() -> Any:
    from ruamel.yaml import YAML

    yaml = YAML(typ="rt")
    yaml.preserve_quotes = True
    yaml.indent(mapping=2, sequence=4, offset=2)  # the layout `hpcconf init` and the examples use
    yaml.width = 4096  # never re-wrap long lines
    return yaml


def migrate_text(text: str) -> tuple[str, list[str]]:
    """Convert a spec to the current apiVersion; returns (new text, steps applied). Comments survive."""
    yaml = _round_trip_yaml()
    data = yaml.load(text)
    if not hasattr(data, "get"):
        raise MigrationError("not a spec: the file is not a YAML mapping")
    version = data.get("apiVersion")
    if version is None:
        raise MigrationError(f"no apiVersion; add 'apiVersion: {_api_version()}' at the top")
    steps: list[str] = []
    while version != _api_version():
        if version not in MIGRATIONS:
            known = ", ".join([_api_version(), *MIGRATIONS])
            raise MigrationError(f"apiVersion {version!r} is not one this hpcconf knows ({known})")
        to_version, step = MIGRATIONS[version]
        step(data)
        data["apiVersion"] = to_version
        steps.append(f"{version} -> {to_version}")
        version = to_version
    if not steps:
        return text, steps
    out = io.StringIO()
    yaml.dump(data, out)
    return out.getvalue(), steps


def migrate_command(
    specs: List[Path] = typer.Argument(..., metavar="SPEC", help="Spec files to convert to the current apiVersion."),
    write: bool = typer.Option(False, "--write", "-w", help="Rewrite the files in place (comments are kept)."),
) -> None:
    """Convert specs to the current spec format version (hpcconf/v1 is the only one so far)."""
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
            typer.echo(f"{spec}: no migration needed: {_api_version()} is the only version")
        elif write:
            spec.write_text(new_text, encoding="utf-8")
            typer.echo(f"{spec}: migrated ({', '.join(steps)})")
        else:
            typer.echo(new_text, nl=False)
    raise typer.Exit(status)
