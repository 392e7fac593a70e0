"""The floors-and-limits table of docs/nccl-report.md, generated from the data (``python -m hpcconf.nccl_report.bounds_doc``).

Every catalog SKU, node counts 1, 2, 4, 8, 16, 18 and 36, each collective of the matrix: the floor (published or
derived, marked decisive ``*`` or reference only ``~``) and the physical limit, in GB/s of busbw.
"""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Optional

from ..catalog import Catalog, Sku
from ..knowledge.nccl_bounds import MATRIX, NO_BOUND_REASONS, RETIRED_UNLINKED, floor, limit, no_bound_reason

DOC = Path(__file__).resolve().parents[2] / "docs" / "nccl-report.md"
BEGIN, END = "<!-- bounds-table: begin (generated) -->", "<!-- bounds-table: end -->"
NODES = (1, 2, 4, 8, 16, 18, 36)  # 8: ND H100 v5's published multi-node line; 18: a full NVL72 rack; 36: two racks


def _cell(sku: Sku, collective: str, nodes: int) -> str:
    f = floor(sku, collective, nodes, nodes * sku.gpu.count)
    lim = limit(sku, collective, nodes)
    note = f"n/a ({NOTE[no_bound_reason(sku, nodes, collective)]})"
    mark = "" if f is None or f.origin == "published" else ("*" if f.decisive else "~")
    if f is None and lim is None:
        return note
    floor_text = note if f is None else f"{f.gbps:g}{mark}"
    return f"{floor_text} / {note if lim is None else f'{lim.gbps:g}'}"


NOTE = {reason: letter for reason, letter in zip(NO_BOUND_REASONS, "abcde")}


def table() -> str:
    catalog = Catalog.load()
    header = "| SKU | nodes | " + " | ".join(MATRIX) + " |"
    lines = [header, "|" + "---|" * (len(MATRIX) + 2)]
    for name in sorted(catalog.names()):
        sku = catalog.get(name)
        for nodes in NODES:
            lines.append(f"| {name} | {nodes} | " + " | ".join(_cell(sku, c, nodes) for c in MATRIX) + " |")
    lines.append("")
    retired = [catalog.get(name) for name in sorted(catalog.names())]
    retired = [s for s in retired if s.lifecycle is not None and s.lifecycle.status == "retired"]
    for reason, letter in NOTE.items():
        detail = "".join(f" {s.name}: retired {s.lifecycle.date}, {s.lifecycle.source}." for s in retired
                         if s.lifecycle is not None) if reason == RETIRED_UNLINKED else ""
        lines.append(f"- n/a ({letter}): {reason}.{detail}")
    return "\n".join(lines) + "\n"


def rendered(text: str) -> str:
    start, end = text.index(BEGIN) + len(BEGIN), text.index(END)
    return text[:start] + "\n" + table() + text[end:]


def main(argv: Optional[list[str]] = None) -> int:
    """Rewrite the table in docs/nccl-report.md; ``--check``: exit 1 (writing nothing) where it differs."""
    text = DOC.read_text(encoding="utf-8")
    new = rendered(text)
    if "--check" in (sys.argv[1:] if argv is None else argv):
        if new != text:
            print(f"{DOC}: the floors-and-limits table is stale; run: python -m hpcconf.nccl_report.bounds_doc",
                  file=sys.stderr)
        return 0 if new == text else 1
    DOC.write_text(new, encoding="utf-8")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
