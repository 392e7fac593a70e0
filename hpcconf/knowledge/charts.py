"""Helm chart facts: which values keys each chart version has, and version thresholds.

Helm ignores values for keys a chart does not have, without a word (none of these charts
ships a values schema with ``additionalProperties: false``). So the only way to know that
``deployCR: true`` does nothing on network-operator 26.4.1 is a table of keys per version:
``hpcconf/data/chart_keys.yaml``.

A key exists in version V when ``since <= V < removed_in``. Children of a ``free_form`` key
(nfd-worker.conf) always exist when it does. A key the table does not list is ``unknown``:
rules stay silent about it rather than guess.
"""

from __future__ import annotations

import difflib
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path
from typing import Any, Literal, Optional

from .. import data_tables
from .versions import at_least, version_key

DATA_FILE = Path(__file__).resolve().parents[1] / "data" / "chart_keys.yaml"
CHART_ALIASES = {"nfd": "node-feature-discovery"}

KeyStatus = Literal["present", "absent", "unknown"]

# network-operator: first chart version that no longer renders the NicClusterPolicy from values
# (commit 8fc96f20, "Remove Helm deployment of NICClusterPolicy").
NCP_FROM_VALUES_UNTIL = "24.10.0"
# NicClusterPolicy CRD: `secondaryNetwork.ipamPlugin` (whereabouts) removed in v25.10.0 (commit 63c7ea65);
# nv-ipam (`spec.nvIpam`) exists since v23.7.0.
NCP_WHEREABOUTS_UNTIL = "25.10.0"
NCP_NV_IPAM_SINCE = "23.7.0"
# From 25.7.0 NVIDIA publishes every NicClusterPolicy operand (sriov device plugin, multus, CNI plugins,
# ipoib-cni, whereabouts, nv-ipam) as nvcr.io/nvidia/mellanox/<image>:network-operator-v<release> (release
# notes' component table and the NicClusterPolicy CR example of v25.7.0, v26.1.0, v26.4.1). 24.10 still
# pulled upstream images with their own tags (ghcr.io/k8snetworkplumbingwg/sriov-network-device-plugin:v3.8.0).
NCP_OPERAND_TAGS_SINCE = "25.7.0"
# The doca-driver tag each release's NicClusterPolicy CR example pairs with it (NVIDIA Network Operator
# docs, customizations/cr-full-example, per version). The operator appends -<os><version>-<arch>.
DOCA_DRIVER_BY_RELEASE = {
    "24.10.0": "24.10-0.7.0.0-0",
    "25.7.0": "doca3.1.0-25.07-0.9.7.0-0",
    "26.1.0": "doca3.3.0-26.01-1.0.0.0-0",
    "26.4.1": "doca3.4.1-26.04-1.1.0.0-1",
}
# az CLI: `az aks nodepool add --gpu-driver none` exists from 2.72.2; before it, the node pool tag
# SkipGPUDriverInstall=true (NVIDIA gpu-operator AKS docs; retired 2025-07-14, Azure/AKS#4925).
AZ_GPU_DRIVER_FLAG_SINCE = "2.72.2"
# gpu-operator: the RuntimeClass whose handler is the NVIDIA container runtime (values.yaml
# `operator.runtimeClass: nvidia`; the operator creates it, controllers/object_controls.go
# transformRuntimeClass, in every release from v22.9.2 to v26.7.0). From v25.10.0 CDI is on by default
# (`cdi.enabled: true`; CDIConfigSpec.IsEnabled returns true when unset) and transformToolkitCtrForCDI sets
# NVIDIA_RUNTIME_SET_AS_DEFAULT=false: containerd's default runtime stays runc, so only a pod that requests
# nvidia.com/gpu (CDI devices from the device plugin) or names this RuntimeClass gets the driver. v25.3.4 and
# older default to `cdi.enabled: false`, where the toolkit makes `nvidia` the default runtime.
GPU_OPERATOR_RUNTIME_CLASS = "nvidia"
GPU_OPERATOR_CDI_DEFAULT_SINCE = "25.10.0"


@dataclass(frozen=True)
class ChartKey:
    name: str
    since: str
    removed_in: Optional[str]
    default: Any
    defaults: dict[str, Any]
    note: str

    def present_in(self, version: str) -> bool:
        v = version_key(version)
        if v < version_key(self.since):
            return False
        return self.removed_in is None or v < version_key(self.removed_in)

    def default_in(self, version: str) -> Any:
        """The chart's default at ``version`` (nearest listed version at or below it)."""
        if not self.defaults:
            return self.default
        v = version_key(version)
        best = None
        for listed, value in sorted(self.defaults.items(), key=lambda kv: version_key(kv[0])):
            if version_key(listed) <= v:
                best = value
        return best


@dataclass(frozen=True)
class Chart:
    name: str
    repo: str
    versions: tuple[str, ...]
    free_form: tuple[str, ...]
    keys: dict[str, ChartKey]
    helm_repository: Optional[str] = None  # the Helm repository provision.sh installs it from (None: not installed)
    version_prefix: str = ""  # how that repository spells a version: "v" + 25.3.0


@lru_cache(maxsize=1)
def _table() -> dict[str, Chart]:
    raw = data_tables.load(DATA_FILE)
    charts = {}
    for name, body in raw.items():
        keys = {
            key: ChartKey(name=key, since=str(info["since"]), removed_in=info.get("removed_in"),
                          default=info.get("default"), defaults={str(k): v for k, v in (info.get("defaults") or {}).items()},
                          note=info.get("note", ""))
            for key, info in (body.get("keys") or {}).items()
        }
        versions = tuple(sorted((str(v) for v in body["versions"]), key=version_key))
        charts[name] = Chart(name=name, repo=body["repo"], versions=versions,
                             free_form=tuple(body.get("free_form") or ()), keys=keys,
                             helm_repository=body.get("helm_repository"), version_prefix=str(body.get("version_prefix") or ""))
    return charts


def chart(name: str) -> Chart:
    name = CHART_ALIASES.get(name, name)
    table = _table()
    if name not in table:
        raise KeyError(f"unknown chart {name!r}; known: {', '.join(sorted(table))}")
    return table[name]


def known_charts() -> list[str]:
    return sorted(_table())


def known_versions(chart_name: str) -> list[str]:
    """The chart versions the key table was read at, oldest first."""
    return list(chart(chart_name).versions)


def newest_version(chart_name: str) -> Optional[str]:
    """The newest version hpcconf knows; None for a chart it does not know."""
    try:
        versions = chart(chart_name).versions
    except KeyError:
        return None
    newest = [v for v in versions if "-rc" not in v] or list(versions)
    return newest[-1] if newest else None


def key_info(chart_name: str, dotted_key: str) -> Optional[ChartKey]:
    return chart(chart_name).keys.get(dotted_key)


def key_status(chart_name: str, version: str, dotted_key: str) -> KeyStatus:
    """Whether ``dotted_key`` exists in ``chart_name`` at ``version``: from the chart's full key tree when
    ``version`` lies within the releases it was read at, else from the tracked table for the keys it lists
    (``unknown`` for any other key)."""
    c = chart(chart_name)
    if c.versions and version_key(version) < version_key(c.versions[0]):
        return "unknown"  # older than anything the table was read at
    parts = tuple(dotted_key.split("."))
    tree = chart_tree(c.name)
    if tree is not None and tree.covers(version):
        return values_key_status(c.name, version, parts)
    known = c.keys.get(dotted_key)
    if known is None:
        return "unknown"
    return "present" if known.present_in(version) else "absent"


# --------------------------------------------------------------------------- full key trees

TREES_FILE = DATA_FILE.with_name("chart_trees.yaml")
UNRELEASED = "main"  # the default branch's head: read, but no release; counts only when the version is unknown


@dataclass(frozen=True)
class Span:
    """Versions ``since <= V < until`` (None: up to the newest ref read). ``main`` sorts after every release."""

    since: str
    until: Optional[str]

    @staticmethod
    def _key(version: str) -> tuple[float, ...]:
        return (float("inf"),) if version == UNRELEASED else tuple(float(p) for p in version_key(version))

    def covers(self, version: str) -> bool:
        v = self._key(version)
        return self._key(self.since) <= v and (self.until is None or v < self._key(self.until))

    def __str__(self) -> str:
        if self.since == UNRELEASED:
            return "the unreleased main branch"
        return f"{self.since} (removed in {self.until})" if self.until else f"{self.since} on"


@dataclass(frozen=True)
class ChartTree:
    """Every values key of a chart, with the versions that have it (``hpcconf/data/chart_trees.yaml``)."""

    name: str
    repo: str
    path: str
    reads: dict[str, str]  # version -> "tag commit"
    keys: dict[tuple[str, ...], tuple[Span, ...]]
    open: dict[tuple[str, ...], tuple[Span, ...]]

    @property
    def releases(self) -> list[str]:
        return [v for v in self.reads if v != UNRELEASED]

    def covers(self, version: str) -> bool:
        """Whether ``version`` lies between the oldest and the newest release read."""
        v = version_key(version)
        releases = self.releases
        return bool(releases) and version_key(releases[0]) <= v <= version_key(releases[-1])

    def has(self, table: dict[tuple[str, ...], tuple[Span, ...]], path: tuple[str, ...], version: Optional[str]) -> bool:
        spans = table.get(path, ())
        return bool(spans) if version is None else any(s.covers(version) for s in spans)

    def status(self, version: Optional[str], path: tuple[str, ...]) -> KeyStatus:
        """``present`` or ``absent`` at ``version``; version None: in any version read (the union)."""
        for end in range(1, len(path)):
            if self.has(self.open, path[:end], version):
                return "present"
            if not self.has(self.keys, path[:end], version):
                return "absent"
        return "present" if self.has(self.keys, path, version) else "absent"

    def children(self, version: Optional[str], parent: tuple[str, ...]) -> list[str]:
        return sorted({p[-1] for p in self.keys if len(p) == len(parent) + 1 and p[:-1] == parent
                       and self.has(self.keys, p, version)})


def _spans(text: str) -> tuple[Span, ...]:
    spans = []
    for part in str(text).split(","):
        since, _, until = part.strip().partition("..")
        spans.append(Span(since=since, until=until or None))
    return tuple(spans)


@lru_cache(maxsize=1)
def _sections() -> dict[str, str]:
    """The text of each chart's top-level section of chart_trees.yaml (the generator writes one per chart, at
    column 0): a lookup parses its own chart's section only, not the 100 KB of every chart."""
    sections: dict[str, str] = {}
    name, start, lines = None, 0, TREES_FILE.read_text(encoding="utf-8").splitlines(keepends=True)
    for index, line in enumerate(lines):
        if line[:1] not in ("", " ", "#", "\n") and line.rstrip().endswith(":"):
            if name is not None:
                sections[name] = "".join(lines[start:index])
            name, start = line.rstrip()[:-1].strip("'\""), index
    if name is not None:
        sections[name] = "".join(lines[start:])
    return sections


def _tree_of(name: str, body: dict[str, Any]) -> ChartTree:
    return ChartTree(name=name, repo=body["repo"], path=body["path"],
                     reads={str(v): str(ref) for v, ref in body["read"].items()},
                     keys={tuple(str(k).split(".")): _spans(v) for k, v in (body.get("keys") or {}).items()},
                     open={tuple(str(k).split(".")): _spans(v) for k, v in (body.get("open") or {}).items()})


@lru_cache(maxsize=1)
def _compiled_trees() -> Optional[dict[str, Any]]:
    """The whole of chart_trees.yaml from the wheel's compiled table (JSON: ~1 ms); None in a source checkout."""
    found, data = data_tables.compiled(TREES_FILE)
    return data if found else None


@lru_cache(maxsize=None)
def _tree(name: str) -> Optional[ChartTree]:
    trees = _compiled_trees()
    if trees is not None:
        return _tree_of(name, trees[name]) if name in trees else None
    section = _sections().get(name)
    if section is None:
        return None
    from ruamel.yaml import YAML

    raw = YAML(typ="safe").load(section) or {}
    return _tree_of(name, raw[name]) if name in raw else None


def chart_tree(chart_name: str) -> Optional[ChartTree]:
    """The full key tree of a chart; None for a chart whose values.yaml hpcconf did not read (volcano)."""
    return _tree(CHART_ALIASES.get(chart_name, chart_name))


def values_key_status(chart_name: str, version: Optional[str], path: tuple[str, ...]) -> KeyStatus:
    """Whether the values key ``path`` exists in the chart at ``version`` (None: in any version read, the
    unreleased main branch included); ``unknown`` for a chart without a key tree."""
    tree = chart_tree(chart_name)
    return "unknown" if tree is None else tree.status(version, tuple(str(p) for p in path))


def key_versions(chart_name: str, path: tuple[str, ...]) -> tuple[Span, ...]:
    """The version ranges that have the key ``path`` itself (not counting open parents)."""
    tree = chart_tree(chart_name)
    return tree.keys.get(tuple(path), ()) if tree is not None else ()


def similar_key(chart_name: str, version: Optional[str], path: tuple[str, ...]) -> Optional[str]:
    """A sibling of ``path``'s last key at ``version`` that it is probably a typo of (case, or a close
    spelling), e.g. ``useHostMOFED`` -> ``useHostMofed``; None when none is close."""
    tree = chart_tree(chart_name)
    if tree is None or not path:
        return None
    siblings = tree.children(version, tuple(path[:-1]))
    wanted = str(path[-1])
    folded = {s.lower().replace("_", "").replace("-", ""): s for s in siblings}
    key = wanted.lower().replace("_", "").replace("-", "")
    if key in folded:
        return folded[key]
    close = difflib.get_close_matches(wanted, siblings, n=1, cutoff=0.8) or \
        difflib.get_close_matches(key, list(folded), n=1, cutoff=0.8)
    if not close:
        return None
    return close[0] if close[0] in siblings else folded[close[0]]


def chart_has_key(chart_name: str, version: str, dotted_key: str) -> bool:
    """True when the table says ``dotted_key`` exists at ``version`` (False for absent and unknown)."""
    return key_status(chart_name, version, dotted_key) == "present"


def chart_default(chart_name: str, version: str, dotted_key: str) -> Any:
    key = key_info(chart_name, dotted_key)
    return key.default_in(version) if key is not None and key.present_in(version) else None


def network_operator_renders_ncp(version: str) -> bool:
    """Up to 24.7.x the chart renders the NicClusterPolicy from values (deployCR, ofedDriver, ...)."""
    return not at_least(version, NCP_FROM_VALUES_UNTIL)


def network_operator_has_whereabouts(version: str) -> bool:
    """Whether the network-operator can deploy whereabouts (values ≤ 24.7, NCP ipamPlugin < 25.10)."""
    return not at_least(version, NCP_WHEREABOUTS_UNTIL)


def network_operator_operand_tag(version: str) -> Optional[str]:
    """Image tag of the operands NVIDIA publishes with a network-operator release; None before 25.7."""
    if not at_least(version, NCP_OPERAND_TAGS_SINCE):
        return None
    return f"network-operator-v{version.lstrip('v')}"


def doca_driver_default(version: str) -> Optional[str]:
    """The doca-driver tag NVIDIA documents for this network-operator release, if hpcconf knows it."""
    return DOCA_DRIVER_BY_RELEASE.get(version.lstrip("v"))


def gpu_operator_cdi_by_default(version: str) -> bool:
    """Whether this gpu-operator release turns CDI on unless the values say ``cdi.enabled: false``."""
    return at_least(version, GPU_OPERATOR_CDI_DEFAULT_SINCE)


def az_cli_has_gpu_driver_flag(version: str) -> bool:
    return at_least(version, AZ_GPU_DRIVER_FLAG_SINCE)


def flatten_values(values: Any, prefix: str = "") -> list[tuple[str, tuple[Any, ...]]]:
    """Leaf keys of a values mapping as ('a.b.c', ('a', 'b', 'c')) pairs; lists are leaves."""
    found: list[tuple[str, tuple[Any, ...]]] = []
    if not isinstance(values, dict):
        return found
    for key, value in values.items():
        dotted = f"{prefix}.{key}" if prefix else str(key)
        if isinstance(value, dict) and value:
            for child, path in flatten_values(value, dotted):
                found.append((child, (key, *path)))
        else:
            found.append((dotted, (key,)))
    return found
