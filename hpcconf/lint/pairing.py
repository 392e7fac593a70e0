"""Which files of one folder form one deployment, for the rules that compare files (``scope="set"``).

A folder is not a deployment: a repository's ``examples/`` holds independent samples, and a folder of files
copied from several repositories holds files that never met. Files of one folder are compared only where
something ties them together (issue 20): a kustomization or a Helm chart above them (the engine's
deployment directory), the NHC layout (custom tests in ``scripts/`` beside the conf), a spec that generated
them, the same per-path settings, or a reference one makes to the other:

- one names the other's file (``kubectl apply -f job.yaml``, ``helm install -f gpu-operator-values.yaml``,
  ``COPY ndv4-topo.xml``, ``source azure_gpu_count.nhc``);
- one names, in a field that refers to another object, an object the other defines (a pod's
  ``k8s.v1.cni.cncf.io/networks`` entry naming a HostDeviceNetwork, a ``serviceAccountName`` naming a
  ServiceAccount, a network's nv-ipam ``poolName`` naming an IPPool, a volume's ConfigMap); a name that is
  merely equal (two samples' containers both called ``worker``) ties nothing;
- a pod requests the device resource the other's network provides (``nvidia.com/hostdev`` in its limits and a
  HostDeviceNetwork's ``resourceName: hostdev``, a NetworkAttachmentDefinition's
  ``k8s.v1.cni.cncf.io/resourceName``);
- a Dockerfile copies a file the other names, by a name of its own (a job's or conf's
  ``/workspace/ndv4-topo.xml`` and ``COPY ndv4-topo.xml .``); names every project uses (``nccl.conf``,
  ``requirements.txt``, ``values.yaml``...) tie nothing, and two confs naming Azure's topology file are not
  one deployment for it;
- a ``slurm.conf`` and the ``gres.conf`` (``cgroup.conf``, ``topology.conf``) of its directory, which Slurm reads
  from there (or ``X.slurm.conf`` and ``X.gres.conf``).

A check function a conf calls and a ``*.nhc`` file in the same folder defines is no tie: NHC sources its
``scripts/`` directory, not the conf's folder (LBNL NHC 1.4.3 ``nhc``: ``INCDIR`` is ``$CONFDIR/scripts``),
and a folder of copied confs holds forks of the same checks.

Files the evidence joins are compared as one set; what a comparison across the rest of the folder would
find is kept as info that names the assumption (the files only share a folder).
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from pathlib import Path
from typing import Any

from ..artifacts import Kind
from .document import Document

# Names too common to tie two files together: a queue or namespace called "default" is in every sample.
_COMMON_NAMES = frozenset({"default", "main", "test", "config", "values", "kube-system", "true", "false"})
# A file name as another file would write it: a word with an extension of a kind people hand to tools.
_FILE_NAME = re.compile(r"(?<![\w.-])([\w.-]+\.(?:ya?ml|json|xml|conf|nhc|sh|txt|env|cfg|j2|py|toml))(?![\w-])")
_MIN_NAME = 3
# File names too common to say two files work on the same thing.
_COMMON_FILES = frozenset({"nccl.conf", "requirements.txt", "values.yaml", "config.yaml", "config.yml", "config.json",
                           "setup.py", "main.py", "train.py", "run.sh", "entrypoint.sh", "start.sh", "env.sh",
                           "kustomization.yaml", "chart.yaml", "docker-compose.yml", "docker-compose.yaml",
                           "environment.yml", "hostfile.txt", "settings.json", "pyproject.toml", "nhc.conf",
                           "slurm.conf", "gres.conf", "topo.xml", "topology.xml", "job.yaml", "job.sh", "test.sh"})


def _union(parent: dict[str, str], a: str, b: str) -> None:
    root_a, root_b = _find(parent, a), _find(parent, b)
    if root_a != root_b:
        parent[max(root_a, root_b)] = min(root_a, root_b)


def _find(parent: dict[str, str], item: str) -> str:
    while parent[item] != item:
        parent[item] = parent[parent[item]]
        item = parent[item]
    return item


def _defined_names(docs: Iterable[Document]) -> set[str]:
    """The metadata names of the Kubernetes objects a file defines."""
    names = set()
    for doc in docs:
        data = doc.data
        if isinstance(data, dict) and isinstance(data.get("metadata"), dict) and "kind" in data:
            name = data["metadata"].get("name")
            if isinstance(name, str) and len(name) >= _MIN_NAME and name.lower() not in _COMMON_NAMES:
                names.add(name)
    return names


# Fields whose value names another object: a pod's service account, volumes' ConfigMaps, Secrets and claims,
# its RuntimeClass and PriorityClass, a Volcano job's queue; ``name`` under a reference block (configMap,
# secretRef, roleRef...) or a RoleBinding's subjects.
_REFERENCE_KEYS = frozenset({"serviceAccountName", "serviceAccount", "claimName", "secretName", "runtimeClassName",
                             "priorityClassName", "queue", "networkName", "ipPoolName", "ippool", "poolName"})
_NAMED_REFERENCES = frozenset({"configMap", "configMapRef", "configMapKeyRef", "secretRef", "secretKeyRef", "roleRef",
                               "subjects", "persistentVolumeClaim", "imagePullSecrets", "scaleTargetRef"})
# A network attachment annotation: "a,b", "ns/a", or JSON [{"name": "a", "namespace": "ns"}]; nv-ipam's poolName
# inside a NetworkAttachmentDefinition's config JSON.
_JSON_NAME = re.compile(r'"(?:name|poolName)"\s*:\s*"([^"]+)"')


def _referenced_words(docs: Iterable[Document]) -> set[str]:
    """The names a file's objects refer to: reference fields (a service account, a ConfigMap, a queue...), the
    network attachment annotation's entries, and the pool names in a network's ipam config."""
    words: set[str] = set()

    def add(value: Any) -> None:
        if isinstance(value, str):
            for part in re.split(r"[,\s]+", value):
                if part:
                    words.add(part.split("/", 1)[-1].split("@", 1)[0])

    def walk(node: Any, parent: str) -> None:
        if isinstance(node, dict):
            for key, value in node.items():
                key = str(key)
                if key in _REFERENCE_KEYS or (key == "name" and parent in _NAMED_REFERENCES):
                    add(value)
                elif key.endswith("cni.cncf.io/networks") and isinstance(value, str):
                    names = _JSON_NAME.findall(value)
                    for name in names or [value]:
                        add(name)
                elif key in ("config", "ipam") and isinstance(value, str):
                    words.update(_JSON_NAME.findall(value))
                walk(value, key)
        elif isinstance(node, list):
            for item in node:
                walk(item, parent)

    for doc in docs:
        walk(doc.data, "")
    return words


def _resources(docs: Iterable[Document]) -> tuple[set[str], set[str]]:
    """(device resources the file's pods request, resources its networks provide): keys with a ``/`` under
    ``limits``/``requests``, and the values of ``resourceName`` keys (HostDeviceNetwork, SriovNetwork, a
    NetworkAttachmentDefinition's ``k8s.v1.cni.cncf.io/resourceName`` annotation)."""
    requested: set[str] = set()
    provided: set[str] = set()

    def walk(node: Any) -> None:
        if isinstance(node, dict):
            for key, value in node.items():
                if key in ("limits", "requests") and isinstance(value, dict):
                    requested.update(str(name) for name in value if "/" in str(name))
                elif str(key).endswith("resourceName") and isinstance(value, str) and value:
                    provided.add(value)
                walk(value)
        elif isinstance(node, list):
            for item in node:
                walk(item)

    for doc in docs:
        walk(doc.data)
    return requested, provided


def _serves(requested: set[str], provided: set[str]) -> bool:
    """Whether a provided resource is one requested (``hostdev`` is ``nvidia.com/hostdev`` under the network
    operator's default prefix, or any prefix a NicClusterPolicy gives it)."""
    return any(want == have or ("/" not in have and want.endswith("/" + have)) for want in requested
               for have in provided)


def _file_names(text: str) -> set[str]:
    return {match.group(1).rsplit("/", 1)[-1] for match in _FILE_NAME.finditer(text)}


def components(group: list[Document]) -> list[list[Document]]:
    """The group's documents split into the sets the evidence above joins (a file's documents stay together);
    in the order the documents came."""
    by_file: dict[str, list[Document]] = {}
    for doc in group:
        by_file.setdefault(doc.path, []).append(doc)
    files = sorted(by_file)
    parent = {path: path for path in files}
    base = {path: Path(by_file[path][0].source_path or path).name for path in files}
    texts = {path: by_file[path][0].text for path in files}
    mentioned = {path: _file_names(texts[path]) for path in files}
    defined = {path: _defined_names(by_file[path]) for path in files}
    referenced = {path: _referenced_words(by_file[path]) - defined[path] for path in files}
    contexts = {path: by_file[path][0].context for path in files}
    resources = {path: _resources(by_file[path]) for path in files}
    images = {path: by_file[path][0].kind == Kind.DOCKERFILE for path in files}
    for index, first in enumerate(files):
        for second in files[index + 1:]:
            if _joined(first, second, base, mentioned, defined, referenced, contexts, images) \
                    or _serves(resources[first][0], resources[second][1]) \
                    or _serves(resources[second][0], resources[first][1]):
                _union(parent, first, second)
    parts: dict[str, list[Document]] = {}
    for doc in group:
        parts.setdefault(_find(parent, doc.path), []).append(doc)
    return list(parts.values())


def _joined(first: str, second: str, base: dict[str, str], mentioned: dict[str, set[str]],
            defined: dict[str, set[str]], referenced: dict[str, set[str]], contexts: dict[str, Any],
            images: dict[str, bool]) -> bool:
    if contexts[first] is not None and contexts[first] is contexts[second]:
        return True  # one per-path settings table (or one compiled spec) covers both
    if base[second] in mentioned[first] or base[first] in mentioned[second]:
        return True
    if _slurm_pair(first, second, base):
        return True
    if images[first] or images[second]:
        shared = {name for name in mentioned[first] & mentioned[second] if name.lower() not in _COMMON_FILES}
        if shared - set(base.values()):
            return True  # the image copies a file the other one reads (a topology file the job passes)
    return bool(defined[second] & referenced[first] or defined[first] & referenced[second])


_SLURM_FILES = ("slurm.conf", "gres.conf", "cgroup.conf", "topology.conf")


def _slurm_pair(first: str, second: str, base: dict[str, str]) -> bool:
    """A slurm.conf and a gres.conf (cgroup.conf, topology.conf) of one directory: slurmd and slurmctld read them
    from the directory of slurm.conf (gres.conf(5): "the file will always be located in the same directory as the
    slurm.conf file"), so they are one configuration; ``ndv5.slurm.conf`` and ``ndv5.gres.conf`` too (one prefix)."""
    if Path(first).parent != Path(second).parent:
        return False

    def split(name: str) -> tuple[str, str] | None:
        lower = name.lower()
        for conf in _SLURM_FILES:
            if lower == conf:
                return "", conf
            for sep in (".", "-", "_"):
                if lower.endswith(sep + conf):
                    return lower[: -len(conf) - 1], conf
        return None

    a, b = split(base[first]), split(base[second])
    return a is not None and b is not None and a[0] == b[0] and a[1] != b[1] and "slurm.conf" in (a[1], b[1])


def assumption_note(directory: str) -> str:
    """What a finding that compares files of one folder assumes, for its message."""
    return (f" (this assumes the files of {directory or '.'} are one deployment, but they only share the folder: "
            "no kustomization or chart lists them, neither names the other or an object the other defines)")
