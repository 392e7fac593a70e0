"""``hpcconf nccl-report LOG...``: nccl-tests logs -> table and verdict against the SKU's sourced floor (the
options: :mod:`hpcconf.commands.nccl_report`).

Exit status: 0 when nothing failed (pass, "no floor", inconclusive, "below reference": under a derived floor
beyond the shapes it was measured on), 1 when a run is below a decisive floor or
returned wrong data, or nccl-tests reported an error on its run (an error finding, hpcconf.nccl_report.findings:
wrong data, a failed check, a test that stopped), 2 for bad input (no nccl-tests table in a
log, unknown SKU, bad option).
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Any, Optional

import typer

from ..exit_codes import EXIT_FINDINGS, EXIT_INVALID, EXIT_OK
from ..parsers.nccl_collectives import COLLECTIVES
from ..sku_dirs import with_settings_dirs

if TYPE_CHECKING:
    from ..catalog import Sku
    from .findings import Finding
    from .verdict import Target, Verdict

EXIT_BELOW = EXIT_FINDINGS  # a run below its floor, wrong data, or an nccl-tests error
FORMATS = ("text", "json", "markdown")


def _error(message: str) -> typer.Exit:
    typer.echo(f"hpcconf nccl-report: error: {message}", err=True)
    return typer.Exit(EXIT_INVALID)


def target_from_spec(spec: Path, sku_dirs: list[Path]) -> Target:
    """The SKU of the spec's NCCL test pool and the node count its generated test runs on: the AKS job's
    workers (the pool's nodes), the Slurm job's ``--nodes`` (``slurm.test_nodes``; one node without
    InfiniBand). Where the spec's jobs run different counts the log's hosts decide."""
    from ..pipeline import compile_spec
    from .verdict import Target

    build = compile_spec(spec, sku_dirs)
    cluster = build.cluster
    pool = cluster.test_pool
    if pool is None:
        raise _error(f"{spec}: the spec has no GPU pool to test")
    counts = set()
    if cluster.aks is not None:
        counts.add(pool.count)
    if cluster.slurm is not None:
        counts.update(p.nodes for p in cluster.slurm.partitions if p.pool == pool.name)
    return Target(build.pool_skus[pool.name], counts.pop() if len(counts) == 1 else None if counts else pool.count)


def _sku(name: str, sku_dirs: list[Path]) -> "Sku":
    from ..catalog import Catalog, UnknownSku

    catalog = Catalog.load(sku_dirs)
    try:
        return catalog.get(name)
    except UnknownSku as exc:
        hint = f"; did you mean {', '.join(exc.suggestions)}?" if getattr(exc, "suggestions", None) else ""
        raise _error(f"unknown SKU {name!r}{hint} (hpcconf skus lists them)") from exc


def report(logs: list[Path], target: "Target", collective: Optional[str]) -> tuple[list["Verdict"], list["Finding"]]:
    from ..knowledge.nccl_floors import load_floors
    from ..parsers.nccl_tests_log import collective_from_name, parse_text
    from ..safe_io import read_bytes
    from .findings import log_findings
    from .verdict import judge_runs

    table = load_floors()
    verdicts: list[Verdict] = []
    findings: list[Finding] = []
    for path in logs:
        # the safe reader: a regular file under the log limit; stray bytes in a log are kept as U+FFFD
        text = read_bytes(path, "log").decode("utf-8", errors="replace")
        parsed = parse_text(text, str(path), collective or collective_from_name(path.name))
        if not parsed.runs:
            stopped = [f.render() for f in log_findings(parsed) if f.severity == "error"]
            raise _error(f"{path}: no nccl-tests result table found (expected rows like "
                         "'8388608  2097152  float  sum  -1  ...' under a '#  size  count  type' header)"
                         + "".join(f"\n  {line}" for line in stopped))
        verdicts += judge_runs(str(path), parsed.runs, target, table)
        findings += log_findings(parsed)
    return verdicts, findings


def run_nccl_report(*, logs: list[Path], sku: Optional[str], nodes: Optional[int], spec: Optional[Path],
                    collective: Optional[str], output_format: str, plot_file: Optional[Path],
                    baseline: Optional[Path], tolerance: float, sku_dir: list[Path]) -> None:
    """`hpcconf nccl-report`: the report on stdout; exits 0, 1 (below a floor) or 2."""
    from .render import RENDERERS
    from .verdict import Target

    if output_format not in FORMATS:
        raise _error(f"--format must be one of {', '.join(FORMATS)}, not {output_format!r}")
    if collective is not None and collective not in COLLECTIVES:
        raise _error(f"--collective must be one of {', '.join(COLLECTIVES)}, not {collective!r}")
    if spec is not None and sku is not None:
        raise _error("give --spec or --sku, not both")
    if not 0 < tolerance <= 1.5:
        raise _error(f"--tolerance must be a ratio above 0 and at most 1.5, not {tolerance:g}")
    from ..diagnostic_text import render_all
    from ..diagnostics import HpcconfError

    sku_dir = with_settings_dirs(sku_dir)
    try:
        target = target_from_spec(spec, sku_dir) if spec else Target(_sku(sku, sku_dir) if sku else None, None)
    except HpcconfError as exc:  # a bad --sku-dir or SKU file, or a spec that does not compile: located
        typer.echo(render_all(exc.diagnostics), err=True)
        raise typer.Exit(EXIT_INVALID) from None
    if nodes is not None:
        target = Target(target.sku, nodes)
    if plot_file is not None:
        from .plot import PlotUnavailable, check_plot

        try:  # before the report is printed: a missing extra is bad input, not an afterthought
            check_plot(plot_file)
        except PlotUnavailable as exc:
            raise _error(str(exc)) from exc
    try:
        verdicts, findings = report(logs, target, collective)
    except HpcconfError as exc:  # a log the safe reader refused (a fifo, a link out, too large): located
        typer.echo(render_all(exc.diagnostics), err=True)
        raise typer.Exit(EXIT_INVALID) from None
    compared = _against_baseline(verdicts, baseline, tolerance) if baseline is not None else []
    text = _with_findings(RENDERERS[output_format](verdicts), findings, output_format)
    typer.echo(_with_baseline(text, compared, output_format), nl=False)
    if plot_file is not None:
        from .plot import PlotUnavailable, plot

        try:
            plot(verdicts, plot_file, compared)
        except PlotUnavailable as exc:
            raise _error(str(exc)) from exc
    failed = any(v.failed for v in verdicts) or any(b.failed for b in compared) or \
        any(f.severity == "error" for f in findings)
    raise typer.Exit(EXIT_BELOW if failed else EXIT_OK)


def _against_baseline(verdicts: list["Verdict"], path: Path, tolerance: float) -> list[Any]:
    from ..diagnostic_text import render_all
    from ..diagnostics import HpcconfError
    from ..safe_io import read_bytes
    from .baseline import BaselineError, compare, load_baseline

    try:
        series = load_baseline(path, read_bytes(path, "log").decode("utf-8", errors="replace"))
        return [compare(v.log, v.run, v.dtype, v.nodes, str(path), series, tolerance) for v in verdicts]
    except HpcconfError as exc:
        typer.echo(render_all(exc.diagnostics), err=True)
        raise typer.Exit(EXIT_INVALID) from None
    except (BaselineError, ValueError) as exc:
        raise _error(str(exc)) from None


def _with_findings(report_text: str, findings: list["Finding"], output_format: str) -> str:
    """nccl-tests' own warnings and errors after the verdicts (JSON: a ``findings`` list; an error fails)."""
    if not findings:
        return report_text
    if output_format == "json":
        import json

        data = json.loads(report_text)
        data["findings"] = [{"log": f.path, "line": f.line, "severity": f.severity, "kind": f.kind,
                             "message": f.message} for f in findings]
        data["passed"] = data["passed"] and not any(f.severity == "error" for f in findings)
        return json.dumps(data, indent=2, allow_nan=False) + "\n"
    bullet = "- " if output_format == "markdown" else ""
    return report_text + "\n".join(["", "nccl-tests reported:"] + [f"{bullet}{f.render()}" for f in findings]) + "\n"


def _with_baseline(report_text: str, compared: list[Any], output_format: str) -> str:
    if not compared:
        return report_text
    if output_format == "json":
        import json

        data = json.loads(report_text)
        data["baseline"] = [{"log": b.log, "collective": b.collective, "dtype": b.dtype, "baseline": b.baseline,
                             "status": b.status, "message": b.message, "lowest_bytes": b.lowest_size,
                             "bands": [{"band": band.name, "sizes": band.sizes, "median_ratio": band.median_ratio,
                                        "lowest_ratio": band.lowest_ratio} for band in b.bands]} for b in compared]
        data["passed"] = data["passed"] and not any(b.failed for b in compared)
        return json.dumps(data, indent=2, allow_nan=False) + "\n"
    bullet = "- " if output_format == "markdown" else ""
    lines = ["", "Against the baseline:"] + [f"{bullet}{b.log} {b.collective or '?'} {b.dtype}: {b.message}" for b in compared]
    return report_text + "\n".join(lines) + "\n"
