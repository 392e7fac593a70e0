"""``lscpu`` (``Key:  value`` lines) and ``lscpu -J`` (``{"lscpu": [{"field": "Key:", "data": ...}]}``).

Both give the same fields; util-linux 2.38+ nests some under ``children`` in the JSON form. The
result maps each field name without its colon ("CPU(s)", "Vendor ID", "Socket(s)") to a Fact.
"""

from __future__ import annotations

import json
import re
from typing import Any

from .node_common import RECOLLECT, Fact, malformed

_LINE = re.compile(r"^([^:]+):\s*(.*?)\s*$")


def parse_lscpu_text(text: str, path: str) -> dict[str, Fact[str]]:
    name = path.rsplit("/", 1)[-1]
    out: dict[str, Fact[str]] = {}
    for number, line in enumerate(text.splitlines(), start=1):
        if not line.strip() or line.startswith(" "):
            continue  # blank, or a wrapped continuation (some builds indent sub-sections)
        match = _LINE.match(line)
        if match is None:
            malformed(path, number, f"expected 'Field: value', got {line.strip()!r} (is this lscpu output?)", RECOLLECT)
        out.setdefault(match.group(1).strip(), Fact(match.group(2), name, number, match.group(1).strip()))
    if "Architecture" not in out:
        malformed(path, 1, "no 'Architecture:' line (is this lscpu output?)", RECOLLECT)
    return out


def parse_lscpu_json(text: str, path: str) -> dict[str, Fact[str]]:
    name = path.rsplit("/", 1)[-1]
    try:
        data = json.loads(text)
    except json.JSONDecodeError as exc:
        malformed(path, exc.lineno, f"not JSON: {exc.msg}", RECOLLECT)
    if not isinstance(data, dict) or not isinstance(data.get("lscpu"), list):
        malformed(path, 1, "no top-level \"lscpu\" list (is this `lscpu -J` output?)", RECOLLECT)
    lines = text.splitlines()
    out: dict[str, Fact[str]] = {}
    for entry in _flatten(data["lscpu"]):
        field = str(entry.get("field", "")).rstrip(":").strip()
        if field and entry.get("data") is not None:
            out.setdefault(field, Fact(str(entry["data"]).strip(), name, _line_of(lines, entry["field"]), field))
    if "Architecture" not in out:
        malformed(path, 1, "no \"Architecture:\" field (is this `lscpu -J` output?)", RECOLLECT)
    return out


def _flatten(entries: list[Any]) -> list[dict[str, Any]]:
    out = []
    for entry in entries:
        if isinstance(entry, dict):
            out.append(entry)
            out.extend(_flatten(entry.get("children") or []))
    return out


def _line_of(lines: list[str], field: str) -> int | None:
    needle = json.dumps(field)
    return next((number for number, line in enumerate(lines, start=1) if needle in line), None)
