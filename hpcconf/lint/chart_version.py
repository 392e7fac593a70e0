"""Which chart version a Helm values file is linted against; shared by the HELM and compatibility rules.

Kept outside ``hpcconf.lint.rules`` so that rule modules stay independent of each other.
"""

from __future__ import annotations

import re
from typing import Optional

from ..knowledge import charts
from .context import LintContext
from .document import Document


def chart_version(ctx: LintContext, chart: str, doc: Optional[Document] = None) -> tuple[Optional[str], bool]:
    """(version, assumed): the spec's pin, the user's --chart, the version the values file's header
    names ("# network-operator chart 23.4.0 values ...", as hpcconf writes it), or the newest known."""
    pinned = ctx.pinned_version(chart)
    if pinned:
        return str(pinned).lstrip("v"), False
    if chart in ctx.charts:
        return ctx.charts[chart].lstrip("v"), False
    declared = _declared_version(doc, chart) if doc is not None else None
    if declared:
        return declared, False
    return charts.newest_version(chart), True


def _declared_version(doc: Document, chart: str) -> Optional[str]:
    pattern = re.compile(rf"^#.*\b{re.escape(chart)} chart v?(\d+\.\d+\.\d+\S*)")
    for line in doc.lines[:5]:
        match = pattern.match(line)
        if match:
            return match.group(1).rstrip(";,.")
    return None
