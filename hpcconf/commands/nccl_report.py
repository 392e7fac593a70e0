"""`hpcconf nccl-report`: its options; the work is :func:`hpcconf.nccl_report.command.run_nccl_report`."""

from __future__ import annotations

from pathlib import Path
from typing import Optional

import typer

from .. import completion
from ..nccl_report.command import FORMATS
from ..parsers.nccl_collectives import COLLECTIVES
from ..sku_dirs import sku_dir_option


def nccl_report_command(
    logs: list[Path] = typer.Argument(..., metavar="LOG", help="nccl-tests output files (Slurm, kubectl logs, mpirun)."),
    sku: Optional[str] = typer.Option(None, "--sku", metavar="SKU", help="SKU the run was on (Standard_ND96isr_H200_v5, ND96isr_H200_v5).",
                               autocompletion=completion.sku_names),
    nodes: Optional[int] = typer.Option(None, "--nodes", min=1, metavar="N", help="Node count (default: the hosts the log names)."),
    spec: Optional[Path] = typer.Option(None, "--spec", metavar="SPEC", help="Take SKU and node count from this spec's NCCL test pool."),
    collective: Optional[str] = typer.Option(None, "--collective", metavar="NAME", help="Collective, where neither the log nor its "
                                             "file name names it: " + ", ".join(COLLECTIVES)),
    output_format: str = typer.Option("text", "--format", metavar="FORMAT", help="text, json or markdown.",
                                      autocompletion=completion.choices(*FORMATS)),
    plot_file: Optional[Path] = typer.Option(None, "--plot", metavar="FILE.png|svg",
                                             help="Draw busbw vs message size (needs hpcconf[plot])."),
    baseline: Optional[Path] = typer.Option(None, "--baseline", metavar="LOG_OR_JSON",
                                            help="A recorded good run of the same machine and shape (an nccl-tests log, "
                                                 "or nccl-report --format json): exit 1 below --tolerance of it at any size >= 64 MiB."),
    tolerance: float = typer.Option(0.9, "--tolerance", metavar="RATIO",
                                    help="Lowest accepted ratio to the baseline's busbw at each size "
                                         "(default 0.9, the tolerance of nccl-tests' NCCL_TESTS_MIN_BW check)."),
    sku_dir: list[Path] = sku_dir_option(),
) -> None:
    """Judge nccl-tests logs against the SKU's bus-bandwidth floor, published or derived (exit 1 below a decisive
    floor; a derived one beyond the shapes it was measured on is reference only)."""
    from ..nccl_report.command import run_nccl_report

    run_nccl_report(logs=logs, sku=sku, nodes=nodes, spec=spec, collective=collective, output_format=output_format,
                    plot_file=plot_file, baseline=baseline, tolerance=tolerance, sku_dir=sku_dir)
