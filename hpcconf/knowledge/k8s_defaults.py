"""The object the API server stores: defaults applied as ``kubectl apply --dry-run=server -o yaml`` shows them.

Built-in kinds follow Kubernetes' defaulting functions (kubernetes/kubernetes, v1.34:
``pkg/apis/core/v1/defaults.go`` ``SetDefaults_PodSpec``, ``SetDefaults_Container``,
``SetDefaults_Pod`` (requests from limits), ``SetDefaults_Probe``, ``SetDefaults_Service``,
``SetDefaults_ConfigMapVolumeSource``/``SecretVolumeSource``; ``pkg/apis/apps/v1/defaults.go``
``SetDefaults_Deployment``/``DaemonSet``/``StatefulSet``; ``pkg/apis/batch/v1/defaults.go`` ``SetDefaults_Job``).
Custom resources get their CRD's structural-schema defaults (``data/crd_defaults.yaml``: every CRD hpcconf
holds) and, for Volcano Jobs and Queues, the mutating webhook's patch (:mod:`hpcconf.knowledge.volcano_webhook`). Values the
server assigns at random or from cluster state (UIDs, clusterIP, node names) are left out.
"""

from __future__ import annotations

import copy
from functools import lru_cache
from typing import Any, Mapping, Optional

from .versions import version_key

VOLCANO_JOB_API = "batch.volcano.sh/v1alpha1"
VOLCANO_QUEUE_API = "scheduling.volcano.sh/v1beta1"
DEFAULT_FILE_MODE = 420  # 0644


def _set(node: dict[str, Any], key: str, value: Any) -> None:
    if node.get(key) is None:
        node[key] = copy.deepcopy(value)


def _dict(value: Any) -> dict[str, Any]:
    return value if isinstance(value, dict) else {}


def _items(value: Any) -> list[dict[str, Any]]:
    return [v for v in value if isinstance(v, dict)] if isinstance(value, list) else []


def image_pull_policy(image: str) -> str:
    """``Always`` for ``:latest`` or no tag (and no digest), else ``IfNotPresent`` (SetDefaults_Container)."""
    if "@" in image:
        return "IfNotPresent"
    last = image.rsplit("/", 1)[-1]
    tag = last.split(":", 1)[1] if ":" in last else ""
    return "Always" if tag in ("", "latest") else "IfNotPresent"


def _probe_defaults(check: Any) -> None:
    if isinstance(check, dict):
        for key, value in (("timeoutSeconds", 1), ("periodSeconds", 10), ("successThreshold", 1),
                           ("failureThreshold", 3)):
            _set(check, key, value)


def _container(container: dict[str, Any], host_network: bool, is_pod: bool) -> None:
    _set(container, "terminationMessagePath", "/dev/termination-log")
    _set(container, "terminationMessagePolicy", "File")
    if container.get("image"):
        _set(container, "imagePullPolicy", image_pull_policy(str(container["image"])))
    for port in _items(container.get("ports")):
        _set(port, "protocol", "TCP")
        if is_pod and host_network and port.get("containerPort") is not None:  # SetDefaults_Pod: Pods only
            _set(port, "hostPort", port["containerPort"])
    for field in ("livenessProbe", "readinessProbe", "startupProbe"):
        _probe_defaults(container.get(field))
    for env in _items(container.get("env")):
        field_ref = _dict(_dict(env.get("valueFrom")).get("fieldRef"))
        if field_ref:
            _set(field_ref, "apiVersion", "v1")
    resources = container.get("resources")
    if is_pod and isinstance(resources, dict) and isinstance(resources.get("limits"), dict):  # Pods, not templates
        if resources.get("requests") is None:
            resources["requests"] = {}
        if isinstance(resources["requests"], dict):
            for name, value in resources["limits"].items():
                resources["requests"].setdefault(name, value)  # SetDefaults_Pod: a limit stands in for its request


def pod_spec(spec: dict[str, Any], is_pod: bool = False) -> None:
    """SetDefaults_PodSpec and what it calls, in place; ``is_pod``: SetDefaults_Pod's extras too (requests
    from limits, hostPort with hostNetwork), which the API server applies to Pods, not to templates."""
    _set(spec, "dnsPolicy", "ClusterFirst")
    _set(spec, "restartPolicy", "Always")
    _set(spec, "terminationGracePeriodSeconds", 30)
    _set(spec, "securityContext", {})
    _set(spec, "schedulerName", "default-scheduler")
    _set(spec, "enableServiceLinks", True)
    host_network = spec.get("hostNetwork") is True
    for key in ("initContainers", "containers", "ephemeralContainers"):
        for container in _items(spec.get(key)):
            _container(container, host_network, is_pod)
    for volume in _items(spec.get("volumes")):
        for source in ("configMap", "secret"):
            if isinstance(volume.get(source), dict):
                _set(volume[source], "defaultMode", DEFAULT_FILE_MODE)
        if isinstance(volume.get("hostPath"), dict):
            _set(volume["hostPath"], "type", "")


def _template(obj: dict[str, Any], *path: str) -> None:
    node: Any = obj
    for key in path:
        node = _dict(node).get(key)
    if isinstance(node, dict):
        pod_spec(node)


def _deployment(obj: dict[str, Any]) -> None:
    spec = _dict(obj.get("spec"))
    _set(spec, "replicas", 1)
    strategy = spec.setdefault("strategy", {}) if isinstance(spec.get("strategy", {}), dict) else {}
    _set(strategy, "type", "RollingUpdate")
    if strategy.get("type") == "RollingUpdate":
        rolling = strategy.setdefault("rollingUpdate", {})
        _set(rolling, "maxUnavailable", "25%")
        _set(rolling, "maxSurge", "25%")
    _set(spec, "revisionHistoryLimit", 10)
    _set(spec, "progressDeadlineSeconds", 600)
    _template(obj, "spec", "template", "spec")


def _daemonset(obj: dict[str, Any]) -> None:
    spec = _dict(obj.get("spec"))
    strategy = spec.setdefault("updateStrategy", {}) if isinstance(spec.get("updateStrategy", {}), dict) else {}
    _set(strategy, "type", "RollingUpdate")
    if strategy.get("type") == "RollingUpdate":
        rolling = strategy.setdefault("rollingUpdate", {})
        _set(rolling, "maxUnavailable", 1)
        _set(rolling, "maxSurge", 0)
    _set(spec, "revisionHistoryLimit", 10)
    _template(obj, "spec", "template", "spec")


def _statefulset(obj: dict[str, Any]) -> None:
    spec = _dict(obj.get("spec"))
    _set(spec, "replicas", 1)
    _set(spec, "podManagementPolicy", "OrderedReady")
    strategy = spec.setdefault("updateStrategy", {}) if isinstance(spec.get("updateStrategy", {}), dict) else {}
    _set(strategy, "type", "RollingUpdate")
    if strategy.get("type") == "RollingUpdate":
        _set(strategy.setdefault("rollingUpdate", {}), "partition", 0)
    _set(spec, "revisionHistoryLimit", 10)
    _template(obj, "spec", "template", "spec")


def _job(obj: dict[str, Any]) -> None:
    spec = _dict(obj.get("spec"))
    if spec.get("completions") is None and spec.get("parallelism") is None:
        spec["completions"], spec["parallelism"] = 1, 1
    _set(spec, "parallelism", 1)
    _set(spec, "backoffLimit", 6)
    _set(spec, "completionMode", "NonIndexed")
    _set(spec, "suspend", False)
    _set(spec, "podReplacementPolicy", "Failed" if spec.get("podFailurePolicy") is not None else "TerminatingOrFailed")
    _template(obj, "spec", "template", "spec")


def _pod(obj: dict[str, Any]) -> None:
    spec = obj.get("spec")
    if isinstance(spec, dict):
        pod_spec(spec, is_pod=True)


def _service(obj: dict[str, Any]) -> None:
    spec = _dict(obj.get("spec"))
    _set(spec, "type", "ClusterIP")
    _set(spec, "sessionAffinity", "None")
    if spec.get("type") in ("ClusterIP", "NodePort", "LoadBalancer"):
        _set(spec, "internalTrafficPolicy", "Cluster")
    for port in _items(spec.get("ports")):
        _set(port, "protocol", "TCP")
        if port.get("port") is not None:
            _set(port, "targetPort", port["port"])


BUILT_IN = {("v1", "Pod"): _pod, ("apps/v1", "Deployment"): _deployment, ("apps/v1", "DaemonSet"): _daemonset,
            ("apps/v1", "StatefulSet"): _statefulset, ("batch/v1", "Job"): _job, ("v1", "Service"): _service}


@lru_cache(maxsize=1)
def crd_defaults() -> dict[str, Any]:
    from .. import data_tables

    return data_tables.load(data_tables.DATA_DIR / "crd_defaults.yaml") or {}


def _crd_table(api_version: str, kind: str, installed: Mapping[str, str]) -> dict[str, Any]:
    """The defaults of the CRD version in use: the one held at the release ``installed`` names for its project
    (``{"volcano": "1.15.1"}``), else the newest one held at or before it, else the newest held."""
    sources = _dict(_dict(crd_defaults().get(kind)).get(api_version))
    if not sources:
        return {}
    for project, version in installed.items():
        same = [s for s in sources if s.split()[0].rsplit("/", 1)[-1] == project]
        older = [s for s in same if _tag_key(s.split()[1]) <= _tag_key(str(version))]
        if older:
            return _dict(sources[max(older, key=lambda s: _tag_key(s.split()[1]))])
    return _dict(sources[list(sources)[-1]])  # the table lists each kind's sources oldest first


def _tag_key(tag: str) -> tuple[Any, ...]:
    return version_key(tag.replace("release-", "").lstrip("v"))


def _apply_path(node: Any, parts: list[str], value: Any) -> None:
    if not parts or not isinstance(node, (dict, list)):
        return
    head, rest = parts[0], parts[1:]
    if head == "[]":
        for item in node if isinstance(node, list) else []:
            _apply_path(item, rest, value)
        return
    if not isinstance(node, dict):
        return
    if head == "{}":  # every value of a map (additionalProperties)
        for item in node.values():
            _apply_path(item, rest, value)
        return
    if not rest:
        if head not in node:  # structural defaulting: an absent field, under a parent that exists
            node[head] = copy.deepcopy(value)
        return
    _apply_path(node.get(head), rest, value)


def defaulted(obj: dict[str, Any], *, volcano_version: Optional[str] = None,
              installed: Optional[Mapping[str, str]] = None) -> dict[str, Any]:
    """A copy of ``obj`` with what the API server (and, for Volcano Jobs and Queues, Volcano's mutating webhook)
    adds. ``installed``: project -> release (``--chart``, the spec's versions) picks the CRD version."""
    from .volcano_webhook import mutate, mutate_queue

    out = copy.deepcopy(obj)
    api_version, kind = str(out.get("apiVersion", "")), str(out.get("kind", ""))
    built_in = BUILT_IN.get((api_version, kind))
    if built_in is not None:
        built_in(out)
        return out
    releases = dict(installed or {})
    if volcano_version:
        releases["volcano"] = volcano_version
    for path, value in _crd_table(api_version, kind, releases).items():
        _apply_path(out, str(path).split("."), value)
    if (api_version, kind) == (VOLCANO_JOB_API, "Job"):
        out = mutate(out)
    elif (api_version, kind) == (VOLCANO_QUEUE_API, "Queue"):
        out = mutate_queue(out)
    return out


def knows(obj: dict[str, Any]) -> bool:
    """Whether :func:`defaulted` has anything for this kind."""
    api_version, kind = str(obj.get("apiVersion", "")), str(obj.get("kind", ""))
    return (api_version, kind) in BUILT_IN or bool(_dict(crd_defaults().get(kind)).get(api_version)) \
        or (api_version, kind) == (VOLCANO_QUEUE_API, "Queue")
