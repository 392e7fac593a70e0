"""Volcano Job rules (VOL): what Volcano's admission webhook rejects and what makes MPI jobs hang.

Since v1.14 part of Volcano's validation moved to an optional CEL ValidatingAdmissionPolicy that
is off by default, so hpcconf checks these itself (volcano-sh/volcano ``pkg/webhooks/admission/jobs/validate`` and the
svc/ssh job plugins, release-1.7 to v1.15.1).
"""

from __future__ import annotations

import re
from typing import Any, Iterator, Optional

from ...artifacts import Kind
from ...diagnostics import Diagnostic, Severity
from ...knowledge.charts import newest_version
from ...knowledge.versions import version_key as parse_version
from ...knowledge.volcano_webhook import UNSET_TASK_REPLICAS
from ...parsers.k8s import as_dict as _dict
from ...parsers.k8s import command_text, gpu_count, mpirun_calls, pods, quantity
from ...parsers.shell_commands import script_commands
from ...rules_registry import rule
from ..context import LintContext
from ..crd_types import after_crd_types
from ..document import Document, at_text

JOB = (Kind.VOLCANO_JOB,)
DNS_1123_LABEL = re.compile(r"^[a-z0-9]([-a-z0-9]*[a-z0-9])?$")
DNS_1035_LABEL = re.compile(r"^[a-z]([-a-z0-9]*[a-z0-9])?$")
MAX_NAME = 63
HOSTFILE = re.compile(r"/etc/volcano/([A-Za-z0-9_.-]+)\.host\b")
EVENTS_17 = {"*", "PodFailed", "PodEvicted", "Unknown", "TaskCompleted", "JobUpdated", "TaskFailed"}
ACTIONS_17 = {"AbortJob", "RestartJob", "RestartTask", "TerminateJob", "CompleteJob", "ResumeJob"}
EVENTS_115 = EVENTS_17 | {"PodPending"}
ACTIONS_115 = ACTIONS_17 | {"RestartPod", "RestartPartition"}
# policyEventMap / policyActionMap in pkg/webhooks/admission/jobs/validate/util.go at each tag: PodPending and
# RestartPod from v1.11.0, RestartPartition from v1.14.0.
EVENTS_111, ACTIONS_111 = EVENTS_115, ACTIONS_17 | {"RestartPod"}


def policy_vocabulary(version: Optional[str]) -> tuple[set[str], set[str]]:
    """The events and actions Volcano ``version`` admits (None: the newest)."""
    key = parse_version(version) if version is not None else (99,)
    if key >= (1, 14, 0):
        return EVENTS_115, ACTIONS_115
    if key >= (1, 11, 0):
        return EVENTS_111, ACTIONS_111
    return EVENTS_17, ACTIONS_17


def _spec(doc: Document) -> dict[str, Any]:
    return _dict(_dict(doc.data).get("spec"))


def _tasks(doc: Document) -> list[tuple[int, dict[str, Any]]]:
    return [(i, t) for i, t in enumerate(_spec(doc).get("tasks") or []) if isinstance(t, dict)]


def _replicas(task: dict[str, Any]) -> Optional[int]:
    """The task's pod count (0 when unset, as Volcano counts it: the task starts no pod); None when it is no
    number (``${WORKERS}`` of a template, filled in before the file is applied): judgements that need the
    count are then skipped, not made on a guess."""
    return quantity(task.get("replicas", UNSET_TASK_REPLICAS))


def _total_replicas(doc: Document) -> Optional[int]:
    counts = [_replicas(t) for _, t in _tasks(doc)]
    return None if None in counts else sum(c for c in counts if c is not None)


def volcano_version(ctx: LintContext) -> Optional[str]:
    if ctx.cluster is not None and ctx.cluster.versions.volcano:
        return ctx.cluster.versions.volcano
    return ctx.charts.get("volcano") or newest_version("volcano")


def _runs_mpirun(doc: Document) -> bool:
    return any(True for _ in mpirun_calls(doc))


@rule(code="VOL001", name="duplicate-task-name", severity=Severity.ERROR, admission=True, kinds=JOB)
@after_crd_types
def duplicate_task_name(doc: Document, ctx: LintContext) -> Iterator[Diagnostic]:
    """Two tasks of one Volcano job have the same name.

    ## What it catches
    A ``spec.tasks[].name`` that an earlier task already uses.

    ## Why is this bad?
    Volcano's admission webhook rejects the job with "duplicated task name"
    (volcano-sh/volcano ``pkg/webhooks/admission/jobs/validate``), and even without the webhook
    the pods ``<job>-<task>-<i>`` of both tasks would collide. The job of jingchaozhang.github.io's NDm A100 v4 AKS walkthrough (2023) repeats its
    ``mpiworker`` task (a copy-paste: the first copy has no GPUs), so ``kubectl apply`` fails.

    ## Severity
    Error: Volcano's admission webhook rejects the job ("duplicated task name",
    `pkg/webhooks/admission/jobs/validate`).

    ## Example
    ```yaml
    tasks:
      - {name: mpiworker, replicas: 2, template: ...}
      - {name: mpiworker, replicas: 2, template: ...}
    ```

    ## Fix
    Keep one task per role (delete the copy), or give each task its own name.
    """
    seen: dict[str, int] = {}
    for index, task in _tasks(doc):
        name = str(task.get("name", ""))
        if not name:
            continue
        if name in seen:
            yield doc.at_path(("spec", "tasks", index, "name"),
                              f"task name '{name}' is already used by tasks[{seen[name]}]; Volcano rejects the job "
                              "(duplicated task name)", hint="delete the duplicate task or rename it")
        else:
            seen[name] = index


@rule(code="VOL002", name="min-available-exceeds-replicas", severity=Severity.ERROR, admission=True, kinds=JOB)
@after_crd_types
def min_available_exceeds_replicas(doc: Document, ctx: LintContext) -> Iterator[Diagnostic]:
    """``minAvailable`` asks for more pods than the job (or task) has.

    ## What it catches
    ``spec.minAvailable`` greater than the sum of the tasks' ``replicas``, or a task's
    ``minAvailable`` greater than its ``replicas``. A task without ``replicas`` counts 0, as Volcano counts
    it (``TaskSpec.Replicas`` has no default: the controller starts no pod for it). A ``replicas`` that is no
    number (``${WORKERS}`` of a template, filled in before the job is applied) leaves the count unknown:
    nothing is claimed on it.

    ## Why is this bad?
    Volcano's webhook rejects it ("job 'minAvailable' should not be greater than total replicas in
    tasks", ``pkg/webhooks/admission/jobs/validate``). Without the webhook the PodGroup's ``minMember`` can never be met
    and the gang never starts.

    ## Severity
    Error: the webhook rejects the job ("minAvailable should not be greater than total replicas");
    without it the gang never starts.

    ## Example
    ```yaml
    spec:
      minAvailable: 9
      tasks: [{name: launcher, replicas: 1}, {name: worker, replicas: 2}]
    ```

    ## Fix
    Set ``minAvailable`` to the number of pods that must run together: for mpirun jobs, all of them
    (1 + 2 = 3 here).
    """
    spec = _spec(doc)
    total = _total_replicas(doc)
    job_min = quantity(spec.get("minAvailable"))
    if job_min is not None and total is not None and _tasks(doc) and job_min > total:
        yield doc.at_path(("spec", "minAvailable"), f"minAvailable {job_min} is more than the {total} pods the tasks "
                                                    "create; Volcano rejects the job",
                          hint=f"set minAvailable: {total}")
    for index, task in _tasks(doc):
        task_min, replicas = quantity(task.get("minAvailable")), _replicas(task)
        if task_min is not None and replicas is not None and task_min > replicas:
            yield doc.at_path(("spec", "tasks", index, "minAvailable"),
                              f"task '{task.get('name', index)}' minAvailable {task_min} > replicas {replicas}",
                              hint=f"set it to at most {replicas}")


@rule(code="VOL003", name="mpi-job-partial-gang", severity=Severity.WARNING, kinds=JOB)
@after_crd_types
def mpi_job_partial_gang(doc: Document, ctx: LintContext) -> Iterator[Diagnostic]:
    """An mpirun job may start before all its pods can run.

    ## What it catches
    A job whose containers run ``mpirun`` with ``spec.minAvailable`` below the total number of replicas.

    ## Why is this bad?
    ``minAvailable`` becomes the PodGroup's ``minMember``: Volcano starts the job as soon as that many
    pods fit. mpirun needs every worker from its hostfile; with fewer, the launcher waits (or ssh
    fails) while the started pods hold GPUs that another job could use (Volcano
    gang scheduling: use ``minAvailable == Σ replicas``; e.g. 1 launcher + 2 workers = 3).

    A launcher task whose ``dependsOn`` names every other task is not reported: Volcano creates
    its pod only once all the workers' pods are Running and Ready (``isDependsOnPodsReady`` in
    Volcano's ``job_controller_actions.go``), which is the ordering a full gang would give. Nor is a
    launcher whose init container waits for the workers (``kubectl wait --for=condition=Ready``, or a
    loop resolving their hostnames): Kubernetes starts mpirun's container only after it succeeds.

    ## Severity
    Warning: Volcano starts a partial gang that holds GPUs while mpirun waits for the missing workers
    (Volcano gang scheduling).

    ## Example
    ```yaml
    spec:
      minAvailable: 1
      tasks: [{name: mpimaster, replicas: 1}, {name: mpiworker, replicas: 2}]
    ```

    ## Fix
    ``minAvailable: 3`` (launcher + all workers).
    """
    spec = _spec(doc)
    job_min = quantity(spec.get("minAvailable"))
    total = _total_replicas(doc)
    if job_min is None or total is None or job_min >= total or not _runs_mpirun(doc) or _launchers_wait_for_workers(doc) \
            or _launchers_guarded_by_init(doc):
        return
    yield doc.at_path(("spec", "minAvailable"), f"minAvailable {job_min} < {total} replicas: mpirun can start before "
                                                "all its workers are scheduled", hint=f"set minAvailable: {total}")


# An init container that blocks until the workers are up: `kubectl wait --for=condition=Ready`, or a loop
# resolving or reaching their hostnames. The main container (and mpirun) starts only after it succeeds.
_WAITS_FOR_PODS = re.compile(r"kubectl\s+wait\b[^\n]*condition=Ready|\b(?:until|while)\b[^\n]*"
                             r"(?:nslookup|getent\s+hosts|host\s|ping\s|nc\s+-z|ssh\s)", re.S)


def _launchers_guarded_by_init(doc: Document) -> bool:
    """Whether every pod that runs mpirun has an init container waiting for the workers (Kubernetes starts
    the containers only after every init container succeeds)."""
    launchers = [pod for pod, *_ in mpirun_calls(doc)]
    return bool(launchers) and all(
        any(_WAITS_FOR_PODS.search(command_text(c)) for c in pod.spec.get("initContainers") or []
            if isinstance(c, dict)) for pod in launchers)


def _depends_on(task: dict[str, Any]) -> set[str]:
    """Task names in ``dependsOn.name`` (a list, or one string as some examples write it)."""
    names = (task.get("dependsOn") or {}).get("name") if isinstance(task.get("dependsOn"), dict) else None
    if isinstance(names, str):
        names = [names]
    return {str(n) for n in names or [] if n}


def _launchers_wait_for_workers(doc: Document) -> bool:
    """Whether every task that runs mpirun lists all the other tasks in ``dependsOn``: Volcano then creates
    its pods only once every pod of those tasks is Running and Ready (job_controller_actions.go,
    isDependsOnPodsReady), so mpirun never starts without its workers, whatever minAvailable says."""
    launchers = {pod.task_index for pod, *_ in mpirun_calls(doc)}
    tasks = _tasks(doc)
    names = {str(t.get("name", "")) for _, t in tasks}
    return bool(launchers) and all(
        (names - {str(t.get("name", ""))}) <= _depends_on(t) for i, t in tasks if i in launchers)


def _hostfile_task_names(doc: Document) -> dict[str, str]:
    """file stem the svc plugin writes -> task name."""
    return {str(t.get("name", "")).replace("-", "_"): str(t.get("name", "")) for _, t in _tasks(doc) if t.get("name")}


@rule(code="VOL004", name="hostfile-not-written-by-svc", severity=Severity.ERROR, kinds=JOB)
@after_crd_types
def hostfile_not_written_by_svc(doc: Document, ctx: LintContext) -> Iterator[Diagnostic]:
    """A command reads ``/etc/volcano/<name>.host`` that the svc plugin never writes.

    ## What it catches
    Any ``/etc/volcano/X.host`` in a container command where X is not a task name with ``-``
    replaced by ``_``.

    ## Why is this bad?
    The svc plugin writes one file per task, ``/etc/volcano/<task>.host``, turning ``-`` into ``_``
    (task ``mpi-worker`` → ``mpi_worker.host``; volcano-sh/volcano ``pkg/controllers/job/plugins/svc``). A wrong name makes mpirun fail
    with "hostfile not found", or, with ``cat``, run on zero hosts.

    ## Severity
    Error: the svc plugin writes `/etc/volcano/<task>.host` with `-` turned into `_`; mpirun finds no
    hostfile (volcano-sh/volcano `pkg/controllers/job/plugins/svc`).

    ## Example
    ```yaml
    tasks:
      - name: mpi-worker
    # launcher: mpirun -hostfile /etc/volcano/mpi-worker.host ...
    ```

    ## Fix
    ``-hostfile /etc/volcano/mpi_worker.host``.
    """
    stems = _hostfile_task_names(doc)
    if not stems:
        return
    for pod in pods(doc):
        for path, container in pod.containers(init=True):
            for match in HOSTFILE.finditer(command_text(container)):
                stem = match.group(1)
                if stem in stems:
                    continue
                wanted = stem.replace("-", "_")
                hint = f"use /etc/volcano/{wanted}.host" if wanted in stems else \
                    f"the svc plugin writes: {', '.join(f'/etc/volcano/{s}.host' for s in sorted(stems))}"
                yield at_text(doc, path + ("command",), match.group(0),
                              f"{match.group(0)} is not written by Volcano's svc plugin (no task writes it)", hint=hint)


def _worker_for(doc: Document, hostfile: Optional[str]) -> Optional[tuple[int, dict[str, Any]]]:
    if not hostfile:
        return None
    match = HOSTFILE.search(hostfile)
    if not match:
        return None
    stems = _hostfile_task_names(doc)
    name = stems.get(match.group(1))
    return next(((i, t) for i, t in _tasks(doc) if t.get("name") == name), None)


def _task_gpus(task: dict[str, Any]) -> Optional[int]:
    template = _dict(task.get("template"))
    found = [gpu_count(c) for c in _dict(template.get("spec")).get("containers") or [] if isinstance(c, dict)]
    counts = [c for c in found if c is not None]
    return sum(counts) if counts else None


@rule(code="VOL005", name="mpirun-rank-count", severity=Severity.ERROR, kinds=JOB)
@after_crd_types
def mpirun_rank_count(doc: Document, ctx: LintContext) -> Iterator[Diagnostic]:
    """mpirun's ``-np`` / ``-npernode`` do not match the workers' replicas × GPUs.

    ## What it catches
    With ``-hostfile /etc/volcano/<worker>.host``: ``-np`` different from the worker task's
    ``replicas`` × its ``nvidia.com/gpu`` per pod, and ``-npernode`` / ``--map-by ppr:N:node``
    different from the GPUs per pod. A worker ``replicas`` that is no number (``${WORKERS}`` of a template)
    leaves ``-np`` unjudged.

    ## Why is this bad?
    One NCCL rank per GPU is the layout nccl-tests' ``-g 1`` expects. Too many ranks oversubscribe
    GPUs (several ranks per GPU: NCCL init fails with "Duplicate GPU detected"), too few leave GPUs
    and their IB NICs idle, so busbw drops below the SKU's reference (2 nodes × 8 GPUs: 16 ranks,
    ``ppr:8:node``).

    ## Severity
    Error when ranks exceed the workers' GPUs (NCCL "Duplicate GPU detected"); warning when GPUs are
    left idle (busbw below the SKU's reference).

    ## Example
    ```text
    mpirun -np 8 -npernode 8 -hostfile /etc/volcano/mpiworker.host ...   # 2 workers x 8 GPUs
    ```

    ## Fix
    ``-np 16 -npernode 8 --map-by ppr:8:node``.
    """
    for _pod, path, _container, call in mpirun_calls(doc):
        worker = _worker_for(doc, call.hostfile)
        if worker is None:
            continue
        _, task = worker
        gpus = _task_gpus(task)
        if not gpus:
            continue
        replicas = _replicas(task)
        expected = replicas * gpus if replicas is not None else None
        np = quantity(call.np)
        if np is not None and expected is not None and np != expected:
            # more ranks than GPUs cannot run (Duplicate GPU detected); fewer run with GPUs idle
            yield at_text(doc, path + ("command",), call.tokens["np"],
                          f"mpirun -np {np}, but task '{task.get('name')}' has {replicas} pods x {gpus} GPUs = {expected}",
                          hint=f"use -np {expected}", severity=None if np > expected else Severity.WARNING)
        for key, label in (("npernode", "-npernode"), ("ppr", "--map-by ppr:N:node")):
            per_node = quantity(getattr(call, key))
            if per_node is not None and per_node != gpus:
                yield at_text(doc, path + ("command",), call.tokens[key],
                              f"{label} gives {per_node} ranks per pod, but each '{task.get('name')}' pod has {gpus} GPUs",
                              hint=f"use {gpus}")


def _completes(policies: object) -> bool:
    return isinstance(policies, list) and any(
        isinstance(p, dict) and p.get("event") == "TaskCompleted" and p.get("action") == "CompleteJob" for p in policies)


@rule(code="VOL006", name="launcher-never-completes-job", severity=Severity.WARNING, kinds=JOB)
@after_crd_types
def launcher_never_completes_job(doc: Document, ctx: LintContext) -> Iterator[Diagnostic]:
    """The mpirun launcher finishing does not finish the job.

    ## What it catches
    A task that runs ``mpirun`` without the policy ``{event: TaskCompleted, action: CompleteJob}``
    (on the task or the job).

    ## Why is this bad?
    The workers run ``sshd -D`` and never exit, so the job stays Running forever after the
    benchmark ends, holding every GPU and IB VF of the worker nodes (volcano-sh/volcano job
    policies). The published NDm A100 v4 AKS walkthroughs (jingchaozhang.github.io and the Azure HPC
    blog, 2023) set the policy on the launcher task.

    ## Severity
    Warning: the job never completes and keeps every GPU of its workers (Volcano job policies).

    ## Example
    ```yaml
    - name: mpimaster
      replicas: 1
      template: ...   # no policies
    ```

    ## Fix
    ```yaml
      policies:
        - event: TaskCompleted
          action: CompleteJob
    ```
    """
    if _completes(_spec(doc).get("policies")):
        return
    for pod, _path, _container, _call in mpirun_calls(doc):
        if pod.task is None or _completes(pod.task.get("policies")):
            continue
        yield doc.at_path(("spec", "tasks", pod.task_index, "name"),
                          f"task '{pod.task.get('name') or pod.task_index}' runs mpirun but its completion does not complete the job; "
                          "the sshd workers keep it running forever",
                          hint="add policies: [{event: TaskCompleted, action: CompleteJob}] to this task")


@rule(code="VOL007", name="mpi-plugins-missing", severity=Severity.ERROR, kinds=JOB)
@after_crd_types
def mpi_plugins_missing(doc: Document, ctx: LintContext) -> Iterator[Diagnostic]:
    """An mpirun job lacks the ``ssh`` / ``svc`` plugins it relies on.

    ## What it catches
    A job that runs ``mpirun`` whose ``spec.plugins`` has no ``ssh`` or no ``svc`` entry (the ``mpi``
    plugin adds both), a job that reads ``/etc/volcano/*.host`` without running mpirun (a TensorFlow
    parameter-server job) and has no ``svc``, or a plugin listed with a null value.

    ## Why is this bad?
    ``svc`` writes the hostfiles and gives pods stable DNS names; ``ssh`` installs the shared key that
    lets mpirun start ranks on the workers (volcano-sh/volcano ``pkg/controllers/job/plugins``). Without them mpirun cannot
    read its hostfile or log in. ``plugins`` is ``map[string][]string``: a null value is pruned,
    which drops the plugin, so write ``ssh: []``.

    ## Severity
    Error: without svc/ssh mpirun cannot read its hostfile or log in to the workers (volcano-sh/volcano
    `pkg/controllers/job/plugins`).

    ## Example
    ```yaml
    plugins:
      svc: []
    ```

    ## Fix
    ```yaml
    plugins:
      ssh: []
      svc: []
    ```
    """
    uses_hostfile = any(HOSTFILE.search(command_text(c)) for pod in pods(doc) for _, c in pod.containers(init=True))
    runs_mpirun = _runs_mpirun(doc)
    if not runs_mpirun and not uses_hostfile:
        return
    plugins = _spec(doc).get("plugins")
    plugins = plugins if isinstance(plugins, dict) else {}
    if "mpi" in plugins and plugins.get("mpi") is not None:
        return
    # A job that only reads the hostfiles (a TensorFlow or PyTorch job finding its peers) needs svc, which
    # writes them; ssh is for mpirun logging in to the workers.
    for name in ("ssh", "svc") if runs_mpirun else ("svc",):
        path = ("spec", "plugins", name) if name in plugins else ("spec", "plugins") if "plugins" in _spec(doc) else ("spec",)
        if name not in plugins:
            yield doc.at_path(path, f"plugin '{name}' is missing; {'mpirun needs' if runs_mpirun else 'reading /etc/volcano/*.host needs'} it ({'hostfiles and DNS names' if name == 'svc' else 'passwordless ssh to the workers'})",
                              hint=f"add `{name}: []` under spec.plugins")
        elif plugins[name] is None:
            yield doc.at_path(path, f"plugin '{name}' has a null value, which the API server prunes (the plugin is dropped)",
                              hint=f"write `{name}: []`")


@rule(code="VOL008", name="job-or-task-name-invalid", severity=Severity.ERROR, admission=True, kinds=JOB)
@after_crd_types
def job_or_task_name_invalid(doc: Document, ctx: LintContext) -> Iterator[Diagnostic]:
    """Job, task or pod names that Volcano or Kubernetes cannot use.

    ## What it catches
    A job name that is not a DNS-1035 label (lower case, starts with a letter: the svc plugin makes
    it a Service name), task names that are not DNS-1123 labels, and pod names
    ``<job>-<task>-<index>`` longer than 63 characters.

    ## Why is this bad?
    Volcano's webhook (and from v1.14 the CRD's ``tasks[].name`` pattern) rejects them; the svc
    plugin's Service ``<job>`` and the pods' hostnames fail otherwise (``pkg/webhooks/admission/jobs/validate``).

    ## Severity
    Error: the webhook (and from v1.14 the CRD pattern) rejects the name.

    ## Example
    ```yaml
    metadata:
      name: NCCL_allreduce
    ```

    ## Fix
    Use lower-case letters, digits and ``-``: ``nccl-allreduce``, and keep ``<job>-<task>-<n>`` within 63 characters.
    """
    data = _dict(doc.data)
    job = str(_dict(data.get("metadata")).get("name", "") or "")
    if job and (not DNS_1035_LABEL.match(job) or len(job) > MAX_NAME):
        yield doc.at_path(("metadata", "name"), f"job name '{job}' is not a DNS-1035 label; the svc plugin's Service "
                                                "and the pod names need one", hint="lower-case letters, digits and '-', starting with a letter")
    for index, task in _tasks(doc):
        name = str(task.get("name", "") or "")
        if not name:
            continue
        if not DNS_1123_LABEL.match(name) or len(name) > MAX_NAME:
            yield doc.at_path(("spec", "tasks", index, "name"), f"task name '{name}' is not a DNS-1123 label",
                              hint="lower-case letters, digits and '-' (no '_')")
            continue
        pod = f"{job}-{name}-{max((_replicas(task) or 1) - 1, 0)}"  # an unknown count: the shortest, index 0
        if job and len(pod) > MAX_NAME:
            yield doc.at_path(("spec", "tasks", index, "name"),
                              f"pod name '{pod}' is {len(pod)} characters; pod names are limited to {MAX_NAME}",
                              hint="shorten the job or task name")


@rule(code="VOL009", name="invalid-lifecycle-policy", severity=Severity.ERROR, admission=True, kinds=JOB)
@after_crd_types
def invalid_lifecycle_policy(doc: Document, ctx: LintContext) -> Iterator[Diagnostic]:
    """A job or task policy that Volcano's admission rejects.

    ## What it catches
    ``policies[]`` with an event or action unknown to the Volcano version, both ``event(s)`` and
    ``exitCode`` (even ``exitCode: 0``), neither, ``exitCode: 0`` alone, an event or exit code repeated
    across policies, or ``*`` beside any other event of the same list.

    ## Why is this bad?
    The webhook rejects the job (``validatePolicies`` in ``pkg/webhooks/admission/jobs/validate``). A typo such as
    ``action: Complete`` therefore makes the whole job fail to submit. Valid in 1.7: events
    ``* PodFailed PodEvicted Unknown TaskCompleted JobUpdated TaskFailed``, actions ``AbortJob
    RestartJob RestartTask TerminateJob CompleteJob ResumeJob``; v1.11.0 adds ``PodPending`` and
    ``RestartPod``, v1.14.0 ``RestartPartition`` (``policyEventMap``/``policyActionMap`` in ``util.go`` at each tag).

    ## Severity
    Error: the webhook rejects the job (`validatePolicies`).

    ## Example
    ```yaml
    policies:
      - event: TaskCompleted
        action: Complete
    ```

    ## Fix
    ``action: CompleteJob``.
    """
    version = volcano_version(ctx)
    events, actions = policy_vocabulary(version)
    places: list[tuple[tuple[str | int, ...], object]] = [(("spec", "policies"), _spec(doc).get("policies"))]
    places += [(("spec", "tasks", i, "policies"), t.get("policies")) for i, t in _tasks(doc)]
    for base, policies in places:
        yield from _policy_list(doc, base, policies if isinstance(policies, list) else [], version, events, actions)


def _policy_list(doc: Document, base: tuple[Any, ...], policies: list[Any], version: Optional[str], events: set[str],
                 actions: set[str]) -> Iterator[Diagnostic]:
    """``validatePolicies`` over one list: events and exit codes are unique across its policies, and
    ``*`` excludes every other event of the list (pkg/webhooks/admission/jobs/validate/util.go)."""
    seen: set[str] = set()
    exit_codes: set[object] = set()
    star_at: tuple[Any, ...] = ()  # the policy naming '*' (the finding's place when other events sit beside it)
    for index, policy in enumerate(policies):
        if not isinstance(policy, dict):
            continue
        path = base + (index,)
        named = [policy["event"]] if policy.get("event") else []
        named += list(policy.get("events") or [])
        exit_code = policy.get("exitCode")
        if named and exit_code is not None:
            yield doc.at_path(path, "a policy sets both event(s) and exitCode; Volcano rejects it "
                                    "(\"must not specify event and exitCode simultaneously\")",
                              hint="split it into two policies")
        elif not named and exit_code in (None, 0):
            yield doc.at_path(path, "a policy needs an event or a non-zero exitCode (\"0 is not a valid error "
                                    "code\")" if exit_code == 0 else "a policy needs an event or an exitCode",
                              hint="add event: <Event>")
        elif not named and exit_code in exit_codes:
            yield doc.at_path(path + ("exitCode",), f"exitCode {exit_code} is already handled by an earlier policy "
                                                    f"(\"duplicate exitCode {exit_code}\")", hint="merge the policies")
        exit_codes.add(exit_code)
        if "*" in named:
            star_at = path
        for event in dict.fromkeys(named):
            if str(event) not in events:
                yield doc.at_path(path + ("event",) if policy.get("event") == event else path + ("events",),
                                  f"unknown event '{event}' for Volcano {version}",
                                  hint=f"one of: {', '.join(sorted(events))}")
            elif str(event) in seen:
                yield doc.at_path(path, f"event '{event}' is already handled by an earlier policy",
                                  hint="merge the policies")
            seen.add(str(event))
        action = policy.get("action")
        if action is not None and str(action) not in actions:
            yield doc.at_path(path + ("action",), f"unknown action '{action}' for Volcano {version}",
                              hint=f"one of: {', '.join(sorted(actions))}")
        elif action is None and named and exit_code is None:  # "" is not in policyActionMap: invalid policy action
            yield doc.at_path(path, "a policy with an event needs an action (\"invalid policy action\")",
                              hint=f"add action: one of {', '.join(sorted(actions))}")
    if "*" in seen and len(seen) > 1:
        yield doc.at_path(star_at or base, "'*' stands for every event: no other event may appear in the policies "
                                           "beside it (\"if there's * here, no other policy should be here\")",
                          hint="keep the '*' policy alone, or list the events one by one")


# --------------------------------------------------------------------------- VOL010

# nccl-tests / rccl-tests binaries: the launcher of a test, whose exit status is the verdict.
_COLLECTIVE_TEST = re.compile(r"(?<![\w-])(?:all_reduce|all_gather|alltoall|broadcast|reduce|reduce_scatter|sendrecv|"
                              r"scatter|gather|hypercube)_perf\b|\$\{?\w+\}?_perf\b")
_MPIRUN_WORD = re.compile(r"(?:^|[\s;&|(`])(?:mpirun|mpiexec|orterun|prterun)(?=\s|$)")
_ERREXIT = re.compile(r"^\s*set\s+(?:-[a-zA-Z]*e[a-zA-Z]*\b|.*-o\s+errexit\b)", re.M)
_SINGLE_PIPE = re.compile(r"(?<![|>])\|(?![|&])")
_EXIT_STATUS = re.compile(r"^\s*(?:exit\s+\"?\$\?\"?|done|fi|esac|\})\s*(?:#.*)?$")
# ``rc=$?`` (also ``local``/``declare``/``readonly rc=$?``, or ``rc=$?;`` followed by more): the status kept.
_STATUS_CAPTURE = re.compile(r"^\s*(?:(?:local|declare|readonly|export)\s+)?([A-Za-z_]\w*)=\"?\$\?\"?\s*(?:[;#]|$)")
# Programs that act on a status: exit with it or test it ("exit" inside an echo string is text).
_ACTS_ON_STATUS = {"exit", "return", "[", "[[", "test"}


def _acts_on_status(line: str) -> bool:
    return line.lstrip().startswith("((") or bool(_ACTS_ON_STATUS & set(script_commands(line)))


def _status_checked_later(first_after: str, later: list[str]) -> bool:
    """The line right after an mpirun keeps its status (``rc=$?``) and a later line exits with or tests it, or
    the line right after acts on ``$?`` itself (``[ $? -eq 0 ] || exit 1``)."""
    code = first_after.split("#", 1)[0]
    if "$?" in code and not _STATUS_CAPTURE.match(code) and _acts_on_status(code):
        return True
    capture = _STATUS_CAPTURE.match(code)
    if capture is None:
        return False
    name = re.escape(capture.group(1))
    used = re.compile(r"\$\{?" + name + r"\b|^\s*\(\(.*\b" + name + r"\b")  # $rc, ${rc}, or rc inside (( ))
    return any(used.search(line) and _acts_on_status(line)
               for line in [code[capture.end():], *later])


def _logical_lines(script: str) -> list[tuple[str, str]]:
    """(the command with continuation lines joined, its first physical line) for each line of ``script``."""
    out: list[tuple[str, str]] = []
    pending, first = "", ""
    for physical in script.splitlines():
        if not pending:
            first = physical
        if physical.endswith("\\"):
            pending += physical[:-1] + " "
            continue
        out.append((pending + physical, first))
        pending = ""
    if pending:
        out.append((pending, first))
    return out


def _errexit(container: dict[str, Any], script: str) -> bool:
    shell_flags = [str(w) for w in (container.get("command") or [])[1:] if str(w).startswith("-") and str(w) != "-c"]
    return bool(_ERREXIT.search(script)) or any("e" in flag.lstrip("-").split("c")[0] for flag in shell_flags)


_AFTER_SEMICOLON = re.compile(r";\s*([^;\s][^\n]*)$")


def _lost_status(container: dict[str, Any]) -> Optional[tuple[str, str]]:
    """(why, the line to point at) when an mpirun's failure cannot become the container's exit status."""
    script = command_text(container)
    lines = _logical_lines(script)
    pipefail, errexit, pipestatus = "pipefail" in script, _errexit(container, script), "PIPESTATUS" in script
    for index, (line, first) in enumerate(lines):
        code = line.split("#", 1)[0] if not line.lstrip().startswith("#") else ""
        match = _MPIRUN_WORD.search(code)
        if match is None:
            continue
        after = code[match.end():]
        # `mpirun ... && echo ok` keeps mpirun's failure only as the script's last command: a later command (`; sleep`,
        # the next line) runs anyway and its status becomes the container's, so `&&` alone is no check.
        checked = "||" in after or code.lstrip().startswith(("if ", "while ", "until ", "! "))
        if _SINGLE_PIPE.search(after) and not pipefail and not pipestatus:
            return "its exit status is lost in the pipe (no `set -o pipefail`): the pipeline's status is the last command's", first
        following = [rest for rest, _ in lines[index + 1:] if rest.strip() and not rest.lstrip().startswith("#")]
        same_line = _AFTER_SEMICOLON.search(after)  # `mpirun ...; sleep 3600`: the next command is on its line
        if same_line and not checked:
            following = [same_line.group(1), *following]
        later = [rest for rest in following if not _EXIT_STATUS.match(rest)]
        checked = checked or bool(following) and _status_checked_later(following[0], following[1:])
        if not checked and not errexit and later:
            return ("a failure does not stop the script (no `set -e`, no `|| exit`), so a later command's status "
                    "becomes the container's"), first
    return None


# Events whose policy acts on a failed launcher pod (PodFailed itself, its task failing, any event); a policy on an
# exit code also shows the author handled failures.
_FAILURE_EVENTS = {"PodFailed", "TaskFailed", "*"}
# A worker that serves mpirun's ssh for ever (or idles): its pod never ends on its own.
_ENDLESS_WORKER = re.compile(r"\bsshd\b[^\n;&|]*\s-\w*D\b|\bsleep\s+(?:infinity|inf)\b")


def _handles_failure(policies: object) -> bool:
    if not isinstance(policies, list):
        return False
    for policy in policies:
        if not isinstance(policy, dict):
            continue
        events = {str(policy["event"])} if policy.get("event") else set()
        events |= {str(e) for e in policy.get("events") or []}
        if events & _FAILURE_EVENTS or policy.get("exitCode") is not None:
            return True
    return False


def _endless_workers(doc: Document, launcher_index: int) -> bool:
    """Another task of the job runs a container that never ends on its own (``sshd -D``, ``sleep infinity``)."""
    return any(pod.task_index != launcher_index and _ENDLESS_WORKER.search(command_text(c))
               for pod in pods(doc) for _, c in pod.containers())


@rule(code="VOL010", name="failed-test-never-fails-job", severity=Severity.WARNING, kinds=JOB, since="0.3.0")
@after_crd_types
def failed_test_never_fails_job(doc: Document, ctx: LintContext) -> Iterator[Diagnostic]:
    """A failing NCCL test in the launcher cannot make the Volcano job end Failed.

    ## What it catches
    In a task whose ``mpirun`` runs nccl-tests/rccl-tests (``all_reduce_perf`` and the other ``*_perf``
    binaries): a script whose ``mpirun`` failure does not become the container's exit status
    (``mpirun ... | tee log`` without ``set -o pipefail``; an unchecked ``mpirun`` followed by other
    commands without ``set -e`` or ``bash -e``; warning), a launcher pod ``restartPolicy: OnFailure`` or ``Always``
    (warning, where the script's failure reaches the container's status: the job reruns the test
    instead of failing), and a launcher with ``restartPolicy: Never`` whose
    task and job have no policy on ``PodFailed``, ``TaskFailed``, ``*`` or an exit code while another task's
    container never ends (``sshd -D``, ``sleep infinity``; warning). An ``mpirun`` counts as checked under
    ``if``/``||`` (an ``&&`` chain does not keep its status past a later command), or when the next line keeps its status (``rc=$?``) and a later line exits with it or
    tests it (``exit $rc``, ``[ "$rc" -ne 0 ]``), or acts on ``$?`` itself. Jobs that run other
    programs (training) are not judged: in-place retries may be what they want.

    ## Why is this bad?
    A pipeline's status is its last command's, so ``mpirun ... | tee`` exits 0 when every rank failed, and
    the job ends Completed. A launcher that does exit non-zero under ``OnFailure`` is restarted in place by
    the kubelet: its pod never reaches phase Failed, the only state that raises Volcano's ``PodFailed``
    event (volcano-sh/volcano ``pkg/controllers/job/job_controller_handler.go``), so the job stays Running,
    rerunning the test and holding every GPU of the gang. With ``restartPolicy: Never`` and
    ``{event: PodFailed, action: RestartJob}`` under ``maxRetry: 1`` the job moves to Failed
    (``state/restarting.go``: ``RetryCount >= maxRetry``), keeping the failed pod's log. Without a policy on
    the failure, ``applyPolicies`` (``job_controller_util.go``) takes the default ``SyncJobAction``, and
    ``state/running.go`` moves the job on only when every pod has ended (``Succeeded + Failed`` equals the
    replicas): workers running ``sshd -D`` never end, so the failed job stays Running.

    ## Severity
    Warning: the job accepts and runs, but a failed test ends Completed, so the cluster is declared
    healthy without being so; or, under ``OnFailure``/``Always``, the kubelet restarts the failed launcher
    in place without end (the pod stays Running, Volcano never sees ``PodFailed``), the job never reaches
    Failed and the gang keeps every GPU, with no verdict. Only test launchers are judged: a training job's
    in-place retries are left alone.

    ## Example
    ```yaml
    - name: mpimaster
      policies: [{event: TaskCompleted, action: CompleteJob}]
      template:
        spec:
          containers:
            - command: ["/bin/bash", "-c", "mpirun ... all_reduce_perf -b 8 -e 8G | tee /tmp/log"]
          restartPolicy: OnFailure
    ```

    ## Fix
    Start the script with ``set -eo pipefail`` (or record each ``mpirun``'s status and exit with it), set the
    launcher's ``restartPolicy: Never``, add ``{event: PodFailed, action: RestartJob}`` to its policies and
    ``maxRetry: 1`` to the job (``hpcconf build`` writes this).
    """
    flagged_tasks: set[int] = set()
    for pod, path, container, _call in mpirun_calls(doc):
        if not _COLLECTIVE_TEST.search(command_text(container)):
            continue  # a training job may want in-place retries; a test's purpose is its verdict
        lost = _lost_status(container)
        if lost is not None:
            why, line = lost
            yield at_text(doc, path + ("command",), line.strip()[:60], f"mpirun in container '{container.get('name', '?')}': "
                          f"{why}; a failed test ends the job Completed", hint="start the script with `set -eo pipefail`")
        if pod.task is None or pod.task_index is None or pod.task_index in flagged_tasks:
            continue
        flagged_tasks.add(pod.task_index)
        policy = pod.spec.get("restartPolicy")
        task_name = pod.task.get("name") or pod.task_index
        if policy == "Never" and not _handles_failure(pod.task.get("policies")) \
                and not _handles_failure(_spec(doc).get("policies")) and _endless_workers(doc, pod.task_index):
            yield doc.at_path(("spec", "tasks", pod.task_index, "name"),
                              f"task '{task_name}' runs the NCCL test with restartPolicy Never but no policy acts on "
                              "PodFailed: a failed launcher pod gets Volcano's default SyncJob, and with the workers' sshd "
                              "never ending the job stays Running, holding every GPU of the gang",
                              hint="add {event: PodFailed, action: RestartJob} to this task's policies and maxRetry: 1 "
                                   "to the job (or action: AbortJob)")
        if policy in ("OnFailure", "Always") and lost is None:  # a status already lost never restarts it
            yield doc.at_path(pod.spec_path + ("restartPolicy",), f"task '{pod.task.get('name') or pod.task_index}' runs "
                              f"the NCCL test with restartPolicy {policy}: a failed launcher restarts in place and reruns the "
                              "test without end, its pod never fails, so the job never ends Failed and its gang keeps every GPU",
                              hint="restartPolicy: Never, with policies [{event: PodFailed, action: RestartJob}] and the "
                                   "job's maxRetry: 1")
