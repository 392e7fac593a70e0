"""Text, Markdown and JSON views of nccl-report verdicts (deterministic: input order, fixed rounding)."""

from __future__ import annotations

import json
from typing import Any, Optional

from .verdict import Verdict, human_size

COLUMNS = ("log", "collective", "type", "ranks", "nodes", "sizes", "busbw@max", "peak", "floor", "limit", "verdict")


def _fmt(value: Optional[float]) -> str:
    return "-" if value is None else f"{value:.2f}"


def summary_row(v: Verdict) -> list[str]:
    rows = v.rows
    largest = max(rows, key=lambda r: r.size)
    peak = max(max(m.busbw for m in (r.out_of_place, r.in_place) if m is not None) for r in rows)
    limit = v.ceiling.gbps if v.ceiling else None
    return [
        f"{v.log}:{v.run.line}", v.run.collective or "?", v.dtype, str(v.run.ranks or "?"), str(v.nodes or "?"),
        f"{human_size(rows[0].size)}-{human_size(largest.size)}", _fmt(largest.busbw), _fmt(peak),
        (_fmt(v.floor.gbps) + (f" ({v.floor_kind})" if v.derived else "")) if v.floor else "no floor", _fmt(limit), v.status,
    ]


def _table(rows: list[list[str]]) -> list[str]:
    widths = [max(len(row[i]) for row in rows) for i in range(len(COLUMNS))]
    return ["  ".join(cell.ljust(w) for cell, w in zip(row, widths)).rstrip() for row in rows]


def _sources(verdicts: list[Verdict]) -> list[str]:
    seen: dict[str, None] = {}
    for v in verdicts:
        if v.floor:
            kind = "floor" if not v.derived else ("derived floor" if v.decisive else "reference-only derived floor")
            seen[f"{kind} {v.floor.gbps:g} GB/s ({v.floor.sku}, {v.floor.nodes} node(s), {v.floor.message_size}): "
                 f"{v.floor.citation()}"] = None
        if v.reference:
            seen[f"reference {v.reference.gbps:g} GB/s at {v.reference.message_size} ({v.reference.sku}, "
                 f"{v.reference.nodes} node(s)): {v.reference.citation()}"] = None
        for limit in v.limits:
            seen[f"limit {limit.gbps:g} GB/s, {limit.label}: {limit.source}"] = None
    return list(seen)


def render_text(verdicts: list[Verdict]) -> str:
    lines = _table([list(COLUMNS)] + [summary_row(v) for v in verdicts])
    lines.append("")
    lines += [f"{v.log}:{v.run.line} {v.run.collective or '?'} {v.dtype}: {v.message}" for v in verdicts]
    sources = _sources(verdicts)
    if sources:
        lines += ["", "Sources:"] + [f"  {s}" for s in sources]
    return "\n".join(lines) + "\n"


def render_markdown(verdicts: list[Verdict]) -> str:
    def md(cells: list[str]) -> str:
        return "| " + " | ".join(cell.replace("|", "\\|") for cell in cells) + " |"

    lines = [md(list(COLUMNS)), md(["---"] * len(COLUMNS))] + [md(summary_row(v)) for v in verdicts]
    lines.append("")
    lines += [f"- `{v.log}:{v.run.line}` {v.run.collective or '?'} {v.dtype}: {v.message}" for v in verdicts]
    sources = _sources(verdicts)
    if sources:
        lines += ["", "Sources:", ""] + [f"- {s}" for s in sources]
    return "\n".join(lines) + "\n"


def verdict_json(v: Verdict) -> dict[str, Any]:
    run = v.run
    return {
        "log": v.log, "line": run.line, "collective": run.collective, "dtype": v.dtype, "ranks": run.ranks,
        "nodes": v.nodes, "label": run.label, "hosts": run.hosts, "nccl_version": run.nccl_version,
        "status": v.status, "message": v.message, "measured_gbps": v.measured, "at_bytes": v.at_size,
        "floor": None if v.floor is None else {"gbps": v.floor.gbps, "message_size": v.floor.message_size,
                                                "origin": "derived" if v.derived else "published",
                                                "decisive": v.decisive,
                                                "source": v.floor.citation()},
        "gap_gbps": v.gap_gbps, "gap_percent": v.gap_percent,
        "reference": None if v.reference is None else {"gbps": v.reference.gbps, "message_size": v.reference.message_size,
                                                        "source": v.reference.citation()},
        "limit_gbps": v.ceiling.gbps if v.ceiling else None,
        "limits": [{"label": limit.label, "gbps": limit.gbps, "source": limit.source, "ceiling": limit.ceiling}
                   for limit in v.limits],
        "rows": [{"bytes": r.size, "count": r.count, "redop": r.redop, "root": r.root, "line": r.line,
                  "out_of_place": None if r.out_of_place is None else vars(r.out_of_place),
                  "in_place": None if r.in_place is None else vars(r.in_place)} for r in v.rows],
    }


def render_json(verdicts: list[Verdict]) -> str:
    failed = any(v.failed for v in verdicts)
    # allow_nan=False: a non-finite number is a bug to report, never `Infinity` (invalid JSON) in the output
    return json.dumps({"passed": not failed, "verdicts": [verdict_json(v) for v in verdicts]}, indent=2,
                      allow_nan=False) + "\n"


RENDERERS = {"text": render_text, "markdown": render_markdown, "json": render_json}
