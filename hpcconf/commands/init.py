"""`hpcconf init`: its options; the work is :func:`hpcconf.init_spec.run_init`."""

from __future__ import annotations

from pathlib import Path
from typing import List, Optional

import typer

from .. import completion
from ..init_spec import PLATFORMS, run_init
from ..sku_dirs import sku_dir_option


def init_command(
    sku: str = typer.Option(..., "--sku", metavar="SKU", help="VM size from the catalog, e.g. Standard_ND96isr_H100_v5 (`hpcconf skus`).",
                               autocompletion=completion.sku_names),
    nodes: int = typer.Option(2, "--nodes", "-n", min=1, max=1000, metavar="N", help="Number of GPU nodes."),
    platform: List[str] = typer.Option([], "--platform", "-p", metavar="PLATFORM", help="aks, azhop, slurm or ccws; repeat or comma-separate for several (default aks).",
                                       autocompletion=completion.choices(*PLATFORMS, comma_list=True)),
    name: Optional[str] = typer.Option(None, "--name", metavar="NAME", help="Cluster name (default: from the SKU and platform)."),
    location: Optional[str] = typer.Option(None, "--location", metavar="REGION", help="Azure region for an Azure size (default southcentralus); informational for a Crusoe size (default useast1) or your own nodes (provider other, default onprem)."),
    registry: Optional[str] = typer.Option(None, "--registry", metavar="HOST", help="Container registry for the AKS test image (default <name>acr.azurecr.io)."),
    output: Optional[Path] = typer.Option(None, "--output", "-o", "--out", metavar="FILE", help="Spec file to write (default <name>.yaml; '-' prints it)."),
    force: bool = typer.Option(False, "--force", help="Overwrite an existing file."),
    sku_dir: List[Path] = sku_dir_option("The spec records it in sku_dirs."),
) -> None:
    """Scaffold a commented spec for a SKU, node count and platform(s); it builds and lints clean as is."""
    run_init(sku=sku, nodes=nodes, platform=platform, name=name, location=location, registry=registry, output=output,
             force=force, sku_dir=sku_dir)
