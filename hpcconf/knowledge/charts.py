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

from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path
from typing import Any, Literal, Optional

from ruamel.yaml import YAML

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


@lru_cache(maxsize=1)
def _table() -> dict[str, Chart]:
    raw = YAML(typ="safe").load(DATA_FILE.read_text(encoding="utf-8"))
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
                             free_form=tuple(body.get("free_form") or ()), keys=keys)
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
    """Whether ``dotted_key`` exists in ``chart_name`` at ``version``, as far as the table knows."""
    c = chart(chart_name)
    if c.versions and version_key(version) < version_key(c.versions[0]):
        return "unknown"  # older than anything the table was read at
    parts = dotted_key.split(".")
    # The key itself or its nearest listed ancestor (a list/scalar key, or a free-form section).
    for end in range(len(parts), 0, -1):
        prefix = ".".join(parts[:end])
        known = c.keys.get(prefix)
        if known is not None and (end == len(parts) or prefix in c.free_form or _is_leaf(c, prefix)):
            return "present" if known.present_in(version) else "absent"
        if prefix in c.free_form and end < len(parts):
            return _section_status(c, prefix, version) if prefix not in c.keys else \
                ("present" if c.keys[prefix].present_in(version) else "absent")
    # A section (e.g. `secondaryNetwork`): present if any listed key under it is; absent if every
    # listed key under it is absent; the same for the nearest ancestor section that has listed keys.
    for end in range(len(parts), 0, -1):
        status = _section_status(c, ".".join(parts[:end]), version)
        if status == "present":
            return "present" if end == len(parts) else "unknown"
        if status == "absent":
            return "absent"
    return "unknown"


def _is_leaf(c: Chart, key: str) -> bool:
    return not any(other.startswith(key + ".") for other in c.keys)


def _section_status(c: Chart, section: str, version: str) -> KeyStatus:
    children = [k for name, k in c.keys.items() if name.startswith(section + ".")]
    if not children:
        return "unknown"
    if any(k.present_in(version) for k in children):
        return "present"
    # Every tracked child is gone, but the table tracks chosen keys only: the section is absent only if
    # the chart's values.yaml nearest to this version lacks it too.
    return "present" if section_in_values(c.name, version, section) else "absent"


SECTIONS_FILE = DATA_FILE.with_name("chart_sections.yaml")


@lru_cache(maxsize=1)
def _sections() -> dict[str, dict[str, frozenset[str]]]:
    raw = YAML(typ="safe").load(SECTIONS_FILE.read_text(encoding="utf-8")) or {}
    return {chart: {str(v): frozenset(paths or ()) for v, paths in versions.items()} for chart, versions in raw.items()}


def section_in_values(chart_name: str, version: str, section: str) -> bool:
    """Whether ``section`` is a mapping in the values.yaml read at the release nearest to ``version`` (the
    newest read at or before it, else the oldest read); False when no values.yaml of the chart was read."""
    read = _sections().get(CHART_ALIASES.get(chart_name, chart_name)) or {}
    if not read:
        return False
    ordered = sorted(read, key=version_key)
    at_or_before = [v for v in ordered if version_key(v) <= version_key(version)]
    nearest = at_or_before[-1] if at_or_before else ordered[0]
    return section in read[nearest]


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


def az_cli_has_gpu_driver_flag(version: str) -> bool:
    return at_least(version, AZ_GPU_DRIVER_FLAG_SINCE)


def flatten_values(values: Any, prefix: str = "") -> list[tuple[str, tuple]]:
    """Leaf keys of a values mapping as ('a.b.c', ('a', 'b', 'c')) pairs; lists are leaves."""
    found: list[tuple[str, tuple]] = []
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
