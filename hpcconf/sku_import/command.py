"""What ``hpcconf sku collect-script`` and ``hpcconf sku import`` do (their options: :mod:`hpcconf.commands.sku`)."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Optional

import typer

from ..diagnostics import HpcconfError
from ..exit_codes import EXIT_INVALID, EXIT_OK

if TYPE_CHECKING:
    from ..diagnostics import Diagnostic

PROVIDERS = ("azure", "crusoe", "other")


def collect_script_text() -> str:
    return (Path(__file__).resolve().parent / "collect.sh").read_text(encoding="utf-8")


def collect_script(output: Optional[Path]) -> int:
    text = collect_script_text()
    if output is None or str(output) == "-":
        typer.echo(text, nl=False)
    else:
        output.write_text(text, encoding="utf-8")
        output.chmod(0o755)
    return EXIT_OK


def target_and_name(output: Optional[Path], name: Optional[str]) -> tuple[Optional[Path], Optional[str]]:
    """Where to write and the SKU name: -o FILE names the SKU after the file unless --name says otherwise;
    -o DIR (existing, or ending in /) writes DIR/<name>.yaml."""
    if output is None or str(output) == "-":
        return None, name
    if output.is_dir() or str(output).endswith("/"):
        return output, name
    return output, name or output.stem


def catalog_entry_replaced(name: str, path: str, text: str) -> Diagnostic | None:
    """HPC333 (a warning) when ``name`` is also a SKU of hpcconf's own catalog: a --sku-dir (or sku_dirs)
    holding the imported file replaces that entry, for every spec and command that reads the directory."""
    from ..catalog import Catalog
    from ..diagnostics import Diagnostic, Severity

    if name not in Catalog.load().names():  # Catalog.load replaces by exact name
        return None
    return Diagnostic(
        code="HPC333", name="sku-import-replaces-catalog", severity=Severity.WARNING,
        message=f"{name!r} is also a SKU of hpcconf's catalog: wherever this file's directory is a "
                f"--sku-dir or sku_dirs entry, it replaces the catalog's definition (its busbw floors, NCCL "
                f"topology and image settings included)",
        hint="Import under another name (--name lab-...) to keep both, or keep the replacement on purpose "
             "(docs/skus.md, 'Overriding a catalog SKU').",
    ).at(path, _name_line(text), 1)


def _name_line(text: str) -> int | None:
    """The line of the file's top-level ``name:`` key (where the warning points)."""
    return next((i for i, line in enumerate(text.splitlines(), 1) if line.startswith("name:")), None)


def _warn_if_replacing(name: str, path: str, text: str) -> None:
    replaced = catalog_entry_replaced(name, path, text)
    if replaced is not None:
        from ..diagnostic_text import render_text

        typer.echo(render_text(replaced), err=True)


def run_import(directory: Path, output: Optional[Path], name: Optional[str], provider: Optional[str],
               family: Optional[str], force: bool) -> int:
    from .importer import import_sku

    target, sku_name = target_and_name(output, name)
    text, sku = import_sku(directory, name=sku_name, provider=provider, family=family)
    if target is None:
        _warn_if_replacing(sku.name, "-", text)
        typer.echo(text, nl=False)
        return EXIT_OK
    path = target / f"{sku.name}.yaml" if target.is_dir() or str(target).endswith("/") else target
    if (path.exists() or path.is_symlink()) and not force:
        typer.echo(f"hpcconf: error: {path} exists; pass --force to overwrite it", err=True)
        return EXIT_INVALID
    _check_as_sku_dir_reads_it(path, text)  # before anything is written: a failure leaves nothing behind
    path.parent.mkdir(parents=True, exist_ok=True)
    _write_new(path, text)
    _warn_if_replacing(sku.name, str(path), text)
    typer.echo(f"wrote {path}: {sku.gpu.count} x {sku.gpu.model}, "
               f"{sku.infiniband.count if sku.infiniband else 0} InfiniBand ports; use it with --sku-dir {path.parent}")
    return EXIT_OK


def _check_as_sku_dir_reads_it(path: Path, text: str) -> None:
    """Load the text under its final file name, in a scratch directory: what --sku-dir will read (the file
    name must match the SKU name), checked before the real file exists."""
    import tempfile

    from ..catalog import load_sku_file

    with tempfile.TemporaryDirectory(prefix="hpcconf-sku-") as scratch:
        trial = Path(scratch) / path.name
        trial.write_text(text, encoding="utf-8")
        try:
            load_sku_file(trial)
        except HpcconfError as exc:  # name the file the user will have, not the scratch copy
            import dataclasses

            raise HpcconfError([dataclasses.replace(d, file=str(path)) for d in exc.diagnostics]) from None


def _write_new(path: Path, text: str) -> None:
    """Write through a fresh temporary file (O_EXCL, O_NOFOLLOW) renamed over ``path``: a link planted at
    ``path`` is replaced, never written through, and an interrupted write leaves no partial file."""
    import os
    import tempfile

    fd, temporary = tempfile.mkstemp(prefix=f".{path.name}.", dir=path.parent)
    try:
        with os.fdopen(fd, "w", encoding="utf-8") as handle:
            handle.write(text)
        os.chmod(temporary, 0o644)
        os.replace(temporary, path)
    except BaseException:
        os.unlink(temporary)
        raise


def run_import_command(directory: Path, output: Optional[Path], name: Optional[str], provider: Optional[str],
                       family: Optional[str], force: bool) -> int:
    """`hpcconf sku import`: the exit status; a bad --provider or an unreadable collection is reported here."""
    from ..exit_codes import fail

    if provider is not None and provider not in PROVIDERS:
        typer.echo(f"hpcconf: error: --provider {provider!r} is not one of {', '.join(PROVIDERS)}", err=True)
        return EXIT_INVALID
    try:
        return run_import(directory, output, name, provider, family, force)
    except HpcconfError as exc:
        raise fail(exc) from None
