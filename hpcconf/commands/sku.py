"""`hpcconf sku collect-script|import`: the group and its options; the work is :mod:`hpcconf.sku_import.command`,
imported when a subcommand runs."""

from __future__ import annotations

from pathlib import Path
from typing import Optional

import typer

sku_app = typer.Typer(no_args_is_help=True, rich_markup_mode=None,
                      help="Describe a node you own as a SKU file: collect its facts there, import them here.")


@sku_app.command("collect-script")
def collect_script_command(
    output: Optional[Path] = typer.Option(None, "--output", "-o", "--out", metavar="FILE",
                                          help="Write the script to FILE (made executable) instead of stdout."),
) -> None:
    """Print the bash script that records a node's hardware facts (run it on the node: bash collect.sh DIR)."""
    from ..sku_import.command import collect_script

    raise typer.Exit(collect_script(output))


@sku_app.command("import")
def import_command(
    directory: Path = typer.Argument(..., metavar="DIR", help="The directory the collection script wrote."),
    output: Optional[Path] = typer.Option(None, "--output", "-o", "--out", metavar="FILE|DIR",
                                          help="Write the SKU file here ('-': stdout); a directory gets <name>.yaml."),
    name: Optional[str] = typer.Option(None, "--name", metavar="NAME", help="SKU name (default: the Azure VM size the node reports, else the -o file's name). "
                                       "A name hpcconf's catalog already has (the node's own Azure size, by default) "
                                       "replaces that catalog entry wherever the file's directory is a --sku-dir: "
                                       "warned as HPC333."),
    provider: Optional[str] = typer.Option(None, "--provider", metavar="PROVIDER", help="azure, crusoe or other (default: azure when the node "
                                           "answered Azure's instance metadata, else other)."),
    family: Optional[str] = typer.Option(None, "--family", metavar="FAMILY", help="The size's series name (default: 'imported: N x MODEL')."),
    force: bool = typer.Option(False, "--force", help="Overwrite an existing SKU file."),
) -> None:
    """Write a SKU file from the facts collected on one node (GPUs, NVLink, InfiniBand, NUMA, PCI bus ids)."""
    from ..sku_import.command import run_import_command

    raise typer.Exit(run_import_command(directory, output, name, provider, family, force))
