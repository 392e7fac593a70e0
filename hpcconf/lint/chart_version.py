"""Which chart version a Helm values file is linted against; shared by the HELM and compatibility rules.

Kept outside ``hpcconf.lint.rules`` so that rule modules stay independent of each other.

Precedence: the version the file's own deployment declares (``Chart.lock``, an exact ``Chart.yaml``
dependency or chart version) > the context (the linted spec's pin, then ``--chart`` or a per-path setting
in ``LintContext.charts``) > the version the file's header names ("# network-operator chart 23.4.0 values",
as hpcconf writes it, or "# network-operator 26.4.1" in its first five lines). Without any of them the version is unknown: the key rules then judge against every
version read, never silently against the newest.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Optional

from ..knowledge import charts
from .context import LintContext
from .document import Document


@dataclass(frozen=True)
class ResolvedVersion:
    version: Optional[str]  # None: unknown
    source: str  # where it was read ("Chart.lock", "--chart or settings", ...), or why there is none


def resolve_chart_version(ctx: LintContext, chart: str, doc: Optional[Document] = None) -> ResolvedVersion:
    """The chart version ``doc`` is for, and where that was read; version None when nothing says."""
    if doc is not None and doc.chart_version:
        return ResolvedVersion(doc.chart_version.lstrip("v"), doc.chart_version_source)
    pinned = ctx.pinned_version(chart)
    if pinned:
        return ResolvedVersion(str(pinned).lstrip("v"), "the spec")
    if chart in ctx.charts:
        return ResolvedVersion(ctx.charts[chart].lstrip("v"), "--chart or settings")
    declared = _declared_version(doc, chart) if doc is not None else None
    if declared:
        return ResolvedVersion(declared, "the file's header")
    why = doc.chart_version_source if doc is not None and doc.chart_version_source else ""
    return ResolvedVersion(None, why)


def chart_version(ctx: LintContext, chart: str, doc: Optional[Document] = None) -> tuple[Optional[str], bool]:
    """(version, assumed): :func:`resolve_chart_version`, or else the newest known version (assumed=True), for
    rules that judge a chart's defaults (the newest is what an unpinned ``helm upgrade -i`` installs today)."""
    resolved = resolve_chart_version(ctx, chart, doc)
    if resolved.version:
        return resolved.version, False
    return charts.newest_version(chart), True


def _declared_version(doc: Document, chart: str) -> Optional[str]:
    # "# network-operator chart 23.4.0 values" (hpcconf's own header) or "# network-operator 26.4.1"; a full
    # three-part version right after the chart's name, so "tested with network-operator 24.10" names nothing.
    pattern = re.compile(rf"^#.*(?<![\w-]){re.escape(chart)}(?: chart)? v?(\d+\.\d+\.\d+[\w.+-]*)")
    for line in doc.lines[:5]:
        match = pattern.match(line)
        if match:
            return match.group(1).rstrip(";,.")
    return None
