"""One judgement per AzHOP rule, over a small typed view of the settings it needs.

AzHOP settings reach hpcconf twice: in a spec's ``azhop:`` section (and its pools) and in a
hand-written az-hop ``config.yml``. Each AZH rule decides once, here, on a view both adapters fill:
the lint rule from config.yml (:mod:`hpcconf.lint.rules.azhop_*`) and the spec adapter from the
spec (:mod:`hpcconf.spec.checks.azhop`). Every field of the view carries the source path of the
key it came from, so a finding lands on the line the user wrote, whichever file that is.

Nothing here reads YAML: the adapters map paths, this module judges.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Iterator, Literal, Optional, Union

from ..diagnostics import Severity
from . import azhop as kb
from .azhop_facts import ADMINS_GID, ALL_USERS_GID, LOCAL_ADMINS_GID

Path = tuple[str | int, ...]  # a source path: ("usergroups", 2, "gid") in config.yml, ("azhop", "groups", 2, "gid") in a spec


@dataclass(frozen=True)
class Finding:
    """What is wrong, where (a source path), how to fix it; ``severity`` None is the rule's default."""

    path: Path
    message: str
    hint: str = ""
    severity: Optional[Severity] = None
    prefer_value: bool = True


# -- AZH013 users and groups ------------------------------------------------------------------------
#
# az-hop maps roles by gid, not by name (playbooks at 826f7906):
# * playbooks/create_user.yml gives every user ``gidnumber: 5000`` and puts them in the group whose
#   gid is 5000 (``selectattr('gid', 'eq', 5000)``, falling back to the name 'azhop-users');
#   add_users.yml creates only the groups of ``usergroups``. Without a gid-5000 entry no group with
#   that gid exists, yet it is every user's primary group: an error.
# * gid 5001 only names Grafana's admin group (roles/grafana/templates/ldap.toml.j2) and gid 5002
#   the sudoers group on the nodes (cluster-init 3-joindomain.sh.j2); both fall back to the default
#   names 'azhop-admins' / 'azhop-localadmins', which then may not exist: no Grafana admins, no
#   sudo. Degraded, not broken: a warning.
BUILTIN_GID_SEVERITY = {ALL_USERS_GID: Severity.ERROR, ADMINS_GID: Severity.WARNING, LOCAL_ADMINS_GID: Severity.WARNING}
BUILTIN_GID_EFFECT = {
    ALL_USERS_GID: "every user's primary group (create_user.yml sets gidnumber 5000)",
    ADMINS_GID: "Grafana's admin group (ldap.toml.j2)",
    LOCAL_ADMINS_GID: "the sudoers group on the nodes (3-joindomain.sh.j2)",
}


@dataclass(frozen=True)
class GroupView:
    name: Optional[str]
    gid: Optional[int]
    label: str  # how the user's file names the entry: "usergroups[2]", "groups[2]"
    gid_path: Path


@dataclass(frozen=True)
class UserView:
    name: Optional[str]
    uid: Optional[int]
    label: str
    name_path: Path
    uid_path: Path
    groups: tuple[tuple[Union[int, str], Path], ...] = ()  # (gid or group name, path of the reference)


@dataclass(frozen=True)
class IdentitiesView:
    groups: tuple[GroupView, ...]
    users: tuple[UserView, ...]
    groups_path: Optional[Path]  # the groups list; None: not written, az-hop's defaults apply
    group_ref: Literal["gid", "name"]  # how users name their groups in this file
    groups_key: str  # "usergroups" / "azhop.groups", for messages


def judge_identities(view: IdentitiesView) -> Iterator[Finding]:
    gids: dict[int, str] = {}
    for group in view.groups:
        if group.gid is None:
            continue
        if group.gid in gids:
            yield Finding(group.gid_path, f"gid {group.gid} is already used by {gids[group.gid]}", "give each group its own gid")
        gids.setdefault(group.gid, group.label)
    if view.groups_path is not None:
        yield from _missing_builtin_gids(view, gids)
    defined: set[Union[int, str]] = set(gids) if view.group_ref == "gid" else {g.name for g in view.groups if g.name}
    uids: dict[int, str] = {}
    names: dict[str, str] = {}
    for user in view.users:
        if user.uid is not None:
            if user.uid in uids:
                yield Finding(user.uid_path, f"uid {user.uid} is already used by {uids[user.uid]}", "give each user its own uid")
            uids.setdefault(user.uid, user.label)
        if user.name is not None:
            if user.name in names:
                yield Finding(user.name_path, f"user '{user.name}' is already defined by {names[user.name]}", "list each user once")
            names.setdefault(user.name, user.label)
        for ref, path in user.groups:
            if defined and ref not in defined:
                what = f"gid {ref}" if view.group_ref == "gid" else f"group '{ref}'"
                yield Finding(path, f"user '{user.name}' joins {what}, which {view.groups_key} does not define",
                              f"define it in {view.groups_key}, or use one of: {', '.join(map(str, sorted(defined, key=str)))}")


def _missing_builtin_gids(view: IdentitiesView, gids: dict[int, str]) -> Iterator[Finding]:
    assert view.groups_path is not None
    for gid, severity in BUILTIN_GID_SEVERITY.items():
        if gid not in gids:
            yield Finding(view.groups_path, f"no {view.groups_key} entry has gid {gid} ({kb.BUILTIN_GIDS[gid]}): "
                                            f"az-hop uses that gid as {BUILTIN_GID_EFFECT[gid]}",
                          "keep az-hop's gids 5000, 5001 and 5002 (the names may change)", severity, prefer_value=False)


# -- AZH002 queue names, AZH012 queue limits -----------------------------------------------------------

@dataclass(frozen=True)
class QueueView:
    """One queue (a spec pool or extra queue, a config.yml ``queues`` entry) and where its keys are."""

    name: Optional[str]
    label: str  # "queues[1]", "pools[0]", "azhop.extra_queues[1]"
    path: Path  # the entry
    keys: dict[str, Any]  # view field -> source path of the key as written (absent keys are missing)
    max_nodes: Optional[int] = None
    max_count: Optional[int] = None
    max_core_count: Optional[int] = None
    initial_count: Optional[int] = None
    idle_timeout: Optional[int] = None
    type: str = "compute"
    colocate: bool = False
    location: Optional[str] = None
    subnet: Optional[str] = None
    max_scale_set: Optional[int] = None
    has_limit: bool = True  # max_count or max_core_count is written (a wrong type is AZH001's)
    duplicate_reported_elsewhere: bool = False  # spec pools: two pools with one name are HPC008

    def at(self, key: str) -> Path:
        return self.keys.get(key, self.keys.get("name", self.path))


@dataclass(frozen=True)
class QueuesView:
    queues: tuple[QueueView, ...]
    queue_manager: str
    autoscale_idle_timeout: Optional[int]
    idle_timeout_key: str  # "autoscale.idle_timeout" / "autoscale_idle_timeout", for messages
    default_queue: Optional[tuple[str, Path]] = None


def judge_queue_names(view: QueuesView) -> Iterator[Finding]:
    seen: dict[str, str] = {}
    for queue in view.queues:
        name = queue.name
        if name is None:
            continue
        path = queue.at("name")
        if len(name) > kb.QUEUE_NAME_MAX and name not in kb.SPECIAL_QUEUE_NAMES:
            yield Finding(path, f"queue name '{name}' is {len(name)} characters; az-hop queue names are at most "
                                f"{kb.QUEUE_NAME_MAX} (the schema's limit of 9 is off by one)",
                          "shorten it: hostnames <name>-pg0-<n> are cut at 15 characters (az-hop #1191)")
        elif queue.max_nodes is not None:
            host = kb.longest_hostname(name, queue.max_nodes, queue.colocate and view.queue_manager == "slurm")
            if len(host) > kb.HOSTNAME_MAX:
                yield Finding(path, f"node hostname '{host}' of queue '{name}' is {len(host)} characters; "
                                    f"Windows/AD hostnames stop at {kb.HOSTNAME_MAX}",
                              "shorten the queue name or lower its node limit")
        if name in seen and not queue.duplicate_reported_elsewhere:
            yield Finding(path, f"queue name '{name}' is used twice (already by {seen[name]})",
                          "give each queue its own name: it is the nodearray and the partition")
        seen.setdefault(name, queue.label)
    if view.default_queue is not None and view.default_queue[0] not in seen:
        yield Finding(view.default_queue[1], f"default_queue '{view.default_queue[0]}' is not a queue",
                      f"use one of: {', '.join(seen)}")


def judge_queue_limits(view: QueuesView) -> Iterator[Finding]:
    for queue in view.queues:
        yield from _queue_limits(view, queue)


def _queue_limits(view: QueuesView, queue: QueueView) -> Iterator[Finding]:
    name, slurm = queue.name, view.queue_manager == "slurm"
    if not queue.has_limit:
        yield Finding(queue.at("name"), f"queue '{name}' sets neither max_count nor max_core_count",
                      "add max_count (nodes; 0 disables the queue)")
    for key in ("max_count", "max_core_count", "initial_count"):
        value = getattr(queue, key)
        if value is not None and value < 0:
            yield Finding(queue.at(key), f"{key} {value} is negative", "use 0 or more", Severity.ERROR)
    cluster_idle = view.autoscale_idle_timeout
    if queue.idle_timeout is not None and cluster_idle is not None and queue.idle_timeout >= cluster_idle:
        yield Finding(queue.at("idle_timeout"), f"idle_timeout {queue.idle_timeout} is not below {view.idle_timeout_key} {cluster_idle}",
                      "a queue's idle_timeout must be lower than the cluster-wide one to have an effect")
    if queue.type == "login":
        if not slurm:
            yield Finding(queue.at("type"), "login queues work only with Slurm; the OpenPBS template makes them execute nodes",
                          "remove the login queue or use queue_manager: slurm")
        if queue.initial_count is None:
            yield Finding(queue.at("type"), "a login queue needs initial_count (az-hop has no default)",
                          "add initial_count: 1", Severity.ERROR)
    if view.queue_manager == "openpbs" and queue.colocate:
        yield Finding(queue.at("colocate"), "ColocateNodes: true has no effect with OpenPBS (Slurm only)",
                      "remove it, or use Slurm for InfiniBand placement")
    if queue.location and not queue.subnet:
        yield Finding(queue.at("location"), "a queue in another location needs subnet: <resource_group>/<vnet>/<subnet>",
                      "add the remote subnet", Severity.ERROR)
    if queue.subnet is not None and (queue.subnet.count("/") != 2 or not all(queue.subnet.split("/"))):
        yield Finding(queue.at("subnet"), f"subnet '{queue.subnet}' is not <resource_group>/<vnet>/<subnet>",
                      "write the remote subnet as rg/vnet/subnet", Severity.ERROR)
    if queue.max_scale_set is not None and queue.max_scale_set > 100:
        yield Finding(queue.at("max_scale_set"), f"MaxScaleSetSize {queue.max_scale_set} is above Azure's default limit of 100",
                      "this needs a quota raise through a support ticket", Severity.INFO)


# -- AZH010 image references ---------------------------------------------------------------------------

@dataclass(frozen=True)
class ImageRefsView:
    images: tuple[tuple[str, Path], ...] = ()  # (image string, where it was written or its default applies)
    plans: tuple[tuple[str, Path], ...] = field(default_factory=tuple)


def judge_image_refs(view: ImageRefsView) -> Iterator[Finding]:
    for image, path in view.images:
        _, problem = kb.parse_image(image)
        if problem:
            yield Finding(path, f"image: {problem}",
                          "publisher:offer:sku:version (az-hop splits marketplace images on ':'), or /subscriptions/.../images/...")
    for plan, path in view.plans:
        problem = kb.plan_problem(plan)
        if problem:
            yield Finding(path, problem, "the plan's publisher:product:name (accept its terms first)")
