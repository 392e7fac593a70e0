"""Volcano's job admission webhook, mutate then validate, transcribed from upstream.

Sources (volcano-sh/volcano, tag v1.15.1; release-1.7 to v1.14 differ only where noted):
``pkg/webhooks/admission/jobs/mutate/mutate_job.go`` (``createPatch``: default queue, maxRetry, task
names, task and job minAvailable, the svc/ssh plugins), ``pkg/webhooks/admission/jobs/validate/admit_job.go``
(``validateJobCreate``, ``validatePartitionPolicy``, ``validateNetworkTopology``, ``validateTaskTopoPolicy``)
and ``validate/util.go`` (``validateIO``, ``topoSort``), ``pkg/controllers/job/plugins/factory.go`` (the plugin
names) and ``pkg/controllers/job/plugins/distributed-framework/mpi/mpi.go`` (``--master``, default ``master``).

Every function takes the job as parsed YAML (plain dicts and lists) and returns what the webhook
would say, with the YAML path it is about, so lint can place it at file:line. Messages quote
upstream's wording. Nothing here guesses about the cluster: queues are what the caller knows.
"""

from __future__ import annotations

import copy
import re
from dataclasses import dataclass
from decimal import Decimal, InvalidOperation
from typing import Any, Iterator, Mapping, Optional

from .k8s_validation import is_integer_resource
from .versions import version_key

Path = tuple[Any, ...]

DEFAULT_QUEUE = "default"  # mutate_job.go DefaultQueue; Volcano's chart creates this queue
DEFAULT_MAX_RETRY = 3
DEFAULT_TASK_PREFIX = "default"  # v1alpha1.DefaultTaskSpec: an unnamed task i becomes "default<i>"
MPI_DEFAULT_MASTER = "master"
# A task without ``replicas`` has none: TaskSpec.Replicas is a plain int32 (``json:"replicas,omitempty"``,
# staging/src/volcano.sh/apis/pkg/apis/batch/v1alpha1/job.go), the CRD gives it no default (only minimum: 0),
# mutate_job.go fills minAvailable from it but never sets it, and the controller creates ``Replicas`` pods
# (job_controller_actions.go, ``for i := 0; i < int(ts.Replicas); i++``): such a task starts no pod.
UNSET_TASK_REPLICAS = 0

# factory.go RegisterPluginBuilder: hcclrank and ray were added in v1.13.0.
PLUGINS_BEFORE_113 = frozenset({"ssh", "env", "svc", "tensorflow", "mpi", "pytorch"})
PLUGINS_FROM_113 = PLUGINS_BEFORE_113 | {"hcclrank", "ray"}
SVC_PLUGIN_FRAMEWORKS = ("tensorflow", "mpi", "pytorch", "ray")  # patchDefaultPlugins adds svc for these

DNS_1123_SUBDOMAIN = re.compile(r"^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$")
DNS_1123_SUBDOMAIN_MAX = 253


@dataclass(frozen=True)
class Rejection:
    """One reason the webhook refuses the job: the check (a rule's topic), where, and upstream's words."""

    check: str
    path: Path
    message: str


@dataclass(frozen=True)
class QueueFacts:
    """Queues known from Queue manifests of the same deployment (name -> parent, state)."""

    parents: Mapping[str, str]
    states: Mapping[str, str]

    def children(self, name: str) -> list[str]:
        return sorted(q for q, parent in self.parents.items() if parent == name)


def _dict(value: Any) -> dict[str, Any]:
    return value if isinstance(value, dict) else {}


def _int(value: Any, default: int = 0) -> int:
    if isinstance(value, bool):
        return default
    if isinstance(value, int):
        return value
    try:
        return int(str(value).strip())
    except (TypeError, ValueError):
        return default


def _tasks(job: Mapping[str, Any]) -> list[tuple[int, dict[str, Any]]]:
    tasks = _dict(job.get("spec")).get("tasks")
    return [(i, t) for i, t in enumerate(tasks) if isinstance(t, dict)] if isinstance(tasks, list) else []


def known_plugins(volcano_version: Optional[str]) -> frozenset[str]:
    if volcano_version is not None and version_key(volcano_version) < (1, 13, 0):
        return PLUGINS_BEFORE_113
    return PLUGINS_FROM_113


# -- mutate ----------------------------------------------------------------------------------------
def mutate(job: Mapping[str, Any]) -> dict[str, Any]:
    """The job as the mutating webhook leaves it (``createPatch``), for the validating webhook to judge."""
    out = copy.deepcopy(dict(job))
    spec = out.get("spec")
    if not isinstance(spec, dict):
        return out
    if not spec.get("queue"):
        spec["queue"] = DEFAULT_QUEUE
    if not _int(spec.get("maxRetry")):
        spec["maxRetry"] = DEFAULT_MAX_RETRY
    job_min = 0
    for index, task in _tasks(out):
        if not task.get("name"):
            task["name"] = f"{DEFAULT_TASK_PREFIX}{index}"
        template_spec = _dict(_dict(task.get("template")).get("spec"))
        if template_spec.get("hostNetwork") is True and not template_spec.get("dnsPolicy"):
            template_spec["dnsPolicy"] = "ClusterFirstWithHostNet"
        if task.get("minAvailable") is None:
            partition = _dict(task.get("partitionPolicy"))
            if _int(partition.get("minPartitions")) > 0:
                task["minAvailable"] = _int(partition.get("minPartitions")) * _int(partition.get("partitionSize"))
            else:
                task["minAvailable"] = _int(task.get("replicas"), UNSET_TASK_REPLICAS)
        if not _int(task.get("maxRetry")):
            task["maxRetry"] = DEFAULT_MAX_RETRY
        job_min += _int(task.get("minAvailable"))
    if not _int(spec.get("minAvailable")):
        spec["minAvailable"] = job_min
    plugins = spec.get("plugins")
    if isinstance(plugins, dict):
        if any(name in plugins for name in SVC_PLUGIN_FRAMEWORKS):
            plugins.setdefault("svc", [])
        if "mpi" in plugins:
            plugins.setdefault("ssh", [])
    return out


# -- validate --------------------------------------------------------------------------------------
def validate_create(job: Mapping[str, Any], *, volcano_version: Optional[str] = None,
                    queues: Optional[QueueFacts] = None) -> list[Rejection]:
    """What ``validateJobCreate`` refuses, in its order (the lifecycle policies, duplicate task names,
    minAvailable and name checks live in hpcconf's older VOL rules and are not repeated here)."""
    spec = _dict(job.get("spec"))
    if not _tasks(job):
        return [Rejection("no-tasks", ("spec", "tasks"), "No task specified in job spec")]
    found: list[Rejection] = []
    found += _mpi_master(job, spec)
    found += _network_topology(spec.get("networkTopology"), ("spec", "networkTopology"))
    job_name = str(_dict(job.get("metadata")).get("name") or "")
    for index, task in _tasks(job):
        found += _partition_policy(task, index, job_name)
        found += _topology_policy(task, index)
    found += _plugins(spec, volcano_version)
    found += _volumes(spec)
    found += _queue(spec, queues)
    found += _dependencies(job)
    return found


def _mpi_master(job: Mapping[str, Any], spec: dict[str, Any]) -> list[Rejection]:
    plugins = _dict(spec.get("plugins"))
    if "mpi" not in plugins:
        return []
    master = MPI_DEFAULT_MASTER
    args = [str(a) for a in plugins.get("mpi") or []]
    for index, text in enumerate(args):  # Go's flag package: -master=x, --master=x, -master x, --master x
        for flag in ("--master", "-master"):
            if text.startswith(flag + "="):
                master = text[len(flag) + 1:]
            elif text == flag and index + 1 < len(args):
                master = args[index + 1]
    if any(str(task.get("name")) == master for _, task in _tasks(job)):
        return []
    return [Rejection("mpi-master", ("spec", "plugins", "mpi"),
                      f"The specified mpi master task was not found (the mpi plugin's master is '{master}')")]


def _network_topology(value: Any, path: Path) -> list[Rejection]:
    topology = _dict(value)
    if topology.get("highestTierAllowed") is not None and topology.get("highestTierName"):
        return [Rejection("network-topology", path, "must not specify 'highestTierAllowed' and 'highestTierName' "
                                                    "in networkTopology simultaneously")]
    return []


def _partition_policy(task: dict[str, Any], index: int, job_name: str) -> list[Rejection]:
    partition = task.get("partitionPolicy")
    if not isinstance(partition, dict):
        return []
    path: Path = ("spec", "tasks", index, "partitionPolicy")
    name = task.get("name")
    where = f"in task: {name}, job: {job_name}"
    total, size = _int(partition.get("totalPartitions")), _int(partition.get("partitionSize"))
    replicas, minimum = _int(task.get("replicas"), UNSET_TASK_REPLICAS), task.get("minAvailable")
    message = ""
    if total <= 0:
        message = f"'TotalPartitions' must be greater than 0 {where}"
    elif size <= 0:
        message = f"'PartitionSize' must be greater than 0 {where}"
    elif replicas != total * size:
        message = f"'Replicas' are not equal to TotalPartitions*PartitionSize {where} ({replicas} != {total}*{size})"
    elif minimum is not None and _int(partition.get("minPartitions")) > 0 \
            and _int(partition.get("minPartitions")) * size != _int(minimum):
        message = f"'MinAvailable' is not equal to MinPartitions*PartitionSize {where}"
    found = [Rejection("partition-policy", path, message)] if message else []
    return found + _network_topology(partition.get("networkTopology"), path + ("networkTopology",))


def _topology_policy(task: dict[str, Any], index: int) -> list[Rejection]:
    if str(task.get("topologyPolicy") or "none") == "none":
        return []
    spec = _dict(_dict(task.get("template")).get("spec"))
    containers = [c for c in (spec.get("containers") or []) if isinstance(c, dict)]
    containers += [c for c in (spec.get("initContainers") or []) if isinstance(c, dict)]
    for number, container in enumerate(containers):
        resources = _dict(container.get("resources"))
        requests = _dict(resources.get("requests")) or _dict(resources.get("limits"))
        if not _whole_cpus(requests.get("cpu")):
            return [Rejection("topology-policy", ("spec", "tasks", index, "topologyPolicy"),
                              f"the cpu request isn't  an integer in spec.task[{index}] container[{number}].")]
    return []


def _whole_cpus(value: Any) -> bool:
    """guaranteedCPUs != 0: a CPU quantity of at least one whole core and no fraction."""
    if value is None:
        return False
    text = str(value).strip()
    try:
        cores = Decimal(text[:-1]) / 1000 if text.endswith("m") else Decimal(text)
    except InvalidOperation:
        return False
    return cores >= 1 and cores == cores.to_integral_value()


def _plugins(spec: dict[str, Any], volcano_version: Optional[str]) -> list[Rejection]:
    known = known_plugins(volcano_version)
    return [Rejection("plugin", ("spec", "plugins", name), f"unable to find job plugin: {name}")
            for name in _dict(spec.get("plugins")) if name not in known]


def _volumes(spec: dict[str, Any]) -> list[Rejection]:
    """``validateIO``: stops at the first bad volume, as upstream does."""
    seen: set[str] = set()
    volumes = spec.get("volumes")
    for index, volume in enumerate(volumes if isinstance(volumes, list) else []):
        volume = _dict(volume)
        path: Path = ("spec", "volumes", index)
        mount = str(volume.get("mountPath") or "")
        claim, claim_name = volume.get("volumeClaim"), str(volume.get("volumeClaimName") or "")
        if not mount:
            return [Rejection("volume", path, "mountPath is required")]
        if mount in seen:
            return [Rejection("volume", path + ("mountPath",), f"duplicated mountPath: {mount}")]
        if claim is None and not claim_name:
            return [Rejection("volume", path, "either VolumeClaim or VolumeClaimName must be specified")]
        if claim_name and claim is not None:
            return [Rejection("volume", path, "conflict: If you want to use an existing PVC, just specify "
                                              "VolumeClaimName.If you want to create a new PVC, you do not need to "
                                              "specify VolumeClaimName")]
        if claim_name and (len(claim_name) > DNS_1123_SUBDOMAIN_MAX or not DNS_1123_SUBDOMAIN.match(claim_name)):
            return [Rejection("volume", path + ("volumeClaimName",),
                              f"invalid VolumeClaimName {claim_name} : a lowercase RFC 1123 subdomain is required")]
        seen.add(mount)
    return []


def _queue(spec: dict[str, Any], queues: Optional[QueueFacts]) -> list[Rejection]:
    name = str(spec.get("queue") or "")
    path: Path = ("spec", "queue")
    if name == "root":
        return [Rejection("queue", path, "can not submit job to root queue")]
    if queues is None:
        return []
    state = queues.states.get(name)
    found = []
    if state is not None and state != "Open":
        found.append(Rejection("queue", path, f"can only submit job to queue with state `Open`, queue `{name}` "
                                              f"status is `{state}`"))
    children = queues.children(name)
    if children:
        found.append(Rejection("queue", path, f"can only submit job to leaf queue, queue `{name}` has "
                                              f"{len(children)} child queues"))
    return found


def _dependencies(job: Mapping[str, Any]) -> list[Rejection]:
    """``topoSort``: every task must be reachable from tasks without dependencies; a name that is not a
    task never gets its in-degree back to 0, so it is refused like a cycle."""
    tasks = _tasks(job)
    depends = {str(t.get("name")): [str(n) for n in (_dict(t.get("dependsOn")).get("name") or [])]
               for _, t in tasks}  # a name listed twice counts twice in the in-degree, once as an edge (makeGraph)
    if not any(_dict(t.get("dependsOn")) for _, t in tasks):
        return []
    remaining = {name: len(deps) for name, deps in depends.items()}
    ready = [name for name, count in remaining.items() if count == 0]
    done = 0
    while ready:
        current = ready.pop()
        done += 1
        for name, deps in depends.items():
            if current in deps:
                remaining[name] -= 1
                if remaining[name] == 0:
                    ready.append(name)
    if done == len(depends):
        return []
    index = next(i for i, t in tasks if remaining.get(str(t.get("name")), 0) > 0)
    unknown = sorted({d for deps in depends.values() for d in deps if d not in depends})
    detail = f" (no task named {', '.join(unknown)})" if unknown else ""
    return [Rejection("dependencies", ("spec", "tasks", index, "dependsOn"),
                      "job has dependencies between tasks, but doesn't form a directed acyclic graph(DAG)" + detail)]


def validate_podgroup(podgroup: Mapping[str, Any], *, queues: Optional[QueueFacts] = None) -> list[Rejection]:
    """``validatePodGroup`` (pkg/webhooks/admission/podgroups/validate/validate_podgroup.go, v1.15.1): the
    queue must be Open, and no network topology may set both tier limits."""
    spec = _dict(podgroup.get("spec"))
    found = _network_topology(spec.get("networkTopology"), ("spec", "networkTopology"))
    for index, policy in enumerate(spec.get("subGroupPolicy") or []):
        found += _network_topology(_dict(policy).get("networkTopology"),
                                   ("spec", "subGroupPolicy", index, "networkTopology"))[:1]
    name = str(spec.get("queue") or "")
    state = queues.states.get(name) if queues is not None and name else None
    if state is not None and state != "Open":
        found.append(Rejection("queue", ("spec", "queue"), f"can only submit PodGroup to queue with state `Open`, "
                                                           f"queue `{name}` status is `{state}`"))
    return found


def rejections(job: Mapping[str, Any], **kwargs: Any) -> Iterator[Rejection]:
    """Mutate, then validate: what ``kubectl apply`` of this job gets back from Volcano."""
    yield from validate_create(mutate(job), **kwargs)


# -- Queue and HyperNode webhooks ------------------------------------------------------------------
# pkg/webhooks/admission/queues/{mutate/mutate_queue.go,validate/validate_queue.go} and
# pkg/webhooks/admission/hypernodes/validate/admit_hypernode.go, v1.15.1; the annotation keys from
# staging/src/volcano.sh/apis/pkg/apis/scheduling/v1beta1/labels.go.
HIERARCHY_ANNOTATION = "volcano.sh/hierarchy"
HIERARCHY_WEIGHT_ANNOTATION = "volcano.sh/hierarchy-weights"
# The Queue CRD's pattern for a quantity (config/crd/volcano/bases/scheduling.volcano.sh_queues.yaml, v1.15.1).
QUANTITY_PATTERN = (r"^(\+|-)?(([0-9]+(\.[0-9]*)?)|(\.[0-9]+))(([KMGTPE]i)|[numkMGTPE]|([eE](\+|-)?(([0-9]+(\.[0-9]*)?)"
                    r"|(\.[0-9]+))))?$")
def mutate_queue(queue: Mapping[str, Any]) -> dict[str, Any]:
    """``createQueuePatch``: ``reclaimable: true`` and ``weight: 1`` when unset; a hierarchy annotation pair
    not rooted at ``root`` gets ``root/`` and ``1/`` prefixed."""
    out = copy.deepcopy(dict(queue))
    metadata = out.get("metadata")
    annotations = _dict(metadata.get("annotations")) if isinstance(metadata, dict) else {}
    hierarchy = str(annotations.get(HIERARCHY_ANNOTATION) or "")
    weights = str(annotations.get(HIERARCHY_WEIGHT_ANNOTATION) or "")
    if hierarchy and weights and not hierarchy.startswith("root"):
        annotations[HIERARCHY_ANNOTATION] = f"root/{hierarchy}"
        annotations[HIERARCHY_WEIGHT_ANNOTATION] = f"1/{weights}"
    spec = out.setdefault("spec", {})
    if not isinstance(spec, dict):
        return out
    if spec.get("reclaimable") is None:
        spec["reclaimable"] = True
    if not _int(spec.get("weight")):
        spec["weight"] = 1
    return out


def _quantity(value: Any) -> Optional[Decimal]:
    """The value of a quantity the CRD's pattern admits (``100n``, ``2Gi``, ``1e3``, ``8``); None otherwise."""
    text = str(value).strip() if isinstance(value, (int, str)) and not isinstance(value, bool) else ""
    if not re.fullmatch(QUANTITY_PATTERN, text):
        return None
    if text[-1:] in ("n", "u"):  # the two suffixes below milli that k8s_quantity leaves out
        return Decimal(text[:-1]) * (Decimal("1e-9") if text[-1] == "n" else Decimal("1e-6"))
    from .k8s_quantity import parse_quantity

    return parse_quantity(text)


def _printed(value: Any) -> str:
    return str(value).strip()


def validate_queue(queue: Mapping[str, Any], volcano_version: Optional[str] = None) -> list[Rejection]:
    """What ``AdmitQueues`` refuses on a create that the Queue itself shows (``validateQueue``: the resource
    quantities, deserved against guarantee and capability, the hierarchy annotations; ``validateHierarchicalQueue``:
    a queue that is its own parent). The checks against other queues (the parent's existence, depth, allocated
    pods, sibling sums, ancestors' capability) need the cluster's queues and are not made here. ``status.state``
    is not judged: the API server drops ``status`` on a create (the CRD has a status subresource).

    Before v1.15 the checks differ (``volcano_version``; None: v1.15.1's): up to v1.13 a weight that is not
    positive (``validateWeightOfQueue``); v1.13 and v1.14 compare whole resource lists (``validateResourceOfQueue``,
    ``LessPartly`` with absent resources as zero); the quantity checks and the own-parent check start at v1.14."""
    queue = mutate_queue(queue)
    spec = _dict(queue.get("spec"))
    version = version_key(volcano_version) if volcano_version else (1, 15, 1)
    if version < (1, 15):
        return _validate_queue_before_115(queue, spec, version)
    found: list[Rejection] = []
    base = "requestBody.spec"
    amounts: dict[str, dict[str, Decimal]] = {"capability": {}, "deserved": {}, "guarantee": {}}
    groups = (("capability", ("spec", "capability"), _dict(spec.get("capability"))),
              ("deserved", ("spec", "deserved"), _dict(spec.get("deserved"))),
              ("guarantee", ("spec", "guarantee", "resource"), _dict(_dict(spec.get("guarantee")).get("resource"))))
    for group, path, values in groups:
        shown = f"{base}.{'.'.join(path[1:])}"
        for name, value in values.items():
            if isinstance(value, (dict, list, bool)) or value is None:
                continue  # the CRD schema's finding (K8S041)
            amount = _quantity(value)
            if amount is None:
                # The CRD's own pattern refuses it before the webhook runs (the API server's wording).
                dotted = ".".join(str(part) for part in path + (name,))
                found.append(Rejection("quantity-format", path + (name,), f"{dotted}: Invalid value: \"{value}\": "
                                       f"{dotted} in body should match '{QUANTITY_PATTERN}'"))
                continue
            amounts[group][str(name)] = amount
            if amount < 0:
                found.append(Rejection("quantity", path + (name,), f"{shown}.{name}: Invalid value: \"{value}\": "
                                       "must be greater than or equal to 0"))
            elif is_integer_resource(str(name)) and amount != amount.to_integral_value():
                found.append(Rejection("quantity", path + (name,), f"{shown}.{name}: Invalid value: \"{value}\": "
                                       "must be an integer"))
    deserved_raw = _dict(spec.get("deserved"))
    guarantee_raw = _dict(_dict(spec.get("guarantee")).get("resource"))
    capability_raw = _dict(spec.get("capability"))
    for name, guarantee in amounts["guarantee"].items():
        shown_g = _printed(guarantee_raw[name])
        if name not in deserved_raw:
            found.append(Rejection("resources", ("spec", "guarantee", "resource", name),
                                   f"{base}.deserved.{name}: Invalid value: \"<nil>\": deserved[{name}] must be >= "
                                   f"guarantee[{name}]={shown_g}"))
        elif name in amounts["deserved"] and amounts["deserved"][name] < guarantee:
            shown_d = _printed(deserved_raw[name])
            found.append(Rejection("resources", ("spec", "deserved", name),
                                   f"{base}.deserved.{name}: Invalid value: \"{shown_d}\": deserved[{name}]={shown_d} "
                                   f"must be >= guarantee[{name}]={shown_g}"))
    for name, deserved in amounts["deserved"].items():
        if name in amounts["capability"] and deserved > amounts["capability"][name]:
            shown_d, shown_c = _printed(deserved_raw[name]), _printed(capability_raw[name])
            found.append(Rejection("resources", ("spec", "deserved", name),
                                   f"{base}.deserved.{name}: Invalid value: \"{shown_d}\": deserved[{name}]={shown_d} "
                                   f"must be <= capability[{name}]={shown_c}"))
    found += _hierarchy_annotations(queue)
    name = str(_dict(queue.get("metadata")).get("name") or "")
    parent = str(spec.get("parent") or "")
    if parent and parent != "root" and parent == name:
        found.append(Rejection("parent", ("spec", "parent"), f"queue {name} cannot use itself as parent"))
    return found


def _validate_queue_before_115(queue: Mapping[str, Any], spec: Mapping[str, Any], version: tuple[Any, ...]
                               ) -> list[Rejection]:
    found: list[Rejection] = []
    if version < (1, 14) and _int(spec.get("weight"), 1) <= 0:
        found.append(Rejection("resources", ("spec", "weight"), f"requestBody.spec.weight: Invalid value: "
                               f"{spec.get('weight')}: queue weight must be a positive integer"))
    lists = {key: {str(n): _quantity(v) for n, v in values.items()}
             for key, values in (("capability", _dict(spec.get("capability"))),
                                 ("deserved", _dict(spec.get("deserved"))),
                                 ("guarantee", _dict(_dict(spec.get("guarantee")).get("resource"))))}
    if version >= (1, 14):
        for key, path in (("capability", ("spec", "capability")), ("deserved", ("spec", "deserved")),
                          ("guarantee", ("spec", "guarantee", "resource"))):
            for name, amount in lists[key].items():
                where = "requestBody." + ".".join(path) + f".{name}"
                if amount is not None and amount < 0:
                    found.append(Rejection("quantity", path + (name,), f"{where}: Invalid value: \"{amount}\": "
                                           "must be greater than or equal to 0"))
                elif amount is not None and is_integer_resource(name) and amount != amount.to_integral_value():
                    found.append(Rejection("quantity", path + (name,), f"{where}: Invalid value: \"{amount}\": "
                                           "must be an integer"))
    if version >= (1, 13):
        def exceeds(small: str, big: str) -> Optional[str]:
            """A resource of ``small`` above ``big``'s (absent from ``big``: zero), as ``LessPartly`` finds it."""
            return next((n for n, a in lists[small].items()
                         if a is not None and n != "pods" and a > (lists[big].get(n) or 0)), None)
        pairs = (("deserved", "capability", "deserved should less equal than capability"),
                 ("guarantee", "capability", "guarantee should less equal than capability"),
                 ("guarantee", "deserved", "guarantee should less equal than deserved"))
        for small, big, words in pairs:
            over = exceeds(small, big) if lists[big] else None
            if over is not None:
                at: Path = ("spec", "deserved", over) if small == "deserved" else \
                    ("spec", "guarantee", "resource", over)
                found.append(Rejection("resources", at, f"requestBody.spec.{small}: Invalid value: {words}"))
                break  # validateResourceOfQueue returns at the first
    found += _hierarchy_annotations(queue)
    name = str(_dict(queue.get("metadata")).get("name") or "")
    parent = str(spec.get("parent") or "")
    if version >= (1, 14) and parent and parent != "root" and parent == name:
        found.append(Rejection("parent", ("spec", "parent"), f"queue {name} cannot use itself as parent"))
    return found


def _hierarchy_annotations(queue: Mapping[str, Any]) -> list[Rejection]:
    annotations = _dict(_dict(queue.get("metadata")).get("annotations"))
    hierarchy = str(annotations.get(HIERARCHY_ANNOTATION) or "")
    weights = str(annotations.get(HIERARCHY_WEIGHT_ANNOTATION) or "")
    if not hierarchy and not weights:
        return []
    shown = "requestBody.metadata.annotations"
    if len(hierarchy.split("/")) != len(weights.split("/")):
        key = HIERARCHY_ANNOTATION if HIERARCHY_ANNOTATION in annotations else HIERARCHY_WEIGHT_ANNOTATION
        return [Rejection("hierarchy", ("metadata", "annotations", key),
                          f"{shown}: Invalid value: \"{hierarchy}\": {HIERARCHY_ANNOTATION} must have the same length "
                          f"with {HIERARCHY_WEIGHT_ANNOTATION}")]
    for weight in weights.split("/"):
        number = _go_float(weight)
        if number is None:
            return [Rejection("hierarchy", ("metadata", "annotations", HIERARCHY_WEIGHT_ANNOTATION),
                              f"{shown}: Invalid value: \"{weights}\": {weight} in the {weights} is invalid "
                              f"number: strconv.ParseFloat: parsing \"{weight}\": invalid syntax")]
        if number <= 0:  # as Go's `weightFloat <= 0`: NaN passes
            return [Rejection("hierarchy", ("metadata", "annotations", HIERARCHY_WEIGHT_ANNOTATION),
                              f"{shown}: Invalid value: \"{weights}\": {weight} in the {weights} must be larger than 0")]
    return []


GO_FLOAT = re.compile(r"^[+-]?(?:(?:\d+\.?\d*|\.\d+)(?:[eE][+-]?\d+)?|inf|infinity|nan)$", re.IGNORECASE)


def _go_float(text: str) -> Optional[float]:
    """``strconv.ParseFloat(text, 64)`` for decimal text (no surrounding spaces, ``Inf``/``NaN`` allowed); None
    where Go refuses it (underscores need a base prefix there). Hex floats are left out (None): no one writes a
    queue weight in hex."""
    if not GO_FLOAT.match(text):
        return None
    try:
        return float(text)
    except ValueError:
        return None


def validate_hypernode(hypernode: Mapping[str, Any]) -> list[Rejection]:
    """``validateHyperNode``: at least one member; each ``regexMatch.pattern`` a valid regular expression (Go's
    ``regexp`` syntax, RE2's, checked with google-re2; not judged when it is not installed)."""
    spec = _dict(hypernode.get("spec"))
    members = spec.get("members")
    if not isinstance(members, list) or not members:
        where = ("spec", "members") if "members" in spec else ("spec",)
        return [Rejection("members", where, "spec.members: Invalid value: null: member must have at least one member")]
    found: list[Rejection] = []
    for index, member in enumerate(members):
        pattern = _dict(_dict(_dict(member).get("selector")).get("regexMatch")).get("pattern")
        if not isinstance(pattern, str) or not pattern:
            continue
        error = _re2_error(pattern)
        if error:
            found.append(Rejection("members", ("spec", "members", index, "selector", "regexMatch", "pattern"),
                                   f"spec.members.selector.regexMatch.pattern: Invalid value: \"{pattern}\": member "
                                   f"regexMatch pattern is invalid: {error}"))
    return found


def _re2_error(pattern: str) -> str:
    """Why RE2 refuses ``pattern`` ("" when it compiles, or when google-re2 is missing)."""
    try:
        import re2  # type: ignore[import-untyped]  # google-re2, installed with cel-python (no type stubs)
    except ImportError:
        return ""
    options = re2.Options()
    options.log_errors = False  # RE2 would print its own line on stderr
    try:
        re2.compile(pattern, options)
    except Exception as error:  # noqa: BLE001  (re2.error and friends: the message is what we report)
        detail = error.args[0] if error.args else ""
        detail = detail.decode("utf-8", "replace") if isinstance(detail, bytes) else str(detail)
        return f"error parsing regexp: {detail}" if detail else "invalid regular expression"
    return ""


def queue_over_ancestor(queue: Mapping[str, Any], queues: Mapping[str, Mapping[str, Any]]) -> list[Rejection]:
    """``validateChildAgainstAncestor`` (validate_queue.go, v1.15.1): each resource of the queue's ``capability``
    against the nearest ancestor that caps it, the ancestors being ``queues`` (name -> Queue, those linted with
    it). An ancestor outside ``queues`` ends the walk: the cluster's queues are not known."""
    spec = _dict(queue.get("spec"))
    name = str(_dict(queue.get("metadata")).get("name") or "")
    found: list[Rejection] = []
    for resource, value in _dict(spec.get("capability")).items():
        mine = _quantity(value)
        if mine is None:
            continue
        parent, seen = str(spec.get("parent") or ""), {name}
        while parent and parent != "root" and parent in queues and parent not in seen:
            seen.add(parent)
            ancestor = _dict(queues[parent].get("spec"))
            limit_text = _dict(ancestor.get("capability")).get(resource)
            limit = _quantity(limit_text) if limit_text is not None else None
            if limit is not None and limit > 0:
                if mine > limit:
                    found.append(Rejection("ancestor", ("spec", "capability", resource),
                                           f"queue {name} capability[{resource}]={_printed(value)} exceeds its "
                                           f"ancestor's capability={_printed(limit_text)}"))
                break
            parent = str(ancestor.get("parent") or "")
    return found
