"""`hpcconf lint`: its options; the work is :func:`hpcconf.lint.command.run_lint`."""

from __future__ import annotations

from pathlib import Path
from typing import List, Optional

import typer

from .. import completion
from ..artifacts import Kind
from ..sku_dirs import sku_dir_option
from ..term import COLOR_CHOICES


def lint_command(
    paths: List[str] = typer.Argument(None, metavar="PATH", help="Files or directories to lint (default: current directory)."),
    spec: Optional[str] = typer.Option(None, "--spec", metavar="SPEC", help="An hpcconf spec: lint what it compiles to."),
    sku: Optional[str] = typer.Option(None, "--sku", metavar="SKU", help="VM size the files are meant for, e.g. NC48ads_A100_v4.",
                               autocompletion=completion.sku_names),
    nccl_version: Optional[str] = typer.Option(None, "--nccl-version", metavar="VERSION", help="NCCL version (default: newest known)."),
    chart: Optional[List[str]] = typer.Option(None, "--chart", metavar="NAME=VERSION", help="Chart version, NAME=VERSION (repeatable)."),
    kubernetes_version: Optional[str] = typer.Option(None, "--kubernetes-version", metavar="VERSION",
                                                     help="Kubernetes version manifests are validated for (default: the spec's, else the newest schema)."),
    defaulted: bool = typer.Option(False, "--defaulted",
                                   help="Print the Kubernetes objects of the file as the API server would store them "
                                        "(defaults applied), like `kubectl apply --dry-run=server -o yaml`."),
    kind: Optional[str] = typer.Option(None, "--kind", metavar="KIND", help=f"Force the file kind: {', '.join(Kind.all())}.",
                                autocompletion=completion.choices(*Kind.all())),
    fmt: str = typer.Option("text", "--format", metavar="FORMAT", help="Output: text, json, sarif or github.",
                             autocompletion=completion.choices_of("hpcconf.lint.formats", "FORMATS")),
    output: Optional[Path] = typer.Option(None, "--output", "-o", "--out", metavar="FILE",
                                          help="Write the report to this file instead of stdout ('-': stdout)."),
    fail_level: Optional[str] = typer.Option(None, "--fail-level", metavar="LEVEL", help="error (default), warning or info.",
                                              autocompletion=completion.choices("error", "warning", "info")),
    select: Optional[List[str]] = typer.Option(None, "--select", metavar="CODES", help="Only these codes/prefixes/names (comma list).",
                                                autocompletion=completion.rule_codes),
    ignore: Optional[List[str]] = typer.Option(None, "--ignore", metavar="CODES", help="Skip these codes/prefixes/names (comma list).",
                                                autocompletion=completion.rule_codes),
    no_inline_ignores: bool = typer.Option(False, "--no-inline-ignores", help="Disregard `# hpcconf: ignore[...]`."),
    config_file: Optional[Path] = typer.Option(None, "--config", metavar="FILE", help="Config file (.hpcconf.toml or pyproject.toml)."),
    sku_dir: List[Path] = sku_dir_option(),
    verbose: bool = typer.Option(False, "--verbose", "-v",
                                 help="Say on stderr which files were passed over and why (also HPCCONF_DEBUG=1)."),
    provider: Optional[str] = typer.Option(None, "--provider", metavar="PROVIDER",
                                           help="Platform the files target: azure, coreweave, aws, gcp, crusoe, oci, "
                                                "nebius, on-prem (default: told by each file, else unknown)."),
    color: str = typer.Option("auto", "--color", metavar="WHEN", help="Colour the text report: auto (on a terminal, "
                              "unless NO_COLOR is set; FORCE_COLOR forces it), always or never.",
                              autocompletion=completion.choices(*COLOR_CHOICES)),
    jobs: Optional[int] = typer.Option(None, "--jobs", "-j", metavar="N",
                                       help="Lint the deployments of a tree in N processes (default: the CPUs "
                                            "available); the report is the same as with --jobs 1."),
) -> None:
    """Lint cluster artifacts: NCCL conf/env/XML, Dockerfiles, Kubernetes, Helm values, AzHOP, specs.

    --sku, --nccl-version and --chart apply to every file linted and win over the settings'
    per-path-context tables; a spec's own pools and pinned versions decide for what it compiles to."""
    from ..lint.command import run_lint

    run_lint(paths=paths, spec=spec, sku=sku, nccl_version=nccl_version, chart=chart,
             kubernetes_version=kubernetes_version, defaulted=defaulted, kind=kind, fmt=fmt, output=output,
             fail_level=fail_level, select=select, ignore=ignore, no_inline_ignores=no_inline_ignores,
             config_file=config_file, sku_dir=sku_dir, verbose=verbose, provider=provider, color=color, jobs=jobs)
