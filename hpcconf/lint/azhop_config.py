"""Reading an az-hop ``config.yml`` for the AZH rules: defensive getters and the typed views.

AZH001 reports shape problems; every other rule skips what it cannot read. The views
(:mod:`hpcconf.knowledge.azhop_view`) are filled here from config.yml and, in
:mod:`hpcconf.spec.checks.azhop`, from a spec, so each AZH judgement is written once.
"""

from __future__ import annotations

import ipaddress
from typing import Any, Iterable, Iterator, Optional

from ..artifacts import Kind
from ..diagnostics import Diagnostic
from ..knowledge import azhop as kb
from ..knowledge.azhop_view import Finding, GroupView, IdentitiesView, ImageRefsView, QueuesView, QueueView, UserView
from ..yamlpos import value_at
from .document import Document

KINDS = (Kind.AZHOP_CONFIG,)


def config_data(doc: Document) -> dict[str, Any]:
    return doc.data if isinstance(doc.data, dict) else {}


def dig(data: Any, *path: Any, default: Any = None) -> Any:
    return value_at(data, path, default)


def queues_of(data: dict[str, Any]) -> list[tuple[int, dict[str, Any]]]:
    queues = data.get("queues")
    return [(i, q) for i, q in enumerate(queues) if isinstance(q, dict)] if isinstance(queues, list) else []


def queue_manager_of(data: dict[str, Any]) -> str:
    value = data.get("queue_manager")
    return value if isinstance(value, str) else kb.DEFAULT_QUEUE_MANAGER


def subnets_of(data: dict[str, Any]) -> dict[str, Any]:
    subnets = dig(data, "network", "vnet", "subnets")
    return subnets if isinstance(subnets, dict) else {}


def ipv4_network(text: Any) -> Optional[ipaddress.IPv4Network]:
    if not isinstance(text, str):
        return None
    try:
        return ipaddress.IPv4Network(text.strip(), strict=True)
    except ValueError:
        return None


def is_true(value: Any) -> bool:
    return value is True


def report(doc: Document, findings: Iterable[Finding]) -> Iterator[Diagnostic]:
    """A view's findings as diagnostics at their config.yml keys (severity None: the rule's own)."""
    for finding in findings:
        yield doc.at_path(finding.path, finding.message, hint=finding.hint, prefer_value=finding.prefer_value,
                          severity=finding.severity)


def as_int(value: Any) -> Optional[int]:
    return value if isinstance(value, int) and not isinstance(value, bool) else None


def as_str(value: Any) -> Optional[str]:
    return value if isinstance(value, str) else None


def as_list(value: Any) -> list[Any]:
    return value if isinstance(value, list) else []


def as_dict(value: Any) -> dict[str, Any]:
    return value if isinstance(value, dict) else {}


# -- views ------------------------------------------------------------------------------------------

def identities_view(data: dict[str, Any]) -> IdentitiesView:
    groups = as_list(data.get("usergroups"))
    users = as_list(data.get("users"))
    group_views = tuple(GroupView(name=as_str(g.get("name")), gid=as_int(g.get("gid")), label=f"usergroups[{i}]",
                                  gid_path=("usergroups", i, "gid"))
                        for i, g in enumerate(groups) if isinstance(g, dict))
    user_views = []
    for i, user in enumerate(users):
        if not isinstance(user, dict):
            continue
        member = as_list(user.get("groups"))
        refs = tuple((gid, ("users", i, "groups", j)) for j, gid in enumerate(member) if as_int(gid) is not None)
        user_views.append(UserView(name=as_str(user.get("name")), uid=as_int(user.get("uid")), label=f"users[{i}]",
                                   name_path=("users", i, "name"), uid_path=("users", i, "uid"), groups=refs))
    return IdentitiesView(groups=group_views, users=tuple(user_views),
                          groups_path=("usergroups",) if "usergroups" in data else None,
                          group_ref="gid", groups_key="usergroups")


# config.yml key of each QueueView field
_QUEUE_KEYS = {"name": "name", "max_count": "max_count", "max_core_count": "max_core_count",
               "initial_count": "initial_count", "idle_timeout": "idle_timeout", "type": "type",
               "colocate": "ColocateNodes", "location": "location", "subnet": "subnet", "max_scale_set": "MaxScaleSetSize"}


def queues_view(data: dict[str, Any]) -> QueuesView:
    queues = []
    for i, queue in queues_of(data):
        keys = {field: ("queues", i, key) for field, key in _QUEUE_KEYS.items() if key in queue}
        queues.append(QueueView(
            name=as_str(queue.get("name")), label=f"queues[{i}]", path=("queues", i), keys=keys,
            max_nodes=kb.queue_max_nodes(queue), max_count=as_int(queue.get("max_count")),
            max_core_count=as_int(queue.get("max_core_count")), initial_count=as_int(queue.get("initial_count")),
            idle_timeout=as_int(queue.get("idle_timeout")), type=as_str(queue.get("type")) or "compute",
            colocate=queue.get("ColocateNodes") is True, location=as_str(queue.get("location")) or None,
            subnet=as_str(queue.get("subnet")), max_scale_set=as_int(queue.get("MaxScaleSetSize")),
            has_limit="max_count" in queue or "max_core_count" in queue))
    return QueuesView(queues=tuple(queues), queue_manager=queue_manager_of(data),
                      autoscale_idle_timeout=as_int(dig(data, "autoscale", "idle_timeout", default=1800)),
                      idle_timeout_key="autoscale.idle_timeout")


def image_refs_view(data: dict[str, Any]) -> ImageRefsView:
    images: list[tuple[str, tuple[Any, ...]]] = []
    plans: list[tuple[str, tuple[Any, ...]]] = []
    for key in ("linux_base_image", "windows_base_image"):
        if isinstance(data.get(key), str):
            images.append((data[key], (key,)))
    cyclecloud = as_dict(data.get("cyclecloud"))
    if isinstance(cyclecloud.get("image"), str):
        images.append((cyclecloud["image"], ("cyclecloud", "image")))
    if isinstance(data.get("linux_base_plan"), str):
        plans.append((data["linux_base_plan"], ("linux_base_plan",)))
    if isinstance(cyclecloud.get("plan"), str):
        plans.append((cyclecloud["plan"], ("cyclecloud", "plan")))
    for i, queue in queues_of(data):
        if isinstance(queue.get("image"), str):
            images.append((queue["image"], ("queues", i, "image")))
        if isinstance(queue.get("plan"), str):
            plans.append((queue["plan"], ("queues", i, "plan")))
    return ImageRefsView(images=tuple(images), plans=tuple(plans))
