"""CycleCloud cluster template rules (SLURM105): the slurm, munge and slurmrestd user and group ids each node and
node array of a cyclecloud-slurm cluster gets, compared across them."""

from __future__ import annotations

import re
from collections.abc import Iterator
from dataclasses import dataclass, field

from ...artifacts import Kind
from ...diagnostics import Diagnostic, Severity
from ...rules_registry import rule
from ..context import LintContext
from ..document import Document

# cyclecloud-slurm's defaults (templates/slurm.txt [[node defaults]] and README "UID conflicts for Slurm, Munge,
# and Slurmrestd users" at 4.0.9): the ids every node gets unless its configuration overrides them.
ID_DEFAULTS = {"slurm.user.uid": "11100", "slurm.user.gid": "11100", "munge.user.uid": "11101",
               "munge.user.gid": "11101", "slurm.slurmrestd.user.uid": "11102", "slurm.slurmrestd.user.gid": "11102"}

_SECTION = re.compile(r"^\s*(\[+)\s*([^\[\]]+?)\s*(\]+)\s*(?:#.*)?$")
_SETTING = re.compile(r"^\s*([A-Za-z0-9_.\-]+)\s*:?=\s*(.*?)\s*$")


@dataclass
class Node:
    kind: str  # "node" or "nodearray" (or "defaults": [[node defaults]])
    name: str
    line: int
    extends: str | None = None
    abstract: bool = False
    ids: dict[str, tuple[str, int]] = field(default_factory=dict)  # key -> (value, line)


def template_nodes(text: str) -> dict[str, Node]:
    """The [[node]] and [[nodearray]] sections of a cluster template with their Extends, Abstract and the id settings
    of their [[[configuration]]] / [[[configuration PREFIX]]] sections."""
    nodes: dict[str, Node] = {}
    current: Node | None = None
    prefix: str | None = None  # the configuration section's key prefix; None outside one
    for number, raw in enumerate(text.splitlines(), 1):
        if not raw.strip() or raw.lstrip().startswith("#"):
            continue
        section = _SECTION.match(raw)
        if section:
            depth, words = len(section.group(1)), section.group(2).split(None, 1)
            if depth == 2:
                kind = words[0].lower()
                name = words[1] if len(words) > 1 else ""
                current = Node("defaults" if (kind, name) == ("node", "defaults") else kind, name, number) \
                    if kind in ("node", "nodearray") else None
                if current is not None:
                    nodes[current.name] = current
                prefix = None
            elif depth == 3 and current is not None and words[0].lower() == "configuration":
                prefix = words[1] + "." if len(words) > 1 else ""
            else:
                prefix = None if depth <= 3 else prefix
            continue
        setting = _SETTING.match(raw)
        if setting is None or current is None:
            continue
        key, value = setting.group(1), setting.group(2)
        if prefix is None:
            if key.lower() == "extends":
                current.extends = value
            elif key.lower() == "abstract":
                current.abstract = value.lower() == "true"
            continue
        full = prefix + key
        if full in ID_DEFAULTS:
            current.ids[full] = (value, number)
    return nodes


def effective_id(nodes: dict[str, Node], node: Node, key: str) -> tuple[str, int | None, str]:
    """(value, line that sets it or None for cyclecloud-slurm's default, the section it comes from)."""
    seen: set[str] = set()
    walk: Node | None = node
    while walk is not None and walk.name not in seen:
        seen.add(walk.name)
        if key in walk.ids:
            value, line = walk.ids[key]
            return value, line, walk.name
        walk = nodes.get(walk.extends) if walk.extends else None
    defaults = next((n for n in nodes.values() if n.kind == "defaults"), None)
    if defaults is not None and key in defaults.ids:
        value, line = defaults.ids[key]
        return value, line, "node defaults"
    return ID_DEFAULTS[key], None, "cyclecloud-slurm's default"


@rule(code="SLURM105", name="slurm-munge-ids-differ", severity=Severity.ERROR, kinds=(Kind.CYCLECLOUD_TEMPLATE,),
      since="0.4.0")
def slurm_munge_ids_differ(doc: Document, ctx: LintContext) -> Iterator[Diagnostic]:
    """A CycleCloud Slurm cluster template gives the slurm, munge or slurmrestd user a different id on some nodes.

    ## What it catches
    In a CycleCloud cluster template (``[cluster NAME]`` with ``[[node ...]]`` / ``[[nodearray ...]]`` sections, such
    as cyclecloud-slurm's ``templates/slurm.txt``): a node array (or node) whose ``slurm.user.uid``/``gid``,
    ``munge.user.uid``/``gid`` or ``slurm.slurmrestd.user.uid``/``gid`` differs from the scheduler's, following
    ``Extends`` and ``[[node defaults]]`` down to cyclecloud-slurm's defaults (11100, 11101, 11102). Values that are
    template parameters (``$Name``) are not judged. Abstract nodes count only through the arrays that extend them.

    ## Why is this bad?
    cyclecloud-slurm's README (4.0.9, "UID conflicts for Slurm, Munge, and Slurmrestd users"): "slurm requires
    UID/GID to be consistent across the cluster so you must edit all nodearray (including scheduler and
    scheduler-ha) configurations to override the defaults successfully. If you fail to do so you will see the
    following error in slurmd: error: Security violation, ping RPC from uid 11100". Munge credentials carry the
    sender's uid: nodes whose ids differ from the controller's refuse its RPCs and are never usable.

    ## Example
    ```
    [cluster Slurm]
        [[node scheduler]]
            [[[configuration]]]
            slurm.user.uid = 20000
        [[nodearray gpu]]
            [[[configuration]]]
            slurm.user.uid = 11100
    ```

    ## Fix
    Set the same ids on every node and node array (or once, in ``[[node defaults]]``), e.g.
    ``slurm.user.uid = 20000`` in both.
    """
    nodes = template_nodes(doc.text)
    scheduler = nodes.get("scheduler")
    if scheduler is None or scheduler.kind == "defaults":
        return  # not a Slurm cluster template we can judge: no scheduler node to compare with
    others = [n for n in nodes.values() if n is not scheduler and n.kind != "defaults" and not n.abstract]
    for key in ID_DEFAULTS:
        want, want_line, want_from = effective_id(nodes, scheduler, key)
        if want.startswith("$"):
            continue
        differing: dict[tuple[int | None, str, str], list[str]] = {}
        for node in others:
            value, line, origin = effective_id(nodes, node, key)
            if value != want and not value.startswith("$"):
                differing.setdefault((line, value, origin), []).append(f"{node.kind} {node.name}")
        for (line, value, origin), names in differing.items():
            where = line if line is not None else want_line
            if where is None:
                continue
            them = ", ".join(names)
            yield doc.at_line(where, f"{key} is {value} for {them} (from {origin}) but {want} for the scheduler "
                              f"(from {want_from}): slurmd there refuses the controller's RPCs (\"Security "
                              "violation\")", hint=f"{key} = {want} on every node and node array, or once in "
                              "[[node defaults]]")
