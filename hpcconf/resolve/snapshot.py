"""The resolved model as reviewable text: every decision resolve made for a spec, as YAML with sorted keys.

A reviewer sees a decision change (a pin, a floor, a health check, a topology element) in one file instead of in
the twenty artifacts that transcribe it (issue #23). Inputs are left out: the model holds neither the spec nor the
catalog entry (``sku`` holds the facts the targets read), and the spec's file name is not written. A pool named again inside
a platform section (the AKS test pool, a job's pool) is written as its name. Nothing depends on object ids,
paths or the order of a set, so the text is the same on every run and Python version.
"""

from __future__ import annotations

import dataclasses
import enum
from typing import Any

from pydantic import BaseModel

from ..yamlio import dump_yaml
from . import ResolvedCluster, ResolvedPool
from .nccl_topology import Node

LEFT_OUT = frozenset({"spec_file"})  # an input, not a decision


def _node(node: Node) -> Any:
    """``name key=value ...``, with its children under it: the XML element, one line each."""
    label = " ".join([node.name, *(f"{key}={value}" for key, value in node.attrs)])
    return {label: [_node(child) for child in node.children]} if node.children else label


def _is_pair(item: Any) -> bool:
    return isinstance(item, tuple) and len(item) == 2 and isinstance(item[0], str) and not isinstance(item[1], tuple)


def plain(value: Any, top: bool = True) -> Any:
    """``value`` as YAML-ready data: dataclasses and pydantic models as sorted mappings, enums by value."""
    if isinstance(value, ResolvedPool) and not top:
        return value.name
    if isinstance(value, Node):
        return _node(value)
    if dataclasses.is_dataclass(value) and not isinstance(value, type):
        fields = {f.name: getattr(value, f.name) for f in dataclasses.fields(value) if f.name not in LEFT_OUT}
        if isinstance(value, ResolvedPool) and value.sku_file is not None:
            fields["sku_file"] = value.sku_file[0]  # the user's SKU file by name; its text is an input
        return {key: plain(fields[key], top=False) for key in sorted(fields)}
    if isinstance(value, BaseModel):
        return plain(value.model_dump(mode="json"), top=False)
    if isinstance(value, enum.Enum):
        return value.value
    if isinstance(value, dict):
        return {str(key): plain(value[key], top=False) for key in sorted(value, key=str)}
    if isinstance(value, (list, tuple)) and value and all(_is_pair(item) for item in value):
        return [{item[0]: plain(item[1], top=False)} for item in value]  # ordered settings: one KEY: value each
    if isinstance(value, (list, tuple)):
        return [plain(item, top=False) for item in value]
    if isinstance(value, (frozenset, set)):
        return sorted(plain(item, top=False) for item in value)
    return value


def resolved_snapshot(cluster: ResolvedCluster) -> str:
    """The YAML text of ``cluster``'s decisions (pools in full once, under ``pools``)."""
    data = plain(cluster)
    data["pools"] = [plain(pool) for pool in cluster.pools]
    if cluster.test_pool is not None:
        data["test_pool"] = cluster.test_pool.name
    return dump_yaml(data)
