"""Kubernetes pod rules that read the deployment around a pod (K8S006, K8S007): the gpu-operator values linted with
it (CDI, RuntimeClass), the ConfigMap holding a health-check conf.

Set rules (``scope="set"``, once per deployment), kept apart from :mod:`hpcconf.lint.rules.k8s`, whose
per-document rules a lint run skips when it has no pod files.
"""

from __future__ import annotations

import re
from typing import Any, Iterator

from ...artifacts import Kind
from ...diagnostics import Diagnostic, Severity
from ...knowledge import aznhc, charts
from ...parsers.k8s import POD_KINDS, PodRef, as_dict, command_text, gpu_count, pods
from ...parsers.shell_commands import container_commands
from ...rules_registry import rule
from ..chart_version import resolve_chart_version
from ..context import LintContext
from ..document import Document, DocumentSet, per_deployment

# --------------------------------------------------------------------------- K8S006

# Tools that exist in a container only through the NVIDIA runtime's driver mounts (the driver container's
# /run/nvidia/driver, injected as CDI devices): a pod that runs them (as a command, not as text) expects that runtime.
NVIDIA_RUNTIME_TOOLS = ("nvidia-smi", "dcgmi", "nv-hostengine", "nvbandwidth", "nvidia-bug-report.sh")
NVIDIA_NHC_IMAGE = aznhc.IMAGE_PREFIX + "nv"  # Azure's NVIDIA health-check image (check_gpu_count runs nvidia-smi)
# NVIDIA_VISIBLE_DEVICES values that ask the runtime for no GPU.
NO_GPU_VALUES = {"", "void", "none"}
CDI_ANNOTATION_PREFIXES = ("cdi.k8s.io/", "nvidia.cdi.k8s.io/")


def _expects_nvidia_runtime(container: dict[str, Any]) -> str | None:
    """Why the container expects the NVIDIA runtime to give it the driver, or None."""
    for item in container.get("env") or []:
        if isinstance(item, dict) and item.get("name") == "NVIDIA_VISIBLE_DEVICES" \
                and str(item.get("value", "")).strip().lower() not in NO_GPU_VALUES:
            return f"sets NVIDIA_VISIBLE_DEVICES={item.get('value')}"
    tool = next((name for name in container_commands(container) if name in NVIDIA_RUNTIME_TOOLS), None)
    if tool:
        return f"runs {tool}"
    image = str(container.get("image") or "")
    return f"runs {image.split('@')[0].split(':')[0]} (its checks call nvidia-smi)" if image.startswith(NVIDIA_NHC_IMAGE) else None


def _operator_values(docs: DocumentSet) -> Document | None:
    values = docs.of_kind(Kind.HELM_GPU_OPERATOR)
    return values[0] if values else None


def _cdi_state(values: Document | None, version: str | None) -> bool | None:
    """CDI on (True), off (False) or unknown (None), from the values and the chart's default at ``version``."""
    data = as_dict(values.data) if values is not None else {}
    explicit = as_dict(data.get("cdi")).get("enabled")
    toolkit_env = as_dict(data.get("toolkit")).get("env") or []
    if any(isinstance(e, dict) and e.get("name") == "NVIDIA_RUNTIME_SET_AS_DEFAULT" and str(e.get("value")).lower() == "true"
           for e in toolkit_env):
        return False  # nvidia stays containerd's default runtime (transformToolkitCtrForCDI's documented override)
    if as_dict(data.get("toolkit")).get("enabled") is False:
        return None  # the operator leaves containerd as it found it (AKS's own GPU setup makes nvidia the default)
    if isinstance(explicit, bool):
        return explicit
    return charts.gpu_operator_cdi_by_default(version) if version else None


@rule(code="K8S006", name="nvidia-runtime-without-runtime-class", severity=Severity.ERROR,
      kinds=(*POD_KINDS, Kind.HELM_GPU_OPERATOR), scope="set", since="0.3.0")
@per_deployment
def nvidia_runtime_without_runtime_class(docs: DocumentSet, ctx: LintContext) -> Iterator[Diagnostic]:
    """A pod expects the NVIDIA container runtime but neither names its RuntimeClass nor requests a GPU.

    ## What it catches
    A container that sets ``NVIDIA_VISIBLE_DEVICES`` (other than ``void``/``none``), runs
    ``nvidia-smi``, ``dcgmi``, ``nv-hostengine`` or ``nvbandwidth``, or runs Azure's NVIDIA health-check image
    (``mcr.microsoft.com/aznhc/aznhc-nv``), in a pod without
    ``runtimeClassName`` and without a CDI annotation, whose container requests no ``nvidia.com/gpu``
    and claims no DRA device (``resources.claims``).
    Health-check and monitoring DaemonSets are written this way so as not to hold the GPUs a job needs.
    A tool counts when the script runs it as a program (also through ``$(...)``, ``sh -c``, ``timeout``,
    ``sudo``): its name inside an ``echo`` argument, a quoted string or a comment is text. A container
    whose ``resources.claims`` names one of the pod's ``resourceClaims`` gets its GPUs from the DRA driver,
    which hands the runtime CDI devices for them, so it needs no RuntimeClass.

    Severity follows the gpu-operator of the deployment (the spec's pin, ``--chart gpu-operator=V``, a
    per-path setting, or gpu-operator values linted with the pod and their ``Chart.lock``): an error where
    CDI is on (25.10.0 and newer unless ``cdi.enabled: false``), silent where it is off, info where the
    version is not known or the values turn the operator's toolkit off (``toolkit.enabled: false``: who
    configured containerd, e.g. AKS's own GPU driver install, then decides the default runtime).

    ## Why is this bad?
    With CDI, gpu-operator no longer makes ``nvidia`` containerd's default runtime:
    ``transformToolkitCtrForCDI`` sets ``NVIDIA_RUNTIME_SET_AS_DEFAULT=false``, and "the 'nvidia' runtime
    will be set as the runtime class for our management containers so that they get access to all GPUs"
    (NVIDIA/gpu-operator ``controllers/object_controls.go`` at v26.7.0; ``cdi.enabled`` defaults to true
    from v25.10.0, ``api/nvidia/v1/clusterpolicy_types.go`` ``IsEnabled``). The pod then runs under runc:
    ``NVIDIA_VISIBLE_DEVICES`` is an ordinary variable, no driver library or ``nvidia-smi`` is mounted,
    and even a privileged container finds no working GPU. Azure's health checks fail
    ``check_gpu_count`` on every node; a DaemonSet that taints failing nodes then takes the pool away.

    ## Example
    ```yaml
    # gpu-operator 26.7.0
    spec:
      containers:
        - name: nhc
          image: mcr.microsoft.com/aznhc/aznhc-nv
          env: [{name: NVIDIA_VISIBLE_DEVICES, value: all}]
    ```

    ## Fix
    Add ``runtimeClassName: nvidia`` to the pod spec (the gpu-operator's ``operator.runtimeClass``, whose
    RuntimeClass the operator creates), or request ``nvidia.com/gpu`` when the pod may hold the GPUs.
    """
    values = _operator_values(docs)
    runtime_class = str(as_dict(as_dict(values.data if values else {}).get("operator")).get("runtimeClass")
                        or charts.GPU_OPERATOR_RUNTIME_CLASS)
    for doc in docs.of_kind(*POD_KINDS):
        doc_ctx = doc.context_or(ctx)
        resolved = resolve_chart_version(doc_ctx, "gpu-operator", values) if values is not None \
            else resolve_chart_version(doc_ctx, "gpu-operator")
        cdi = _cdi_state(values, resolved.version)
        if cdi is False:
            continue
        for pod in pods(doc):
            if pod.spec.get("runtimeClassName") or any(str(k).startswith(CDI_ANNOTATION_PREFIXES) for k in pod.annotations):
                continue
            for path, container in pod.containers(init=True):
                why = _expects_nvidia_runtime(container)
                if why is None or gpu_count(container) or as_dict(container.get("resources")).get("claims"):
                    continue
                name = container.get("name", "?")
                if cdi:
                    yield doc.at_path(path + ("name",), f"container '{name}' {why} but the pod has no runtimeClassName "
                                      f"and requests no nvidia.com/gpu: with gpu-operator {resolved.version} (CDI on, "
                                      "runc the default runtime) it sees no GPU driver",
                                      hint=f"add runtimeClassName: {runtime_class} to the pod spec")
                else:
                    yield doc.at_path(path + ("name",), f"container '{name}' {why} but the pod has no runtimeClassName "
                                      "and requests no nvidia.com/gpu: under gpu-operator 25.10 or newer (CDI on by "
                                      "default) it sees no GPU driver; the deployment's gpu-operator version is not known",
                                      hint=f"add runtimeClassName: {runtime_class} to the pod spec, or pass "
                                           "--chart gpu-operator=VERSION", severity=Severity.INFO)


# --------------------------------------------------------------------------- K8S007

def _volumes(pod: PodRef) -> dict[str, dict[str, Any]]:
    return {str(v["name"]): v for v in pod.spec.get("volumes") or [] if isinstance(v, dict) and v.get("name")}


def _mounted_conf(pod: PodRef, container: dict[str, Any], config_maps: dict[str, dict[str, Any]]) -> tuple[bool, str | None]:
    """(a conf is mounted where the entrypoint reads it, its text when the ConfigMap is among the linted files)."""
    volumes = _volumes(pod)
    for mount in container.get("volumeMounts") or []:
        if not isinstance(mount, dict):
            continue
        path = str(mount.get("mountPath", "")).rstrip("/")
        target = f"{aznhc.CONF_DIR}/{aznhc.CONF_FILE}"
        if path not in (aznhc.CONF_DIR, target):
            continue
        source = as_dict(volumes.get(str(mount.get("name")), {}).get("configMap"))
        data = as_dict(config_maps.get(str(source.get("name")), {}).get("data"))
        key = str(mount.get("subPath") or aznhc.CONF_FILE)
        return True, (str(data[key]) if key in data else None)
    return False, None


# A command that links, copies or streams a file to /azure-nhc/syslog (ln -sf "$log" /azure-nhc/syslog).
_LINKS_SYSLOG = re.compile(r"(?:\b(?:ln|cp|install|rsync)\b[^\n;&|]*\s|>\s*)[\"']?" + re.escape(aznhc.SYSLOG) + r"[\"']?(?=[\s;&|)]|$)")


def _kernel_log_mount(pod: PodRef, container: dict[str, Any]) -> tuple[bool, str | None]:
    """(the checks find the kernel log at /azure-nhc/syslog, where the node's log is mounted when they do not).

    A mount at /azure-nhc/syslog reads it; a hostPath of the node's ``/``, ``/var/log`` or a log file mounted
    elsewhere reads it only when the container's script links or copies it to /azure-nhc/syslog."""
    volumes = _volumes(pod)
    mounted_at = None
    for mount in container.get("volumeMounts") or []:
        if not isinstance(mount, dict):
            continue
        path = str(mount.get("mountPath", "")).rstrip("/")
        if path == aznhc.SYSLOG:
            return True, None
        host_path = as_dict(volumes.get(str(mount.get("name")), {}).get("hostPath"))
        if "path" in host_path and str(host_path["path"]).rstrip("/") in ("", aznhc.HOST_LOG_DIR, *aznhc.KERNEL_LOGS):
            mounted_at = path or "/"
    if mounted_at is not None and _LINKS_SYSLOG.search(command_text(container)):
        return True, None
    return False, mounted_at


_UNSEEN = {"check_gpu_xid": "XID errors", "check_ib_link_flapping": "link flaps"}  # what each log check would catch


def _has_memory_shm(pod: PodRef, container: dict[str, Any]) -> bool:
    if pod.spec.get("hostIPC") is True:
        return True
    volumes = _volumes(pod)
    return any(isinstance(m, dict) and str(m.get("mountPath", "")).rstrip("/") == "/dev/shm"
               and as_dict(volumes.get(str(m.get("name")), {}).get("emptyDir")).get("medium") == "Memory"
               for m in container.get("volumeMounts") or [])


@rule(code="K8S007", name="azure-nhc-without-host-inputs", severity=Severity.WARNING, kinds=POD_KINDS, scope="set", since="0.3.0")
@per_deployment
def azure_nhc_without_host_inputs(docs: DocumentSet, ctx: LintContext) -> Iterator[Diagnostic]:
    """A pod runs Azure's health checks without the node's kernel log (or /dev/shm) Azure gives them.

    ## What it catches
    A container running ``mcr.microsoft.com/aznhc/aznhc-*`` or ``aznhc-entrypoint.sh`` that has no
    mount at ``/azure-nhc/syslog``, nor a hostPath of the node's ``/var/log`` (or ``/``, or the log file)
    that its script links or copies to ``/azure-nhc/syslog`` (``ln -sf``, ``cp``) (warning when its conf runs
    ``check_gpu_xid`` or ``check_ib_link_flapping``, or when no conf is mounted and the image's default conf
    for the size runs them; info when the conf's ConfigMap is not among the linted files); and one whose conf
    runs an NCCL/RCCL check with the container's default 64 MiB ``/dev/shm`` (warning; info when no conf is
    mounted and the image's default conf for the node's size decides).

    ## Why is this bad?
    Azure's ``run-health-checks.sh`` (Azure/azurehpc-health-checks) mounts the host's ``/var/log/syslog``
    (else ``/var/log/messages``) at ``/azure-nhc/syslog`` and runs the container with ``--shm-size=8g``.
    ``customTests/azure_gpu_xid.nhc`` and ``azure_ib_link_flapping.nhc`` read that file and, when it is
    missing, log "not found. Skipping" and pass: a node with GPU XID errors or a flapping IB link is
    declared healthy. Every NVIDIA GPU size's conf upstream runs ``check_gpu_xid``; the AMD sizes'
    (``nd96isr_mi300x_v5``, ``nd96asr_mi200_v4``, image ``aznhc-rocm``) run ``check_ib_link_flapping``.
    NCCL keeps its shared-memory segments in ``/dev/shm``: ``ncclShmOpen`` (NVIDIA/nccl
    ``src/misc/shmutils.cc``, used by the SHM transport ``src/transport/shm.cc`` and the proxy) extends each
    file with ``posix_fallocate`` and fails communicator init with "No space left on device" when the
    tmpfs is full (NVIDIA/nccl issues #290 and #342: the 64 MB default of a container). The NCCL check then
    fails on a healthy node, which the DaemonSet taints.

    ## Severity
    Warning: a missing kernel log lets a node with XID errors or link flaps pass when the conf runs
    ``check_gpu_xid``/``check_ib_link_flapping``; a 64 MiB ``/dev/shm`` under the conf's NCCL/RCCL check can
    fail NCCL's init and take a healthy node out of the pool. Info where the conf is not among the linted
    files, or where no conf is mounted and the image's default conf for the node's size decides.

    ## Example
    ```yaml
    containers:
      - name: nhc
        image: mcr.microsoft.com/aznhc/aznhc-nv
        volumeMounts: [{name: conf, mountPath: /azure-nhc/conf}]   # no kernel log
    ```

    ## Fix
    Mount the node's ``/var/log`` read-only (hostPath, type Directory) and link ``syslog`` (else
    ``messages``) to ``/azure-nhc/syslog`` before the entrypoint, or mount the file itself there; mount an
    ``emptyDir {medium: Memory, sizeLimit: 8Gi}`` at ``/dev/shm``.
    """
    config_maps = {str(as_dict(d.data.get("metadata")).get("name")): d.data for d in docs.of_kind(*POD_KINDS)
                   if isinstance(d.data, dict) and d.data.get("kind") == "ConfigMap"}
    for doc in docs.of_kind(*POD_KINDS):
        for pod in pods(doc):
            for path, container in pod.containers():
                if not aznhc.runs_azure_nhc(str(container.get("image", "")), command_text(container)):
                    continue
                name = container.get("name", "?")
                image = str(container.get("image", ""))
                mounted, conf = _mounted_conf(pod, container, config_maps)
                reads_log, log_mounted_at = _kernel_log_mount(pod, container)
                if not reads_log:
                    # Whether the checks that run read the log: the default conf's do; a conf not linted may.
                    reads = True if not mounted else None if conf is None else any(c in conf for c in aznhc.SYSLOG_CHECKS)
                    if reads is not False:
                        what = ("its conf runs " + "/".join(c for c in aznhc.SYSLOG_CHECKS if conf and c in conf)) if conf \
                            else f"the image's default conf runs {aznhc.default_conf_syslog_check(image)}" if not mounted \
                            else "if its conf runs check_gpu_xid or check_ib_link_flapping (the ConfigMap was not linted)"
                        where = f"without the node's kernel log at {aznhc.SYSLOG}" if log_mounted_at is None else \
                            (f"with the node's log mounted at {log_mounted_at} but nothing linking it to {aznhc.SYSLOG} "
                             "(the only path the checks read)")
                        checks = [c for c in aznhc.SYSLOG_CHECKS if (c in conf if conf else c in what)]
                        unseen = " and ".join(_UNSEEN[c] for c in checks or aznhc.SYSLOG_CHECKS)
                        yield doc.at_path(path + ("name",),
                                          f"container '{name}' runs Azure's health checks {where}: {what}, and they skip "
                                          f"and pass without it ({unseen} go unseen)",
                                          hint=f"mount the node's {aznhc.HOST_LOG_DIR} read-only and link syslog (else messages) "
                                               f"to {aznhc.SYSLOG}, as run-health-checks.sh mounts it",
                                          severity=None if reads else Severity.INFO)
                collective = conf is not None and any(check in conf for check in aznhc.COLLECTIVE_CHECKS)
                if (collective or not mounted) and not _has_memory_shm(pod, container):
                    what = "runs Azure's NCCL/RCCL health check" if collective else \
                        "runs the image's default conf (NCCL/RCCL all-reduce on ND sizes)"
                    yield doc.at_path(path + ("name",),
                                      f"container '{name}' {what} with the container's 64 MiB /dev/shm: NCCL's "
                                      "shared-memory segments can fill it and fail init (ncclShmOpen: No space left on "
                                      f"device), failing a healthy node; run-health-checks.sh gives it {aznhc.SHM_SIZE}",
                                      hint=f"mount an emptyDir {{medium: Memory, sizeLimit: {aznhc.SHM_SIZE}}} at /dev/shm",
                                      severity=None if collective else Severity.INFO)
