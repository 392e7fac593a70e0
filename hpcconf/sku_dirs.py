"""``--sku-dir``: the one option definition every command that reads SKUs shares, and its one check.

``init``, ``build``, ``lint``, ``explain-diff``, ``skus`` and ``nccl-report`` all take ``--sku-dir DIR``
(repeatable): each directory's ``<sku>.yaml`` files add SKUs to the packaged catalog or replace one by
name (docs/skus.md). A directory that is missing, or a SKU file in it that does not validate, is the
same error whichever command reads it: ``HPC101`` / ``HPC100`` with ``file:line:col``
(:meth:`hpcconf.catalog.Catalog.load` reports both), exit code 2. The settings file's ``sku-dir`` key
(``[tool.hpcconf]`` / ``.hpcconf.toml``) names directories the same way, relative to that file; the
command line's come after it, so they override a SKU of the same name.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any, Sequence

SKU_DIR_HELP = "Extra SKU directory: its <sku>.yaml files add to or override the catalog (repeatable; docs/skus.md)."


def sku_dir_option(extra_help: str = "") -> Any:
    """A fresh ``--sku-dir`` typer option (typer keeps per-parameter state, so each command gets its own)."""
    import typer  # here: hpcconf.catalog imports this module and must not pay for typer

    return typer.Option([], "--sku-dir", metavar="DIR", help=SKU_DIR_HELP + (f" {extra_help}" if extra_help else ""))


def checked_sku_dirs(directories: Sequence[Path]) -> list[Path]:
    """``directories`` when each is a directory; else HpcconfError with one HPC101 per bad one."""
    from .catalog_errors import sku_dir_problem
    from .diagnostics import HpcconfError

    problems = [problem for problem in map(sku_dir_problem, directories) if problem is not None]
    if problems:
        raise HpcconfError(problems)
    return [Path(path) for path in directories]


def with_settings_dirs(directories: Sequence[Path], config_file: Path | None = None) -> list[Path]:
    """The settings file's ``sku-dir`` (the nearest ``[tool.hpcconf]`` / ``.hpcconf.toml``, or
    ``--config``), then ``directories`` (``--sku-dir``): what a command that reads SKUs searches.
    A bad settings file ends the command as ``build`` and ``lint`` end it: one line with
    ``file:line:col`` on stderr, exit code 2."""
    import typer

    from .exit_codes import EXIT_INVALID
    from .settings.config import ConfigError, load_settings

    try:
        return load_settings(config_file=config_file, sku_dirs=directories).lint.sku_dirs
    except ConfigError as error:
        typer.echo(f"hpcconf: error: {error}", err=True)
        raise typer.Exit(EXIT_INVALID) from None
