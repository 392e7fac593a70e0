"""Where Helm values of the charts hpcconf knows really live, and which chart version a deployment pins.

A values file is recognised (hpcconf.lint.detect) by, in this order:

- a ``Chart.yaml`` in its directory: the chart itself (``name: gpu-operator``, a fork or vendored copy) or an
  umbrella chart whose ``dependencies`` include one of ours; an umbrella's values for a dependency are the
  sub-tree under the dependency's ``alias`` or ``name``, and its version is the one ``Chart.lock`` resolved (else
  an exact version in ``Chart.yaml``; a range such as ``~26.3.0`` pins nothing);
- the chart's name in the file name (``gpu-operator-values.yaml``, ``values-network-operator.yaml``);
- a values file (``values.yaml``, ``values-*.yaml``, ``*-values.yaml``) in a directory named after the chart
  (``configs/values/gpu-operator/values.yaml``);
- a values file whose own top-level keys are the chart's (:func:`chart_by_content`), wherever it is.

Go-template markup in a values file (``owner: "{{ .Release.Name }}"``, a string a chart passes to ``tpl``) does not
make it a template: Helm reads values.yaml as YAML, and renders only ``templates/`` (skipped by its path).

AMD's GPU operator chart (ROCm/gpu-operator) is also called gpu-operator in file names, in its early Chart.yaml and
in umbrella charts' dependencies: its values are told from NVIDIA's by their own top-level keys (``kmm``,
``deviceConfig``, ``controllerManager``...: :data:`hpcconf.knowledge.rocm.AMD_GPU_OPERATOR_ONLY_KEYS`), by a
Chart.yaml whose home or sources is ROCm/gpu-operator, by a dependency from AMD's Helm repository, or by
``amd``/``rocm`` beside ``gpu-operator`` in the file or directory name.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Optional

from ruamel.yaml import YAML
from ruamel.yaml.error import YAMLError

from ..diagnostics import HpcconfError
from ..knowledge import charts
from ..knowledge.rocm import AMD_GPU_OPERATOR_CHART, AMD_GPU_OPERATOR_GITHUB, AMD_GPU_OPERATOR_ONLY_KEYS, AMD_GPU_OPERATOR_REPO
from ..safe_io import read_text

HELM_CHARTS = ("network-operator", "gpu-operator", "node-feature-discovery")
# Chart names as they appear in file and directory names ("nfd" is the usual short name of node-feature-discovery).
# amd-gpu-operator first: "gpu-operator" is part of its name.
CHART_IN_NAME = [("amd-gpu-operator", "amd-gpu-operator"), ("amd_gpu_operator", "amd-gpu-operator"),
                 ("network-operator", "network-operator"), ("network_operator", "network-operator"),
                 ("gpu-operator", "gpu-operator"), ("gpu_operator", "gpu-operator"),
                 ("node-feature-discovery", "node-feature-discovery"), ("nfd", "node-feature-discovery")]
# Chart.yaml names of the charts whose values hpcconf reads under another kind name: AMD publishes its
# operator as gpu-operator-charts (ROCm/gpu-operator helm-charts-k8s/Chart.yaml).
CHART_YAML_NAMES = {AMD_GPU_OPERATOR_CHART: "amd-gpu-operator"}
_EXACT_VERSION = re.compile(r"^v?(\d+\.\d+\.\d+(?:-[0-9A-Za-z.\-]+)?)$")


@dataclass(frozen=True)
class ChartPlacement:
    """One chart's values inside a values file."""

    chart: str  # hpcconf's chart name
    root: tuple[str, ...]  # where its values sit in the file: () for the chart's own values
    version: Optional[str]  # the version the deployment pins; None when it pins none
    source: str  # where the version was read ("Chart.lock"), or why there is none


# "gpu-operator" beside the vendor's word in one name (rocm-gpu-operator-values.yaml, amd_gpu-operator/): AMD's.
_AMD_WORD = re.compile(r"(?<![a-z0-9])(?:amd|rocm)(?![a-z0-9])")


def chart_in_name(name: str) -> Optional[str]:
    lower = name.lower()
    for needle, chart in CHART_IN_NAME:
        if needle in lower:
            return "amd-gpu-operator" if chart == "gpu-operator" and _AMD_WORD.search(lower) else chart
    return None


def is_values_name(name: str) -> bool:
    lower = name.lower()
    return lower.endswith((".yaml", ".yml")) and "values" in lower


def chart_by_directory(source_path: str) -> Optional[str]:
    """``gpu-operator/values.yaml``: the chart a values file's directory is named after."""
    path = Path(source_path)
    if not source_path or not is_values_name(path.name):
        return None
    return chart_in_name(path.parent.name)


# Top-level keys every chart may have (Helm conventions, shared subcharts): they tell no chart from another.
_GENERIC_TOP_KEYS = frozenset({"global", "nameOverride", "fullnameOverride", "imagePullSecrets", "operator", "nfd",
                               "node-feature-discovery", "psp", "tolerations", "nodeAffinity", "extraObjects",
                               "image", "test", "daemonsets"})
_CONTENT_CHARTS = ("gpu-operator", "network-operator")
_MIN_OWN_KEYS = 2


def chart_by_content(values: Any) -> Optional[str]:
    """The chart a values file is for by its own top-level keys, where neither a Chart.yaml, the file name nor
    its directory says: at least two keys only that chart has among the ones hpcconf read (``driver``,
    ``toolkit``, ``devicePlugin``, ``dcgmExporter``: gpu-operator; ``ofedDriver``, ``rdmaSharedDevicePlugin``,
    ``secondaryNetwork``: network-operator), and no key only the other has; None otherwise."""
    if not isinstance(values, dict):
        return None
    top = {str(key) for key in values}
    own: dict[str, set[str]] = {}
    for chart in _CONTENT_CHARTS:
        tree = charts.chart_tree(chart)
        own[chart] = ({p[0] for p in tree.keys} if tree is not None else set()) - _GENERIC_TOP_KEYS
    matched = []
    for chart in _CONTENT_CHARTS:
        others = set().union(*(keys for name, keys in own.items() if name != chart))
        mine = own[chart] - others
        if len(top & mine) >= _MIN_OWN_KEYS and not top & (others - own[chart]):
            matched.append(chart)
    if len(matched) != 1:
        return None
    if matched[0] == "gpu-operator" and is_amd_gpu_operator_values(values):
        return "amd-gpu-operator"
    return matched[0]


def placements(source_path: str) -> Optional[list[ChartPlacement]]:
    """The charts a values file configures according to the ``Chart.yaml`` beside it; None without one (or
    when the file is not a values file), [] when that chart neither is nor depends on a chart hpcconf knows."""
    path = Path(source_path)
    if not source_path or not is_values_name(path.name):
        return None
    chart_yaml = _load(path.parent / "Chart.yaml")
    if not isinstance(chart_yaml, dict):
        return None
    name = str(chart_yaml.get("name", ""))
    if name == "gpu-operator" and _is_amd_chart(chart_yaml):
        name = AMD_GPU_OPERATOR_CHART
    dependencies = [dep for dep in chart_yaml.get("dependencies") or [] if isinstance(dep, dict)]
    # An umbrella named after the chart it wraps (giantswarm/gpu-operator-app: chart gpu-operator depending on
    # NVIDIA's gpu-operator): the dependency's values sit under its key, the umbrella's own are not the chart's.
    if name in HELM_CHARTS and not any(str(dep.get("name")) == name for dep in dependencies):
        return [_placement(name, (), chart_yaml.get("version"), "its Chart.yaml")]
    found = []
    if name in CHART_YAML_NAMES:  # the chart's own values, and below its dependencies' under their keys
        found.append(_placement(CHART_YAML_NAMES[name], (), chart_yaml.get("version"), "its Chart.yaml"))
    locked = _locked_versions(path.parent / "Chart.lock")
    for dep in dependencies:
        dep_name = str(dep.get("name"))
        chart = CHART_YAML_NAMES.get(dep_name, dep_name)
        if chart == "gpu-operator" and AMD_GPU_OPERATOR_REPO in str(dep.get("repository") or "").lower():
            chart = "amd-gpu-operator"
        if chart not in HELM_CHARTS and chart not in CHART_YAML_NAMES.values():
            continue
        root = (str(dep.get("alias") or dep_name),)
        if dep_name in locked:
            found.append(_placement(chart, root, locked[dep_name], "Chart.lock"))
        else:
            found.append(_placement(chart, root, dep.get("version"), "the Chart.yaml dependency"))
    return found


def _is_amd_chart(chart_yaml: dict[str, Any]) -> bool:
    """A Chart.yaml of AMD's operator (ROCm/gpu-operator f9ca606b named it gpu-operator): its home or sources."""
    sources = chart_yaml.get("sources")
    named = [chart_yaml.get("home"), *(sources if isinstance(sources, list) else [sources])]
    return any(AMD_GPU_OPERATOR_GITHUB in str(url).lower() for url in named if url)


# Keys both operators' charts have: they tell neither from the other.
_SHARED_GPU_OPERATOR_KEYS = frozenset({"node-feature-discovery", "draDriver", "global"})


def _nvidia_only_keys(values: dict[Any, Any]) -> set[str]:
    tree = charts.chart_tree("gpu-operator")
    nvidia = {p[0] for p in tree.keys} - _SHARED_GPU_OPERATOR_KEYS if tree is not None else set()
    return {str(k) for k in values} & nvidia


def is_amd_gpu_operator_values(values: Any) -> bool:
    """Values for a chart called gpu-operator that are AMD's: a top-level key only AMD's chart has, and none that
    only NVIDIA's has (NVIDIA's keys: every gpu-operator release hpcconf read)."""
    if not isinstance(values, dict) or not {str(k) for k in values} & AMD_GPU_OPERATOR_ONLY_KEYS:
        return False
    return not _nvidia_only_keys(values)


def is_nvidia_gpu_operator_values(values: Any) -> bool:
    """Values that only NVIDIA's gpu-operator reads (driver, toolkit, devicePlugin...) and none of AMD's own keys:
    NVIDIA's, whatever a name says."""
    return isinstance(values, dict) and bool(_nvidia_only_keys(values)) and \
        not {str(k) for k in values} & AMD_GPU_OPERATOR_ONLY_KEYS


def _placement(chart: str, root: tuple[str, ...], version: Any, where: str) -> ChartPlacement:
    text = str(version).strip() if version is not None else ""
    match = _EXACT_VERSION.match(text)
    if match:
        return ChartPlacement(chart, root, match.group(1), where)
    why = f"{where} asks for {text!r}, which pins no single version" if text else f"{where} names no version"
    return ChartPlacement(chart, root, None, why)


def _locked_versions(lock: Path) -> dict[str, str]:
    data = _load(lock)
    if not isinstance(data, dict):
        return {}
    return {str(d["name"]): str(d["version"]) for d in data.get("dependencies") or []
            if isinstance(d, dict) and d.get("name") and d.get("version")}


def _load(path: Path) -> Any:
    try:
        return YAML(typ="safe").load(read_text(path, "linted"))
    except (HpcconfError, YAMLError):
        return None
