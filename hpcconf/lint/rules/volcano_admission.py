"""Volcano admission (VOL020-VOL031): the rest of what the job webhook refuses, mutate then validate; the Queue
and HyperNode webhooks (VOL029-VOL031).

``hpcconf.knowledge.volcano_webhook`` transcribes ``pkg/webhooks/admission/jobs`` at v1.15.1; these
rules place its refusals at file:line. The checks VOL001/VOL002/VOL008/VOL009 already make
(duplicate tasks, minAvailable, names, lifecycle policies) are not repeated.
"""

from __future__ import annotations

from types import ModuleType
from typing import TYPE_CHECKING, Iterator, Optional

from ...artifacts import Kind
from ...diagnostics import Diagnostic, Severity
from ...knowledge.charts import newest_version
from ...parsers.k8s import as_dict
from ...rules_registry import rule
from ..context import LintContext
from ..crd_types import after_crd_types, crd_refuses_a_type
from ..document import Document, DocumentSet, per_deployment

if TYPE_CHECKING:
    from ...knowledge.volcano_webhook import QueueFacts, Rejection

JOB = (Kind.VOLCANO_JOB,)


def _webhook() -> ModuleType:
    """The webhook's transcription, imported with the first Volcano object judged (~15 ms: no lint of other files)."""
    from ...knowledge import volcano_webhook

    return volcano_webhook


QUEUE_API = "scheduling.volcano.sh/"


def _volcano_version(ctx: LintContext) -> Optional[str]:
    if ctx.cluster is not None and ctx.cluster.versions.volcano:
        return ctx.cluster.versions.volcano
    return ctx.charts.get("volcano") or newest_version("volcano")


def _is_podgroup(doc: Document) -> bool:
    data = doc.data if isinstance(doc.data, dict) else {}
    return data.get("kind") == "PodGroup" and str(data.get("apiVersion", "")).startswith(QUEUE_API)


def _refusals(doc: Document, ctx: LintContext, check: str,
              queues: Optional[QueueFacts] = None) -> Iterator[Rejection]:
    if not isinstance(doc.data, dict):
        return
    if doc.kind == Kind.K8S_MANIFEST:
        found_all = _webhook().validate_podgroup(doc.data, queues=queues) if _is_podgroup(doc) else []
    else:
        found_all = list(_webhook().rejections(doc.data, volcano_version=_volcano_version(ctx), queues=queues))
    for found in found_all:
        if found.check == check:
            yield found


def _report(doc: Document, ctx: LintContext, check: str, hint: str) -> Iterator[Diagnostic]:
    what = "PodGroup" if _is_podgroup(doc) else "job"
    for found in _refusals(doc, ctx, check):
        yield doc.at_path(found.path, f"Volcano's webhook refuses the {what}: {found.message}", hint=hint)


@rule(code="VOL020", name="job-without-tasks", severity=Severity.ERROR, admission=True, kinds=JOB)
@after_crd_types
def job_without_tasks(doc: Document, ctx: LintContext) -> Iterator[Diagnostic]:
    """A Volcano job with no tasks.

    ## What it catches
    ``spec.tasks`` missing or empty.

    ## Why is this bad?
    The webhook refuses it: "No task specified in job spec" (``validateJobCreate`` in
    volcano-sh/volcano ``pkg/webhooks/admission/jobs/validate/admit_job.go``, v1.15.1).

    ## Example
    ```yaml
    spec:
      minAvailable: 1
    ```

    ## Fix
    Add the job's ``tasks`` (a pod template and ``replicas`` each).
    """
    yield from _report(doc, ctx, "no-tasks", "add spec.tasks")


@rule(code="VOL021", name="mpi-master-task-missing", severity=Severity.ERROR, admission=True, kinds=JOB)
@after_crd_types
def mpi_master_task_missing(doc: Document, ctx: LintContext) -> Iterator[Diagnostic]:
    """The ``mpi`` plugin's master task is not a task of the job.

    ## What it catches
    ``plugins: {mpi: [...]}`` while no task is named like the plugin's master: ``master`` unless
    ``--master=<task>`` says otherwise (``distributed-framework/mpi/mpi.go``).

    ## Why is this bad?
    The webhook refuses the job: "The specified mpi master task was not found" (``admit_job.go``,
    v1.15.1). Jobs copied from examples that name their launcher ``mpimaster`` hit it.

    ## Example
    ```yaml
    plugins: {mpi: []}
    tasks: [{name: mpimaster, ...}, {name: mpiworker, ...}]
    ```

    ## Fix
    ``mpi: ["--master=mpimaster", "--worker=mpiworker"]``, or rename the launcher task ``master``.
    """
    yield from _report(doc, ctx, "mpi-master", "name the launcher task in --master=<task>")


@rule(code="VOL022", name="unknown-job-plugin", severity=Severity.ERROR, admission=True, kinds=JOB)
@after_crd_types
def unknown_job_plugin(doc: Document, ctx: LintContext) -> Iterator[Diagnostic]:
    """A job plugin the Volcano version does not have.

    ## What it catches
    A key of ``spec.plugins`` other than ``ssh env svc tensorflow mpi pytorch`` (and, from v1.13.0,
    ``hcclrank ray``): ``pkg/controllers/job/plugins/factory.go`` at each tag.

    ## Why is this bad?
    The webhook refuses the job: "unable to find job plugin: <name>" (``admit_job.go``). A plugin
    named in a newer example (``ray``) is refused by an older Volcano.

    ## Example
    ```yaml
    plugins: {ssh: [], svc: [], sshd: []}
    ```

    ## Fix
    Drop the plugin, or correct its name (``ssh``).
    """
    yield from _report(doc, ctx, "plugin", "use one of the plugins the Volcano version registers")


@rule(code="VOL023", name="job-volume-invalid", severity=Severity.ERROR, admission=True, kinds=JOB)
@after_crd_types
def job_volume_invalid(doc: Document, ctx: LintContext) -> Iterator[Diagnostic]:
    """A job-level volume the webhook refuses.

    ## What it catches
    In ``spec.volumes``: no ``mountPath``, a ``mountPath`` used twice, neither ``volumeClaim`` nor
    ``volumeClaimName``, both, or a ``volumeClaimName`` that is not a DNS-1123 subdomain
    (``validateIO`` in ``pkg/webhooks/admission/jobs/validate/util.go``, v1.15.1; it stops at the first).

    ## Why is this bad?
    The webhook refuses the job ("mountPath is required", "duplicated mountPath: /var", "either
    VolumeClaim or VolumeClaimName must be specified").

    ## Example
    ```yaml
    volumes:
      - mountPath: /data
    ```

    ## Fix
    Name an existing claim (``volumeClaimName: data``) or describe a new one (``volumeClaim:``), not both.
    """
    yield from _report(doc, ctx, "volume", "give each volume one mountPath and one claim")


@rule(code="VOL024", name="task-dependencies-not-dag", severity=Severity.ERROR, admission=True, kinds=JOB)
@after_crd_types
def task_dependencies_not_dag(doc: Document, ctx: LintContext) -> Iterator[Diagnostic]:
    """Task ``dependsOn`` that loops, or names a task the job does not have.

    ## What it catches
    ``tasks[].dependsOn.name`` forming a cycle, or naming no task of the job: ``topoSort`` in
    ``pkg/webhooks/admission/jobs/validate/util.go`` never reaches such a task.

    ## Why is this bad?
    The webhook refuses the job: "job has dependencies between tasks, but doesn't form a directed
    acyclic graph(DAG)" (``admit_job.go``, v1.15.1).

    ## Example
    ```yaml
    tasks:
      - {name: a, dependsOn: {name: [b]}, ...}
      - {name: b, dependsOn: {name: [a]}, ...}
    ```

    ## Fix
    Remove the dependency that closes the loop, or correct the task name.
    """
    yield from _report(doc, ctx, "dependencies", "make dependsOn a DAG of the job's own task names")


@rule(code="VOL025", name="partition-policy-invalid", severity=Severity.ERROR, admission=True, kinds=JOB)
@after_crd_types
def partition_policy_invalid(doc: Document, ctx: LintContext) -> Iterator[Diagnostic]:
    """A task's ``partitionPolicy`` whose numbers do not add up.

    ## What it catches
    ``totalPartitions`` or ``partitionSize`` not above 0, ``replicas`` other than
    ``totalPartitions × partitionSize``, or a ``minAvailable`` other than ``minPartitions ×
    partitionSize`` when ``minPartitions`` is set (``validatePartitionPolicy`` in ``admit_job.go``, v1.15.1).

    ## Why is this bad?
    The webhook refuses the job ("'Replicas' are not equal to TotalPartitions*PartitionSize in task: ...").

    ## Example
    ```yaml
    replicas: 8
    partitionPolicy: {totalPartitions: 3, partitionSize: 2}
    ```

    ## Fix
    ``replicas: 6`` (3 × 2), or ``totalPartitions: 4``.
    """
    yield from _report(doc, ctx, "partition-policy", "replicas = totalPartitions x partitionSize")


@rule(code="VOL026", name="network-topology-tier-conflict", severity=Severity.ERROR, admission=True,
      kinds=JOB + (Kind.K8S_MANIFEST,))
@after_crd_types
def network_topology_tier_conflict(doc: Document, ctx: LintContext) -> Iterator[Diagnostic]:
    """``networkTopology`` with both ``highestTierAllowed`` and ``highestTierName``.

    ## What it catches
    The two limits together, on the job or on a task's ``partitionPolicy`` (``validateNetworkTopology``
    in ``admit_job.go``, v1.15.1), and on a PodGroup or one of its ``subGroupPolicy`` entries
    (``validate_podgroup.go``).

    ## Why is this bad?
    The webhook refuses the job: "must not specify 'highestTierAllowed' and 'highestTierName' in
    networkTopology simultaneously".

    ## Example
    ```yaml
    networkTopology: {mode: hard, highestTierAllowed: 1, highestTierName: volcano.sh/hypernode}
    ```

    ## Fix
    Keep one of them.
    """
    yield from _report(doc, ctx, "network-topology", "keep highestTierAllowed or highestTierName")


@rule(code="VOL027", name="topology-policy-fractional-cpu", severity=Severity.ERROR, admission=True, kinds=JOB)
@after_crd_types
def topology_policy_fractional_cpu(doc: Document, ctx: LintContext) -> Iterator[Diagnostic]:
    """A task with a NUMA ``topologyPolicy`` whose containers do not ask for whole CPUs.

    ## What it catches
    ``topologyPolicy`` other than ``none`` while a container (or init container) requests no CPU,
    or a fraction (``500m``, ``1.5``); limits stand in for missing requests (``validateTaskTopoPolicy``
    in ``admit_job.go``, v1.15.1).

    ## Why is this bad?
    The webhook refuses the job: "the cpu request isn't  an integer in spec.task[0] container[0]".
    The kubelet's CPU manager can only pin whole cores, which a NUMA policy needs.

    ## Example
    ```yaml
    topologyPolicy: single-numa-node
    template: {spec: {containers: [{resources: {limits: {cpu: 500m}}}]}}
    ```

    ## Fix
    Request whole cores (``cpu: "2"``) in every container, or drop ``topologyPolicy``.
    """
    yield from _report(doc, ctx, "topology-policy", "request whole CPUs (cpu: \"1\" or more) in every container")


def _queue_facts(docs: DocumentSet) -> Optional[QueueFacts]:
    parents: dict[str, str] = {}
    states: dict[str, str] = {}
    for doc in docs.of_kind(Kind.K8S_MANIFEST):
        data = as_dict(doc.data)
        if data.get("kind") != "Queue" or not str(data.get("apiVersion", "")).startswith(QUEUE_API):
            continue
        name = str(as_dict(data.get("metadata")).get("name") or "")
        if name:
            parents[name] = str(as_dict(data.get("spec")).get("parent") or ("" if name == "root" else "root"))
            # A Queue's state is status, which kubectl apply never sets (the controller does): a manifest
            # says nothing about whether the queue is Open, so no state is read from it.
    return _webhook().QueueFacts(parents, states) if parents else None


@rule(code="VOL028", name="job-queue-refused", severity=Severity.ERROR, admission=True, kinds=JOB + (Kind.K8S_MANIFEST,),
      scope="set")
@per_deployment
def job_queue_refused(docs: DocumentSet, ctx: LintContext) -> Iterator[Diagnostic]:
    """A job submitted to a queue Volcano does not accept jobs in.

    ## What it catches
    ``spec.queue: root``; a queue that has child queues among the Queue manifests linted with the
    job. A queue that is neither ``default`` (the
    chart creates it) nor defined in the files linted is reported as info, for a job and for a PodGroup
    (``checkQueueState`` in ``validate_podgroup.go``: "unable to find queue"): whether it exists is
    the cluster's state, which the files do not show.

    ## Why is this bad?
    The webhook refuses the job: "can not submit job to root queue", "can only submit job to leaf
    queue", "can only submit job to queue with state `Open`", or "unable to find job queue"
    (``validateJobCreate`` in ``admit_job.go``, v1.15.1).

    ## Example
    ```yaml
    spec:
      queue: root
    ```

    ## Fix
    Submit to a leaf queue that is Open (``default``, or one of the leaves of your hierarchy).
    """
    queues = _queue_facts(docs)
    for doc in [d for d in docs.of_kind(Kind.K8S_MANIFEST) if _is_podgroup(d) and not crd_refuses_a_type(d, ctx)]:
        for found in _refusals(doc, ctx, "queue", queues):
            yield doc.at_path(found.path, f"Volcano's webhook refuses the PodGroup: {found.message}",
                              hint="submit to an Open queue")
        name = str(as_dict(as_dict(doc.data).get("spec")).get("queue") or "")
        if name and name not in (_webhook().DEFAULT_QUEUE, "root") and (queues is None or name not in queues.parents):
            # checkQueueState (validate_podgroup.go): "unable to find queue" when the cluster has none by that name
            yield doc.at_path(("spec", "queue"), f"queue '{name}' is not defined in the files linted; Volcano "
                                                 "refuses the PodGroup if the cluster has no such queue (\"unable "
                                                 "to find queue\")", severity=Severity.INFO,
                              hint="lint the Queue manifest with the PodGroup, or check `kubectl get queue`")
    for doc in [d for d in docs.of_kind(Kind.VOLCANO_JOB) if not crd_refuses_a_type(d, ctx)]:
        for found in _refusals(doc, ctx, "queue", queues):
            yield doc.at_path(found.path, f"Volcano's webhook refuses the job: {found.message}",
                              hint="submit to an Open leaf queue")
        name = str(as_dict(as_dict(doc.data).get("spec")).get("queue") or _webhook().DEFAULT_QUEUE)
        if name not in (_webhook().DEFAULT_QUEUE, "root") and (queues is None or name not in queues.parents):
            yield doc.at_path(("spec", "queue"), f"queue '{name}' is not defined in the files linted; Volcano "
                                                 "refuses the job if the cluster has no such queue (\"unable to "
                                                 "find job queue\")", severity=Severity.INFO,
                              hint="lint the Queue manifest with the job, or check `kubectl get queue`")


def _is(doc: Document, kind: str, api_group: str) -> bool:
    data = doc.data if isinstance(doc.data, dict) else {}
    return data.get("kind") == kind and str(data.get("apiVersion", "")).startswith(api_group)


@rule(code="VOL029", name="queue-refused", severity=Severity.ERROR, admission=True, since="0.3.0",
      kinds=(Kind.K8S_MANIFEST,))
@after_crd_types
def queue_refused(doc: Document, ctx: LintContext) -> Iterator[Diagnostic]:
    """A Volcano Queue that Volcano's queue webhook (or the Queue CRD's quantity pattern) refuses on create.

    ## What it catches
    After the mutating webhook (``createQueuePatch``: ``weight: 1``, ``reclaimable: true``, a hierarchy not
    rooted at ``root`` prefixed with ``root/`` and ``1/``), what ``validateQueue`` and
    ``validateHierarchicalQueue`` refuse in the Queue itself (volcano-sh/volcano v1.15.1,
    ``pkg/webhooks/admission/queues/validate/validate_queue.go``): a ``capability``, ``deserved`` or
    ``guarantee.resource`` quantity that is negative, or fractional for a resource counted in whole units
    (extended resources such as ``nvidia.com/gpu``, ``pods``; Kubernetes' ``ValidateResourceQuantityValue``),
    or that does not parse (the CRD's pattern refuses it first); a guaranteed resource with no ``deserved``
    entry or a smaller one; ``deserved`` above ``capability``; ``volcano.sh/hierarchy`` and
    ``volcano.sh/hierarchy-weights`` annotations of different lengths, or a weight that is not a number or not
    above 0; a queue that is its own ``parent``.

    Not judged: ``status.state`` (the API server drops ``status`` on a create: the CRD has a status
    subresource), and the checks against the cluster's other queues (the parent's existence, depth, allocated
    pods, sibling sums, ancestors' capability). For an older Volcano (the spec's ``versions.volcano`` or
    ``--chart volcano=``) that release's checks: a weight that is not positive up to v1.13; whole-list
    comparisons ("deserved should less equal than capability", a resource absent from ``capability`` counting
    as zero) in v1.13 and v1.14; the quantity and own-parent checks from v1.14.

    ## Why is this bad?
    ``kubectl apply`` gets ``admission webhook "validatequeue.volcano.sh" denied the request:
    requestBody.spec.deserved.nvidia.com/gpu: Invalid value: "16": deserved[nvidia.com/gpu]=16 must be <=
    capability[nvidia.com/gpu]=8`` and the queue, and every job sent to it, does not exist.

    ## Example
    ```yaml
    apiVersion: scheduling.volcano.sh/v1beta1
    kind: Queue
    metadata: {name: training}
    spec:
      capability: {nvidia.com/gpu: 8}
      deserved: {nvidia.com/gpu: 16}
    ```

    ## Fix
    Keep ``guarantee`` <= ``deserved`` <= ``capability`` for each resource, whole numbers for GPUs, and one
    weight per level of the hierarchy annotation.
    """
    if not _is(doc, "Queue", QUEUE_API):
        return
    for found in _webhook().validate_queue(as_dict(doc.data), _volcano_version(ctx)):
        if found.check == "quantity-format":
            yield doc.at_path(found.path, f"the API server refuses the Queue (its CRD's pattern): {found.message}",
                              hint="a Kubernetes quantity: 8, 500m, 64Gi")
        else:
            yield doc.at_path(found.path, f"Volcano's webhook refuses the Queue: {found.message}",
                              hint="guarantee <= deserved <= capability per resource, whole GPUs, one weight per "
                                   "hierarchy level")


@rule(code="VOL030", name="hypernode-refused", severity=Severity.ERROR, admission=True, since="0.3.0",
      kinds=(Kind.K8S_MANIFEST,))
@after_crd_types
def hypernode_refused(doc: Document, ctx: LintContext) -> Iterator[Diagnostic]:
    """A Volcano HyperNode that Volcano's hypernode webhook refuses.

    ## What it catches
    ``validateHyperNode`` (volcano-sh/volcano v1.15.1,
    ``pkg/webhooks/admission/hypernodes/validate/admit_hypernode.go``): a HyperNode with no ``members``, and a
    member's ``selector.regexMatch.pattern`` that is not a valid regular expression in Go's ``regexp`` syntax
    (RE2's; checked with google-re2, which cel-python installs; without it the pattern is not judged). The CRD's
    own CEL rules (exactly one of ``exactMatch``, ``regexMatch``, ``labelMatch``) are K8S042's.

    ## Why is this bad?
    ``kubectl apply`` gets ``admission webhook "validatehypernode.volcano.sh" denied the request:
    spec.members.selector.regexMatch.pattern: Invalid value: "node-[0-9": member regexMatch pattern is
    invalid: error parsing regexp: missing closing ]``; the topology tier it describes is missing and jobs
    with a ``networkTopology`` constraint stay Pending.

    ## Example
    ```yaml
    apiVersion: topology.volcano.sh/v1alpha1
    kind: HyperNode
    metadata: {name: rack-0}
    spec:
      tier: 1
      members:
        - type: Node
          selector: {regexMatch: {pattern: "node-[0-9"}}
    ```

    ## Fix
    Close the bracket (``node-[0-9]+``), or list the nodes with ``exactMatch``.
    """
    if not _is(doc, "HyperNode", "topology.volcano.sh/"):
        return
    for found in _webhook().validate_hypernode(as_dict(doc.data)):
        yield doc.at_path(found.path, f"Volcano's webhook refuses the HyperNode: {found.message}",
                          hint="at least one member; a regular expression in Go's syntax (RE2)")


@rule(code="VOL031", name="queue-hierarchy-refused", severity=Severity.ERROR, admission=True, since="0.3.0",
      kinds=(Kind.K8S_MANIFEST,), scope="set")
@per_deployment
def queue_hierarchy_refused(docs: DocumentSet, ctx: LintContext) -> Iterator[Diagnostic]:
    """A Volcano Queue that the queue webhook refuses against its parent, among the Queues linted with it.

    ## What it catches
    A child queue whose ``capability`` for a resource is above that of its nearest ancestor capping the
    resource, the ancestors being Queue manifests linted with it (``validateChildAgainstAncestor`` in
    ``pkg/webhooks/admission/queues/validate/validate_queue.go``, volcano-sh/volcano v1.15.1); a ``parent``
    that no Queue linted with it defines is info ("failed to get parent queue" when the cluster has none: the
    cluster's queues are its state). An ancestor outside the files linted ends the walk. For a Volcano
    before v1.14.4 (``--chart volcano=``, the spec's ``versions.volcano``) the capability check is not made.

    Not judged: the sums of the children's ``guarantee`` and ``deserved`` against the parent's, depth, allocated
    pods (the cluster's other queues and their state).

    ## Why is this bad?
    ``kubectl apply`` gets ``admission webhook "validatequeue.volcano.sh" denied the request: queue training
    capability[nvidia.com/gpu]=32 exceeds its ancestor's capability=16``; the queue is not created and the jobs
    sent to it are refused.

    ## Example
    ```yaml
    kind: Queue
    metadata: {name: eng}
    spec: {capability: {nvidia.com/gpu: 16}}
    ---
    kind: Queue
    metadata: {name: training}
    spec: {parent: eng, capability: {nvidia.com/gpu: 32}}
    ```

    ## Fix
    Keep a child's capability within its ancestors' (raise the parent's, or lower the child's).
    """
    queues: dict[str, Document] = {}
    for doc in docs.of_kind(Kind.K8S_MANIFEST):
        if _is(doc, "Queue", QUEUE_API) and not crd_refuses_a_type(doc, ctx):
            name = str(as_dict(as_dict(doc.data).get("metadata")).get("name") or "")
            if name:
                queues.setdefault(name, doc)
    if not queues:
        return
    version = _volcano_version(ctx)
    from ...knowledge.versions import version_key

    checks_ancestors = version is None or version_key(version) >= (1, 14, 4)  # added in v1.14.4
    by_name = {name: as_dict(doc.data) for name, doc in queues.items()}
    for name, doc in queues.items():
        data = by_name[name]
        parent = str(as_dict(data.get("spec")).get("parent") or "")
        if parent and parent not in ("root", name) and parent not in queues:
            yield doc.at_path(("spec", "parent"), f"parent queue '{parent}' is not defined in the files linted; "
                                                  "Volcano's webhook refuses the Queue if the cluster has no such "
                                                  "queue (\"failed to get parent queue\")", severity=Severity.INFO,
                              hint="lint the parent's Queue manifest with it, or check `kubectl get queue`")
        if checks_ancestors:
            for found in _webhook().queue_over_ancestor(data, by_name):
                yield doc.at_path(found.path, f"Volcano's webhook refuses the Queue: {found.message}",
                                  hint="keep a child's capability within its ancestors'")
