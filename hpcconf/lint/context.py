"""What rules know besides the files: the target SKU, NCCL version, chart versions and config.

``--sku``, ``--nccl-version`` and ``--chart`` fill a :class:`LintContext`; a spec fills it
itself. Rules read it (``ctx.sku``, ``ctx.nccl_at_least("2.24")``, ``ctx.chart("gpu-operator")``)
and stay silent about facts they cannot know, e.g. a SKU-specific rule without ``--sku``.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Any

from .config import LintConfig

# The newest NCCL release the research tables cover (shared/upstream/nccl/nccl-env-vars.tsv).
# hpcconf.knowledge.nccl_env supersedes this once it is present.
FALLBACK_NCCL_VERSION = "2.30.7"
KNOWN_CHARTS = ("network-operator", "gpu-operator", "node-feature-discovery", "volcano")
CHART_ALIASES = {"nfd": "node-feature-discovery"}


class UsageError(ValueError):
    """A bad option value (exit code 2)."""


def parse_version(text: str) -> tuple[int, ...]:
    """'2.24.3' / 'v26.4.1' / '2.24' -> (2, 24, 3) / (26, 4, 1) / (2, 24); pre-release suffixes dropped."""
    match = re.match(r"^v?(\d+(?:\.\d+)*)", text.strip())
    if not match:
        raise UsageError(f"not a version number: {text!r} (expected X.Y.Z)")
    return tuple(int(p) for p in match.group(1).split("."))


def newest_nccl_version() -> str:
    try:
        from ..knowledge import nccl_env  # helper-2's table, when installed
    except ImportError:
        return FALLBACK_NCCL_VERSION
    newest = getattr(nccl_env, "NEWEST_VERSION", None) or getattr(nccl_env, "newest_version", None)
    if callable(newest):
        newest = newest()
    return str(newest) if newest else FALLBACK_NCCL_VERSION


def newest_chart_version(chart: str) -> str | None:
    """The newest version of ``chart`` the knowledge base knows, if it knows any."""
    try:
        from ..knowledge import charts  # type: ignore[attr-defined]
    except ImportError:
        return None
    newest = getattr(charts, "newest_version", None)
    return newest(chart) if callable(newest) else None


def parse_chart_option(text: str) -> tuple[str, str]:
    """'network-operator=26.4.1' -> ('network-operator', '26.4.1'); 'nfd' is node-feature-discovery."""
    name, sep, version = text.partition("=")
    name = CHART_ALIASES.get(name.strip().lower(), name.strip().lower())
    if not sep or not version.strip():
        raise UsageError(f"--chart expects NAME=VERSION, got {text!r}")
    if name not in KNOWN_CHARTS:
        raise UsageError(f"unknown chart {name!r} in --chart; known: {', '.join(KNOWN_CHARTS)}")
    version = version.strip()
    parse_version(version)
    return name, version.lstrip("v")


def lookup_sku(text: str) -> Any:
    """The catalog's Sku for ``--sku`` (any case, ``Standard_`` optional); UsageError if unknown."""
    from ..catalog import Catalog, UnknownSku
    from ..diagnostics import HpcconfError

    try:
        return Catalog.load(()).get(text)
    except UnknownSku as exc:
        raise UsageError(f"--sku: {exc} (`hpcconf skus` lists the known sizes)") from None
    except HpcconfError as exc:
        raise UsageError(f"the SKU catalog does not load: {exc}") from None


@dataclass
class LintContext:
    sku: Any = None  # hpcconf.catalog.Sku, or None when the target VM size is unknown
    nccl_version: str = field(default_factory=newest_nccl_version)
    charts: dict[str, str] = field(default_factory=dict)  # chart name -> version given by the user
    config: LintConfig = field(default_factory=LintConfig)
    spec: Any = None  # the loaded spec, when linting an hpcconf spec
    cluster: Any = None  # its ResolvedCluster

    def nccl_at_least(self, version: str) -> bool:
        return parse_version(self.nccl_version) >= parse_version(version)

    def chart(self, name: str) -> str | None:
        """The version of ``name`` to check against: the user's, else the newest known."""
        name = CHART_ALIASES.get(name, name)
        return self.charts.get(name) or newest_chart_version(name)

    # -- SKU facts rules need, read defensively from the catalog's Sku -------------------------
    @property
    def gpu_count(self) -> int | None:
        gpu = getattr(self.sku, "gpu", None)
        return getattr(gpu, "count", None) if gpu is not None else None

    @property
    def sku_name(self) -> str:
        return getattr(self.sku, "name", "") if self.sku is not None else ""
