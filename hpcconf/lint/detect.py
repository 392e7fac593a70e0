"""Recognise what a file is by its name and content, and split it into Documents.

Order: ``--kind`` if given; Dockerfile and nccl.conf by file name; NCCL XML by its root
element (``<system`` topology, ``<graphs`` graph); YAML by extension, then per YAML
document by content (hpcconf spec, Volcano Job, HostDeviceNetwork, NicClusterPolicy,
other Kubernetes objects, AzHOP config, Helm values by the ``Chart.yaml`` beside them, the chart name
in the file or directory name, or a single ``--chart``: see :mod:`hpcconf.lint.helm_values`); shell/sbatch scripts by shebang or ``.sh``; env files by ``.env`` or
by consisting only of ``KEY=VALUE`` / ``export KEY=VALUE`` lines.
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

from ..artifacts import Kind
from ..yamlpos import YamlDocument, load_documents
from .document import DisplayPath, Document
from .helm_values import (
    ChartPlacement,
    chart_by_content,
    chart_by_directory,
    chart_in_name,
    is_amd_gpu_operator_values,
    is_nvidia_gpu_operator_values,
    is_values_name,
    placements,
)

YAML_KINDS = {Kind.SPEC, Kind.VOLCANO_JOB, Kind.HOST_DEVICE_NETWORK, Kind.NIC_CLUSTER_POLICY, Kind.K8S_MANIFEST,
              Kind.HELM_NETWORK_OPERATOR, Kind.HELM_GPU_OPERATOR, Kind.HELM_NFD, Kind.AZHOP_CONFIG,
              Kind.HELM_AMD_GPU_OPERATOR, Kind.CCWS_PARAMETERS, Kind.CYCLECLOUD_SLURM_PARAMETERS}
JSON_KINDS = {Kind.CCWS_PARAMETERS, Kind.CYCLECLOUD_SLURM_PARAMETERS}  # read with the YAML loader (JSON is YAML 1.2)
HELM_KIND_BY_CHART = {"network-operator": Kind.HELM_NETWORK_OPERATOR, "gpu-operator": Kind.HELM_GPU_OPERATOR,
                      "node-feature-discovery": Kind.HELM_NFD, "amd-gpu-operator": Kind.HELM_AMD_GPU_OPERATOR}
# az-hop config.tpl.yml: `queues` plus the deployment's placement keys.
_AZHOP_KEYS = {"network", "location", "resource_group", "queue_manager", "cyclecloud", "ondemand", "scheduler"}
_XML_ROOT = re.compile(r"^\ufeff?\s*(?:<\?[^>]*\?>\s*|<!--.*?-->\s*|<!DOCTYPE[^>]*>\s*)*<(system|graphs)[\s>/]", re.S)
_DOCKERFILE_FROM = re.compile(r"^\s*FROM\s+\S", re.M | re.I)
_YAML_MANIFEST_START = re.compile(r"^(?:\s*(?:#[^\n]*)?\n)*(?:---\s*\n)?apiVersion:\s*\S")
_MANIFEST_KEY = re.compile(r"^(?:apiVersion|kind):", re.M)  # a Kubernetes object, not values: markup makes it a template
_ENV_LINE = re.compile(r"^\s*(export\s+)?[A-Za-z_][A-Za-z0-9_]*=")


# `Dockerfile.<variant>` names a Dockerfile (Dockerfile.cuda, Dockerfile.dev), but not when the suffix says
# the file is something else: a linter module (dockerfile.py), its docs, a template to render first.
_NOT_DOCKERFILE_SUFFIXES = {"py", "pyc", "md", "rst", "txt", "j2", "jinja", "jinja2", "tpl", "tmpl", "json", "yaml",
                            "yml", "toml", "sh", "go", "rs", "js", "ts", "html", "lock", "bak", "orig", "swp", "cfg"}


_NHC_LINE = re.compile(r"^[ \t]*[^#\s][^|\n]*\|\|[ \t]*check_\w+", re.M)


def is_dockerfile_name(name: str) -> bool:
    """``Dockerfile``, ``Containerfile``, a variant ``Dockerfile.<x>``, ``Dockerfile-<x>``, ``Dockerfile_<x>``
    (kubeflow's ``Dockerfile-mpi``), or ``<x>.Dockerfile`` (ROCm/MAD's ``pyt_huggingface.ubuntu.amd.Dockerfile``):
    the names ``docker build -f`` is given in real repositories."""
    lower = name.lower()
    for base in ("dockerfile", "containerfile"):
        if lower == base or lower.endswith("." + base):
            return True
        if lower.startswith((base + ".", base + "-", base + "_")):  # not dockerfile.py, Dockerfile-notes.md
            rest = lower[len(base):]
            return "." not in rest or rest.rsplit(".", 1)[1] not in _NOT_DOCKERFILE_SUFFIXES
    return False


# A file below a directory named for Dockerfiles (OCI's `Dockerfile/rccl-tests/<base image>`, `dockerfiles/<x>`)
# is one when its first instruction is one only a Dockerfile starts with.
_DOCKERFILE_DIRECTORIES = {"dockerfile", "dockerfiles", "containerfile", "containerfiles"}
_DOCKERFILE_START = re.compile(r"^(?:[ \t]*(?:#[^\n]*)?\n)*[ \t]*(?:FROM|ARG)[ \t]+\S", re.I)


def in_dockerfile_directory(display: str, text: str) -> bool:
    """Whether a file of no other kind is a Dockerfile by the directory it is kept in and its first instruction."""
    *directories, name = display.replace("\\", "/").split("/")
    if not any(d.lower() in _DOCKERFILE_DIRECTORIES for d in directories):
        return False
    if "." in name and name.rsplit(".", 1)[1].lower() in _NOT_DOCKERFILE_SUFFIXES:
        return False
    return bool(_DOCKERFILE_START.match(text) and _DOCKERFILE_FROM.search(text))


def is_nccl_conf_name(name: str) -> bool:
    lower = name.lower()
    return lower in ("nccl.conf", ".nccl.conf") or lower.endswith(".nccl.conf") or lower.endswith("-nccl.conf") \
        or lower.endswith("_nccl.conf")


def detect_documents(display: str, text: str, *, forced_kind: str | None = None,
                     charts: dict[str, str] | None = None, source_path: str = "") -> list[Document]:
    """The documents in one file; [] when the file is not a kind hpcconf lints.

    Raises HpcconfError (with HPC001/HPC002 positions) when a YAML file does not parse.
    """
    name = DisplayPath.parse(display).name
    kind = forced_kind or _kind_by_name(name) or _kind_by_content(name, text)
    if kind is None and not _looks_like_yaml(name) and in_dockerfile_directory(DisplayPath.parse(display).file, text):
        kind = Kind.DOCKERFILE
    yaml_by_content = False
    if kind == Kind.DOCKERFILE and not forced_kind and not _DOCKERFILE_FROM.search(text):
        # Named like a Dockerfile, but no FROM: a Kubernetes manifest saved as Dockerfile.<x> is read as
        # the manifest it is; anything else is no Dockerfile hpcconf could judge.
        if not _YAML_MANIFEST_START.match(text):
            return []
        kind, yaml_by_content = None, True
    if kind is None and not (_looks_like_yaml(name) or yaml_by_content):
        return []
    if kind is not None and kind not in YAML_KINDS:
        return [Document(path=display, kind=kind, text=text, source_path=source_path)]
    yaml_docs = load_documents(json_as_yaml(text) if kind in JSON_KINDS else text, display)
    placed = placements(source_path) if kind is None else None
    docs = []
    for yaml_doc in yaml_docs:
        if yaml_doc.data is None:
            continue
        doc_kind = kind or _yaml_kind(yaml_doc)
        if doc_kind is not None:
            docs.append(Document(path=display, kind=doc_kind, text=text, yaml=yaml_doc, source_path=source_path))
        elif isinstance(yaml_doc.data, dict):
            docs.extend(_helm_values(display, text, yaml_doc, source_path, charts or {}, placed))
    return docs


def _helm_values(display: str, text: str, yaml_doc: YamlDocument, source_path: str, charts: dict[str, str],
                 placed: list[ChartPlacement] | None) -> list[Document]:
    """The Helm values documents in a YAML document of no Kubernetes kind (one per chart it configures)."""
    if placed is None:  # no Chart.yaml beside it: the chart named by the file, its directory, or --chart
        name = DisplayPath.parse(display).name
        chart = chart_in_name(name) or chart_by_directory(source_path)
        if chart is None:
            helm_charts = [c for c in charts if c in HELM_KIND_BY_CHART]
            chart = helm_charts[0] if len(helm_charts) == 1 else None
        if chart is None and is_values_name(name):
            chart = chart_by_content(yaml_doc.data)
        placed = [ChartPlacement(chart, (), None, "")] if chart else []
    return [Document(path=display, kind=_values_kind(p.chart, yaml_doc.data.get(p.root[0]) if p.root else yaml_doc.data),
                     text=text, yaml=yaml_doc, source_path=source_path,
                     values_root=p.root, chart_version=p.version, chart_version_source=p.source)
            for p in placed if not p.root or isinstance(yaml_doc.data.get(p.root[0]), dict)]


def _values_kind(chart: str, values: Any) -> str:
    """The kind of one chart's values: "gpu-operator" values with AMD's own keys are AMD's operator's (both
    vendors call their chart gpu-operator), not NVIDIA's."""
    if chart == "gpu-operator" and is_amd_gpu_operator_values(values):
        return Kind.HELM_AMD_GPU_OPERATOR
    if chart == "amd-gpu-operator" and is_nvidia_gpu_operator_values(values):
        return Kind.HELM_GPU_OPERATOR  # named amd-..., but driver/toolkit/devicePlugin keys: NVIDIA's chart
    return HELM_KIND_BY_CHART[chart]


_TOP_LEVEL_KEY = re.compile(r"^([A-Za-z_][\w.-]*)[ \t]*:", re.M)
_HPCCONF_API = re.compile(r"^apiVersion:[ \t]*[\"']?hpcconf/", re.M)


def unparsed_yaml_consumer(display: str, text: str, source_path: str = "", charts: dict[str, str] | None = None
                           ) -> str | None:
    """The program known to read a YAML file that does not parse, judged from what needs no parse (its top-level
    keys, the chart it sits in or is named for); None when hpcconf knows of none. kubectl, helm, az-hop's
    Ansible/PyYAML and ``hpcconf build`` refuse such a file (HPC001/HPC002 keep their severity there)."""
    keys = set(_TOP_LEVEL_KEY.findall(text))
    if _HPCCONF_API.search(text):
        return "hpcconf build"
    if {"apiVersion", "kind"} <= keys:
        return "kubectl"
    if "queues" in keys and _AZHOP_KEYS & keys:
        return "az-hop"
    name = DisplayPath.parse(display).name
    if placements(source_path) is not None or chart_by_directory(source_path) or \
            (_looks_like_yaml(name) and chart_in_name(name)):
        return "helm"
    return None


def named_like_a_linted_kind(name: str) -> bool:
    """A name that says the file is one hpcconf reads (a Dockerfile, nccl.conf, YAML, a script, an env file...)."""
    lower = name.lower()
    return _kind_by_name(name) is not None or _looks_like_yaml(name) or \
        lower.endswith((".sh", ".bash", ".sbatch", ".slurm", ".nhc", ".conf", ".env", ".xml", ".tfvars"))


def _kind_by_name(name: str) -> str | None:
    if is_dockerfile_name(name):
        return Kind.DOCKERFILE
    if is_nccl_conf_name(name):
        return Kind.NCCL_CONF
    if name.lower().endswith(".tfvars"):
        return Kind.TFVARS
    for conf, kind in (("gres.conf", Kind.GRES_CONF), ("cgroup.conf", Kind.CGROUP_CONF),  # also ndv5.gres.conf
                       ("topology.conf", Kind.SLURM_TOPOLOGY), ("slurm.conf", Kind.SLURM_CONF),
                       ("site_specific.conf", Kind.SLURM_CONF)):  # cyclecloud-slurm's include
        if name.lower() == conf or name.lower().endswith((f".{conf}", f"-{conf}", f"_{conf}")):
            return kind
    return None


def _looks_like_yaml(name: str) -> bool:
    return name.lower().endswith((".yaml", ".yml"))


def _kind_by_content(name: str, text: str) -> str | None:
    match = _XML_ROOT.match(text)
    if match:
        return Kind.NCCL_TOPOLOGY if match.group(1) == "system" else Kind.NCCL_GRAPH
    if _looks_like_yaml(name):
        return None  # decided per YAML document
    if name.lower().endswith(".json"):
        return json_kind(text)
    first = text.lstrip().splitlines()[0] if text.strip() else ""
    if first.startswith("#!") and shebang_language(first) not in SHELLS:
        return None  # a Python, Perl, Node... script, whatever its name says
    if first.startswith("#!") or name.lower().endswith((".sh", ".bash", ".sbatch", ".slurm", ".nhc")):  # .nhc: bash NHC sources
        return Kind.SBATCH_SCRIPT if re.search(r"^#SBATCH\s", text, re.M) else Kind.SHELL_SCRIPT
    if name.lower().endswith(".conf") and re.search(r"^\s*NCCL_", text, re.M):
        return Kind.NCCL_CONF  # e.g. ndv4.conf copied from /etc: read the way NCCL reads it
    if name.lower().endswith(".conf") and _NHC_LINE.search(text):
        return Kind.NHC_CONF  # LBNL/Azure NHC: <hostmask> || <check> <args>
    if name.lower().endswith(".env") or name.lower() == ".env":
        return Kind.ENV_FILE
    if _CYCLECLOUD_CLUSTER.search(text) and _CYCLECLOUD_NODE.search(text) and not name.lower().endswith(SOURCE_CODE):
        return Kind.CYCLECLOUD_TEMPLATE  # e.g. cyclecloud-slurm's templates/slurm.txt
    significant = [ln for ln in text.splitlines() if ln.strip() and not ln.lstrip().startswith("#")]
    if significant and all(_ENV_LINE.match(ln) for ln in significant):
        return Kind.ENV_FILE
    return None


# Program sources and documents that may quote a template (a linter's docstring, a test's fixture text): CycleCloud
# reads templates it is given by name (`cyclecloud import_template -f slurm.txt`), never these.
SOURCE_CODE = (".py", ".pyi", ".go", ".rs", ".js", ".ts", ".java", ".c", ".h", ".cc", ".cpp", ".rb", ".pl", ".md",
               ".rst", ".j2", ".jinja", ".tpl")
# A CycleCloud cluster template: a [cluster NAME] section holding [[node X]] / [[nodearray X]] sections.
_CYCLECLOUD_CLUSTER = re.compile(r"^\s*\[cluster\s+[^\]\s][^\]]*\]\s*$", re.M)
_CYCLECLOUD_NODE = re.compile(r"^\s*\[\[(?:node|nodearray)\s+[^\]]+\]\]\s*$", re.M)
# An ARM deployment parameters file ("$schema": ".../deploymentParameters.json#"), any API date.
_ARM_PARAMETERS = re.compile(r'"\$schema"\s*:\s*"https?://schema\.management\.azure\.com/schemas/[0-9-]+/'
                             r'deploymentParameters\.json#?"', re.I)
# Parameters only CycleCloud Workspace for Slurm's mainTemplate has (every release since 2024.08.30 has most).
_CCWS_PARAMETERS = ("ccVMName", "ccVMSize", "schedulerNode", "loginNodes", "slurmSettings", "sharedFilesystem",
                    "schedFilesystem", "clusterInitSpecs", "storagePrivateDnsZone")
# Parameters of cyclecloud-slurm's cluster template (its initial_params.json, `cyclecloud import_cluster -p`).
_CYCLECLOUD_SLURM_PARAMETERS = ("configuration_slurm_version", "additional_slurm_config", "GPUMachineType",
                                "MaxGPUExecuteNodeCount", "HPCMachineType", "HTCMachineType", "SchedulerMachineType",
                                "NodeNameIsHostname", "configuration_slurm_accounting_enabled", "GPUImageName")


def json_as_yaml(text: str) -> str:
    """JSON as the YAML loader reads it, every line and column kept: tabs (YAML refuses them as indentation; JSON
    strings hold no raw tab) and the // and /* */ comments `az deployment` accepts in parameters files become
    spaces."""
    out, i, n, quoted = list(text.replace("\t", " ")), 0, len(text), False
    while i < n:
        c = text[i]
        if quoted:
            if c == "\\":
                i += 1
            elif c == '"':
                quoted = False
        elif c == '"':
            quoted = True
        elif text.startswith("//", i) or text.startswith("/*", i):
            line_comment = text[i + 1] == "/"
            found = text.find("\n", i) if line_comment else text.find("*/", i + 2)
            end = n if found < 0 else found if line_comment else found + 2
            for j in range(i, end):
                if out[j] != "\n":
                    out[j] = " "
            i = end
            continue
        i += 1
    return "".join(out)


def json_kind(text: str) -> str | None:
    """A CCWS mainTemplate parameters file (the ARM parameters $schema and 3 of its parameter names), or a CycleCloud
    Slurm cluster's parameters (3 of its template's names as keys); None for any other JSON."""
    def names(candidates: tuple[str, ...]) -> int:
        return sum(1 for key in candidates if re.search(rf'"{key}"\s*:', text))
    if _ARM_PARAMETERS.search(text):
        return Kind.CCWS_PARAMETERS if names(_CCWS_PARAMETERS) >= 3 else None
    return Kind.CYCLECLOUD_SLURM_PARAMETERS if names(_CYCLECLOUD_SLURM_PARAMETERS) >= 3 else None


SHELLS = {"sh", "bash", "dash", "zsh", "ksh", "mksh", "ash", "busybox"}
# Go-template actions as Helm writes them ({{ .Values.x }}, {{- if ... }}, {{ include "x" . }}, {{ $v := ... }});
# a bare {{name}} is an Ansible/Jinja variable that AzHOP's config.yml holds as a value, and is linted.
_GO_TEMPLATE = re.compile(r"\{\{-?\s*(?:[.$]|/\*|(?:if|else|end|range|with|include|template|define|block|toYaml|tpl|"
                          r"required|printf|default|quote|lookup|fromYaml|toJson|indent|nindent)\b)")
_JINJA_STATEMENT = re.compile(r"\{%-?\s*[a-z]+")


def shebang_language(first_line: str) -> str:
    """The interpreter a ``#!`` line names: ``#!/usr/bin/env -S python3 -u`` -> ``python3``."""
    words = first_line[2:].split()
    if not words:
        return ""
    program = words[0].rsplit("/", 1)[-1]
    if program == "env":
        rest = [w for w in words[1:] if not w.startswith("-") and "=" not in w]
        program = rest[0].rsplit("/", 1)[-1] if rest else ""
    return program


def template_markup(text: str) -> str | None:
    """'Go template' or 'Jinja' when lines that are not comments hold template markup, else None."""
    for line in text.splitlines():
        if line.lstrip().startswith("#") or "{" not in line:
            continue
        if _GO_TEMPLATE.search(line):
            return "Go template"
        if _JINJA_STATEMENT.search(line):
            return "Jinja"
    return None


def _markup_only_in_quotes(text: str) -> bool:
    """Whether every Go-template action sits inside a quoted YAML string (``owner: "{{ .Release.Name }}"``), as
    values a chart passes to ``tpl`` are written; unquoted, ``{{ .Values.x }}`` reads as a flow mapping."""
    for line in text.splitlines():
        if line.lstrip().startswith("#"):
            continue
        for match in _GO_TEMPLATE.finditer(line):
            before = line[: match.start()]
            if before.count('"') % 2 == 0 and before.count("'") % 2 == 0:
                return False
    return True


def not_linted_reason(name: str, text: str) -> str | None:
    """Why a file that passed the name checks (hpcconf.lint.walker) is still not linted, by its content;
    None when :func:`detect_documents` should read it."""
    first = text.lstrip().splitlines()[0] if text.strip() else ""
    if first.startswith("#!"):
        language = shebang_language(first)
        if language and language not in SHELLS:
            return f"a {language} script (its #! line), not a shell script"
    if name in ("Chart.yaml", "Chart.lock"):
        return "a Helm chart's metadata: read for the chart version its values are judged against, not linted"
    if _looks_like_yaml(name):
        markup = template_markup(text)
        if markup == "Go template" and is_values_name(name) and not _MANIFEST_KEY.search(text) \
                and _markup_only_in_quotes(text):
            return None  # Helm reads values as YAML (templates/ is skipped by its path); unparsable: skipped later
        if markup == "Go template":
            return "a Helm template (Go-template markup): not YAML until helm renders it"
        if markup:
            return "a Jinja template: not YAML until it is rendered"
    return None


def unknown_reason(name: str, source_path: str) -> str:
    """Why a file detect_documents found nothing in is passed over (a debug line, never a finding)."""
    if source_path and _looks_like_yaml(name):
        chart_dir = next((d for d in list(Path(source_path).parents)[:3] if (d / "Chart.yaml").is_file()), None)
        if chart_dir is not None:
            return (f"Helm values of the chart in {chart_dir.name}/, which is none of the charts hpcconf has rules for "
                    f"({', '.join(sorted(HELM_KIND_BY_CHART))})")
    return "not a kind hpcconf lints (see --kind)"


def _yaml_kind(doc: YamlDocument) -> str | None:
    """The kind of a YAML document by its content; None for Helm values (decided by :func:`_helm_values`)."""
    data = doc.data
    if not isinstance(data, dict):
        return None
    api = str(data.get("apiVersion", ""))
    kind = str(data.get("kind", ""))
    if api.startswith("hpcconf/"):
        return Kind.SPEC
    if api.startswith("batch.volcano.sh/") and kind == "Job":
        return Kind.VOLCANO_JOB
    if kind == "HostDeviceNetwork":
        return Kind.HOST_DEVICE_NETWORK
    if kind == "NicClusterPolicy":
        return Kind.NIC_CLUSTER_POLICY
    if api and kind:
        return Kind.K8S_MANIFEST
    if "queues" in data and _AZHOP_KEYS & set(data) and not _has_arm_expression(data):
        return Kind.AZHOP_CONFIG
    return None


# An Azure Resource Manager / createUiDefinition expression: "[steps('lustre').deployLustre]", "[concat(...)]".
_ARM_EXPRESSION = re.compile(r"^\[(?!\[)[A-Za-z]+\(.*\)[^\]]*\]$", re.S)


def _has_arm_expression(data: Any) -> bool:
    """Whether any string value is an ARM expression: the file is a template the Azure Portal evaluates (az-hop's
    marketplace_config.yml, embedded in createUiDefinition by marketplace/solution/build.sh) before az-hop
    reads anything, so judging it as a config.yml would judge the unevaluated expressions."""
    stack = [data]
    while stack:
        node = stack.pop()
        if isinstance(node, dict):
            stack.extend(node.values())
        elif isinstance(node, list):
            stack.extend(node)
        elif isinstance(node, str) and _ARM_EXPRESSION.match(node.strip()):
            return True
    return False
