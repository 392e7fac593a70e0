"""What rules know besides the files: the target SKU, NCCL version, chart versions and config.

``--sku``, ``--nccl-version`` and ``--chart`` fill a :class:`LintContext`; the settings'
``per-path-context`` tables refine it per file (:mod:`hpcconf.settings.path_context`, which says which
value wins); a spec fills it itself. A document's own context is ``doc.context_or(ctx)``. Rules read it (``ctx.sku``, ``ctx.nccl_at_least("2.24")``, ``ctx.chart("gpu-operator")``)
and stay silent about facts they cannot know, e.g. a SKU-specific rule without ``--sku``.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from functools import lru_cache
from pathlib import Path
from typing import TYPE_CHECKING, Mapping, Sequence

from ..knowledge import charts, nccl_env, providers
from ..knowledge.versions import Version
from ..settings.config import LintConfig
from ..settings.values import CHART_ALIASES, KNOWN_CHARTS, UsageError

if TYPE_CHECKING:
    from ..catalog import Catalog, Sku
    from ..resolve import ResolvedCluster
    from ..spec.load import LoadedSpec

# The spec's ``versions`` field that pins each chart.
CHART_VERSION_FIELDS = {"network-operator": "network_operator", "gpu-operator": "gpu_operator",
                        "node-feature-discovery": "node_feature_discovery", "volcano": "volcano"}


def parse_version(text: str) -> Version:
    """``--nccl-version`` / ``--chart`` values: '2.24.3', 'v26.4.1', '2.24'; UsageError when not a version."""
    try:
        return Version.parse(text)
    except ValueError:
        raise UsageError(f"not a version number: {text!r} (expected X.Y.Z)") from None


def newest_nccl_version() -> str:
    """The newest NCCL release the knowledge base's variable table covers."""
    return str(nccl_env.newest_version())


def newest_chart_version(chart: str) -> str | None:
    """The newest version of ``chart`` the knowledge base knows, if it knows any."""
    return charts.newest_version(chart)


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


def lookup_sku(text: str, sku_dirs: Sequence[Path] = ()) -> Sku:
    """The catalog's Sku for ``--sku`` (any case, ``Standard_`` optional), ``sku_dirs`` included;
    UsageError if unknown. A bad SKU directory or file raises HpcconfError (HPC100/HPC101, located)."""
    from ..catalog import Catalog, UnknownSku

    try:
        return Catalog.load(sku_dirs).get(text)
    except UnknownSku as exc:
        raise UsageError(f"--sku: {exc} (`hpcconf skus` lists the known sizes)") from None


@lru_cache(maxsize=1)
def _package_catalog() -> "Catalog":
    """The package SKUs, indexed once per process: each file of a tree asks which SKU it names, and a new
    Catalog.load() reads every SKU file's header again (and parses the SKU it returns again)."""
    from ..catalog import Catalog

    return Catalog.load()


def _parsed_name_and_provider(path: Path) -> tuple[str, str]:
    """A package SKU file whose top-level lines do not say its name: parsed by the catalog's models."""
    from ..catalog import load_sku_file

    sku = load_sku_file(path)
    return sku.name, sku.provider


# A whole word of a SKU name: a run of the characters a name may be written with, bounded by none of them.
_NAME_RUN = re.compile(r"[\w.-]+")


def _whole_word(name: str) -> "re.Pattern[str]":
    return re.compile(r"(?<![\w.-])" + re.escape(name) + r"(?![\w.-])")


@lru_cache(maxsize=1)
def _sku_names() -> tuple[frozenset[str], tuple[tuple[str, "re.Pattern[str]"], ...]]:
    """Every package SKU's canonical name, to find as a whole word in a file's text: a name made only of word
    characters, '.' and '-' occurs as a whole word exactly where it is a maximal run of them, so one pass
    over the text finds all such names (a search per name took ~0.3 ms per file per SKU); any other name
    is searched for with its own pattern."""
    from ..catalog_index import package_entries  # the names alone: the SKU models load when a file names one

    names = sorted(package_entries(_parsed_name_and_provider))
    runs = frozenset(name for name in names if _NAME_RUN.fullmatch(name))
    return runs, tuple((name, _whole_word(name)) for name in names if name not in runs)


def skus_named_in(text: str) -> set[str]:
    """The package SKUs whose canonical names occur in ``text`` as whole words (not inside a longer name)."""
    return set(_skus_named_in(text))


@lru_cache(maxsize=64)
def _skus_named_in(text: str) -> frozenset[str]:
    # Asked by several rules for every document, and every document of a multi-document file has its text.
    runs, others = _sku_names()
    named = set(runs.intersection(_NAME_RUN.findall(text))) if runs else set()
    named.update(name for name, pattern in others if pattern.search(text))
    return frozenset(named)


@dataclass
class LintContext:
    sku: Sku | None = None  # None when the target VM size is unknown
    nccl_version: str = field(default_factory=newest_nccl_version)
    charts: dict[str, str] = field(default_factory=dict)  # chart name -> version given by the user
    config: LintConfig = field(default_factory=LintConfig)
    ucx_version: str | None = None  # None: the newest UCX
    kubernetes_version: str | None = None  # None: the spec's, else the newest schema installed
    openmpi_version: str | None = None  # None: the newest Open MPI
    spec: LoadedSpec | None = None  # the loaded spec, when linting an hpcconf spec
    cluster: ResolvedCluster | None = None  # what it resolved to
    pool_skus: Mapping[str, Sku] = field(default_factory=dict)  # its pools' catalog entries, by pool name
    provider: str | None = None  # a hpcconf/data/providers.yaml profile (--provider); None: from the file
    # Fields the command line set ("sku", "nccl_version"): per-path settings do not override them.
    # (`charts` holds only the command line's --chart values until a per-path table adds to it.)
    given: frozenset[str] = frozenset()

    def kubernetes(self) -> str | None:
        """The Kubernetes version manifests are judged for: the user's, else the spec's AKS version."""
        if self.kubernetes_version:
            return self.kubernetes_version
        if self.cluster is not None and self.cluster.aks is not None:
            return _held_or_oldest(self.cluster.aks.kubernetes_version)
        return None

    def provider_for(self, text: str) -> "providers.Provider | None":
        """The provider profile a file is judged by: the one given (--provider, settings), else the one
        whose signals the file carries, else None (unknown)."""
        return providers.lookup(self.provider) if self.provider else providers.detect(text)

    def sku_for_text(self, text: str) -> "Sku | None":
        """The SKU a file is judged by: ``--sku`` (or the path's settings), else the one catalog size the
        file names (a node selector's ``Standard_ND96isr_H100_v5``, a Crusoe instance type); None when it
        names none or several."""
        if self.sku is not None:
            return self.sku
        named = _skus_named_in(text)
        if len(named) != 1:
            return None
        return _package_catalog().get(next(iter(named)))

    def sku_for_topology(self, gpus: frozenset[str], nics: frozenset[str],
                         cpu: Mapping[str, str]) -> "tuple[Sku | None, tuple[str, ...]]":
        """The SKU a topology file describes, from its own content: ``--sku`` when given (no names); else the
        catalog sizes whose topology has exactly the file's GPU bus ids, its NIC bus ids (when it lists any)
        and its ``<cpu>`` vendor/family/model (where both say), and (one of them, their names) when they all
        share one NUMA layout (ND H100 v5 and ND H200 v5 do: the file cannot tell them apart, and nothing a
        rule judges differs); (None, names) when none fits or they differ."""
        if self.sku is not None:
            return self.sku, ()
        if not gpus:
            return None, ()
        fits = []
        for sku in _package_catalog():
            topology = sku.topology
            if topology is None or frozenset(b.lower() for b in topology.gpu_busids()) != gpus:
                continue
            hcas = frozenset(b.lower() for node in topology.numa for b in node.hcas)
            if nics and hcas and nics != hcas:
                continue
            facts = {"vendor": topology.cpu.vendor, "familyid": str(topology.cpu.familyid),
                     "modelid": str(topology.cpu.modelid)}
            if any(cpu.get(key) not in (None, value) for key, value in facts.items()):
                continue
            fits.append(sku)
        names = tuple(sorted(sku.name for sku in fits))

        def layout(sku: Sku) -> tuple[object, ...]:
            topology = sku.topology
            assert topology is not None
            return (tuple((n.id, tuple(n.cpu_set())) for n in sku.numa or []),
                    tuple((n.numaid, tuple(n.gpus), tuple(n.hcas)) for n in topology.numa))

        if not fits or len({layout(sku) for sku in fits}) != 1:
            return None, names
        return min(fits, key=lambda sku: sku.name), names

    def nccl_at_least(self, version: str) -> bool:
        return Version.parse(self.nccl_version).at_least(version)

    def pinned_version(self, chart: str) -> str | None:
        """The version of ``chart`` the linted spec pins; None for files linted on their own."""
        field_name = CHART_VERSION_FIELDS.get(CHART_ALIASES.get(chart, chart))
        if self.cluster is None or field_name is None:
            return None
        value = getattr(self.cluster.versions, field_name)  # a Versions field named by the table above
        return str(value) if value else None

    def chart(self, name: str) -> str | None:
        """The version of ``name`` to check against: the user's, else the newest known."""
        name = CHART_ALIASES.get(name, name)
        return self.charts.get(name) or newest_chart_version(name)

    # -- SKU facts rules need ---------------------------------------------------------------------
    @property
    def gpu_count(self) -> int | None:
        return self.sku.gpu.count if self.sku is not None else None

    @property
    def sku_name(self) -> str:
        return self.sku.name if self.sku is not None else ""

    @property
    def collective(self) -> str | None:
        """``nccl`` or ``rccl``: the library that reads ``NCCL_*`` settings on the SKU's GPUs (None: no SKU)."""
        if self.sku is None:
            return None
        return self.sku.gpu.collective or "nccl"


def _held_or_oldest(kubernetes_version: str) -> str:
    """A spec's AKS version older than the oldest Kubernetes schemas held is judged with those oldest schemas
    (``--kubernetes-version`` refuses such a version as a usage error; in a spec HPC207 reports it, as AKS
    creates no cluster at a version that old)."""
    from ..knowledge.k8s_openapi import SchemaVersionError, schema_version, schema_versions

    try:
        schema_version(kubernetes_version)
    except SchemaVersionError:
        try:
            return schema_versions()[0]
        except (SchemaVersionError, IndexError):
            return kubernetes_version
    return kubernetes_version
