"""`hpcconf skus [SKU]`: its options; the work is :func:`hpcconf.catalog_listing.run_skus`."""

from __future__ import annotations

from pathlib import Path
from typing import List, Optional

import typer

from .. import completion
from ..sku_dirs import sku_dir_option


def skus_command(
    name: Optional[str] = typer.Argument(None, metavar="SKU", help="Show one SKU in full (e.g. Standard_ND96amsr_A100_v4).",
                                         autocompletion=completion.sku_names),
    sku_dir: List[Path] = sku_dir_option(),
    output_format: str = typer.Option("text", "--format", "-f", metavar="FORMAT", help="text or json.",
                                      autocompletion=completion.choices("text", "json")),
    as_json: bool = typer.Option(False, "--json", hidden=True, help="Deprecated: --format json."),
) -> None:
    """List the SKU catalog, or show one SKU."""
    from ..catalog_listing import run_skus

    run_skus(name=name, sku_dir=sku_dir, output_format=output_format, as_json=as_json)
