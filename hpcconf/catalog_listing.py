"""What `hpcconf skus [SKU]` prints: the SKU catalog (:mod:`hpcconf.catalog`) as columns or JSON, one SKU as YAML
or JSON (the options: :mod:`hpcconf.commands.skus`)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Optional, Sequence

import typer

from .diagnostics import HpcconfError
from .exit_codes import EXIT_INVALID, fail
from .sku_dirs import with_settings_dirs


def run_skus(*, name: Optional[str], sku_dir: Sequence[Path], output_format: str, as_json: bool) -> None:
    """`hpcconf skus`: a bad --format or an unknown SKU exits 2."""
    from .catalog import Catalog, UnknownSku

    if output_format not in ("text", "json"):
        typer.echo(f"hpcconf: error: --format must be text or json, not {output_format!r}", err=True)
        raise typer.Exit(EXIT_INVALID)
    if as_json:  # the option's name before --format; kept so that scripts written for it still work
        typer.echo("hpcconf: warning: --json is deprecated; use --format json", err=True)
        output_format = "json"
    as_json = output_format == "json"
    try:
        catalog = Catalog.load(extra_dirs=with_settings_dirs(sku_dir))
    except HpcconfError as exc:
        raise fail(exc) from None
    if name is None:
        rows = [catalog.get(n) for n in catalog.names()]
        if as_json:
            typer.echo(json.dumps([{"name": s.name, "gpus": s.gpu.count, "gpu": s.gpu.model,
                                    "infiniband": s.infiniband.count if s.infiniband else 0} for s in rows], indent=2))
            return
        # Plain columns, not a rich table: one line per SKU whatever the width, for grep and awk; the widths
        # fit the longest value, so a --sku-dir SKU with a long name keeps the columns aligned.
        table = [("SKU", "GPUs", "GPU model", "IB", "family")] + [
            (sku.name, str(sku.gpu.count), sku.gpu.model,
             f"{sku.infiniband.count}x{sku.infiniband.rate}" if sku.infiniband else "-", sku.family) for sku in rows]
        widths = [max(len(row[i]) for row in table) for i in range(4)]
        for name, gpus, model, ib, family in table:
            typer.echo(f"{name:{widths[0]}} {gpus:>{widths[1]}}  {model:{widths[2]}} {ib:>{widths[3]}}  {family}")
        return
    try:
        sku = catalog.get(name)
    except UnknownSku as exc:
        typer.echo(f"hpcconf: error: {exc}; `hpcconf skus` lists them all", err=True)
        raise typer.Exit(EXIT_INVALID) from None
    data = sku.model_dump(mode="json", exclude_none=True)
    if as_json:
        typer.echo(json.dumps(data, indent=2))
    else:
        from .yamlio import dump_yaml

        typer.echo(dump_yaml(data), nl=False)
