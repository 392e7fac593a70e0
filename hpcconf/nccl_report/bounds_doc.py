"""The floors-and-limits table of docs/nccl-report.md, generated from the data (``python -m hpcconf.nccl_report.bounds_doc``).

Every catalog SKU, node counts 1, 2, 4, 8, 16 and 18, each collective of the matrix: the floor (published or
derived, marked decisive ``*`` or reference only ``~``) and the physical limit, in GB/s of busbw.
"""

from __future__ import annotations

import sys
from pathlib import Path

from ..catalog import Catalog, Sku
from ..knowledge.nccl_bounds import MATRIX, floor, limit

DOC = Path(__file__).resolve().parents[2] / "docs" / "nccl-report.md"
BEGIN, END = "<!-- bounds-table: begin (generated) -->", "<!-- bounds-table: end -->"
NODES = (1, 2, 4, 8, 16, 18)  # 8: ND H100 v5's published multi-node line; 18: a full NVL72 rack


def _cell(sku: Sku, collective: str, nodes: int) -> str:
    f = floor(sku, collective, nodes, nodes * sku.gpu.count)
    lim = limit(sku, collective, nodes)
    mark = "" if f is None or f.origin == "published" else ("*" if f.decisive else "~")
    floor_text = "-" if f is None else f"{f.gbps:g}{mark}"
    return f"{floor_text} / {'-' if lim is None else f'{lim.gbps:g}'}"


def table() -> str:
    catalog = Catalog.load()
    header = "| SKU | nodes | " + " | ".join(MATRIX) + " |"
    lines = [header, "|" + "---|" * (len(MATRIX) + 2)]
    for name in sorted(catalog.names()):
        sku = catalog.get(name)
        for nodes in NODES:
            lines.append(f"| {name} | {nodes} | " + " | ".join(_cell(sku, c, nodes) for c in MATRIX) + " |")
    return "\n".join(lines) + "\n"


def rendered(text: str) -> str:
    start, end = text.index(BEGIN) + len(BEGIN), text.index(END)
    return text[:start] + "\n" + table() + text[end:]


def main() -> int:
    text = DOC.read_text(encoding="utf-8")
    new = rendered(text)
    if "--check" in sys.argv[1:]:
        return 0 if new == text else 1
    DOC.write_text(new, encoding="utf-8")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
