"""Kubernetes' OpenAPI schemas by version, from the kubernetes-validate package (strict variants:
``additionalProperties: false`` on every object, as the API server's strict field validation, which
``kubectl apply`` uses by default from kubectl 1.27, refuses unknown fields).

The package ships one directory per minor version (1.25 to 1.37 in kubernetes-validate 1.37.0); a
request for a version between two is served by the newest not newer than it, as the package does.
"""

from __future__ import annotations

import importlib.util
import json
import re
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path
from typing import Any, Iterator, Optional

from .k8s_validation import holds_placeholder
from .versions import version_key

PACKAGE = "kubernetes_validate"
SCHEMA_ROOT = "kubernetes-json-schema"
POD_TEMPLATE_DEF = "io.k8s.api.core.v1.PodTemplateSpec"
# The ``required`` keyword is left out: kustomize patches and Helm fragments are partial objects by design.
REPORTED_KEYWORDS = ("additionalProperties", "type", "enum", "format", "pattern", "minimum", "maximum")


# Custom resources whose CRD gives the embedded pod templates Kubernetes' full schema (structural, no
# x-kubernetes-preserve-unknown-fields): kubectl's strict field validation refuses unknown fields in
# them as it does in a Deployment. For any other custom resource that depends on its CRD.
CRDS_WITH_POD_TEMPLATE_SCHEMA = {
    ("batch.volcano.sh/v1alpha1", "Job"): "volcano-sh/volcano config/crd/bases/batch.volcano.sh_jobs.yaml "
                                          "(release-1.7 and v1.15.1)",
    ("kubeflow.org/v2beta1", "MPIJob"): "kubeflow/mpi-operator v0.8.0 deploy/v2beta1/mpi-operator.yaml",
    ("jobset.x-k8s.io/v1alpha2", "JobSet"): "kubernetes-sigs/jobset config/components/crd/bases/jobset.x-k8s.io_jobsets.yaml "
                                            "(v0.5.2 and v0.12.0)",
    ("leaderworkerset.x-k8s.io/v1", "LeaderWorkerSet"): "kubernetes-sigs/lws config/crd/bases/"
                                                        "leaderworkerset.x-k8s.io_leaderworkersets.yaml (v0.10.0)",
    ("ray.io/v1", "RayCluster"): "ray-project/kuberay ray-operator/config/crd/bases/ray.io_rayclusters.yaml (v1.7.0)",
    ("ray.io/v1", "RayJob"): "ray-project/kuberay ray-operator/config/crd/bases/ray.io_rayjobs.yaml (v1.7.0)",
    ("ray.io/v1", "RayService"): "ray-project/kuberay ray-operator/config/crd/bases/ray.io_rayservices.yaml (v1.7.0)",
}


class SchemaVersionError(ValueError):
    """The requested Kubernetes version is outside the schemas installed."""


@dataclass(frozen=True)
class SchemaProblem:
    path: tuple[Any, ...]  # where in the validated object
    message: str
    unknown_field: Optional[str] = None  # the key the schema does not allow, for additionalProperties
    allowed: tuple[str, ...] = ()  # the keys it allows there


@lru_cache(maxsize=1)
def _root() -> Path:
    """The package's schema directory, found without importing the package (its __init__ imports PyYAML,
    jsonschema and more: a third of a second that a lint run never needs)."""
    spec = importlib.util.find_spec(PACKAGE)
    if spec is None or not spec.submodule_search_locations:
        raise SchemaVersionError(f"the {PACKAGE} package is not installed (pip install kubernetes-validate)")
    return Path(list(spec.submodule_search_locations)[0]) / SCHEMA_ROOT


@lru_cache(maxsize=1)
def schema_versions() -> tuple[str, ...]:
    """The minor versions installed, oldest first ("1.25", ..., "1.37")."""
    found = set()
    for entry in _root().iterdir():
        match = re.match(r"^v(\d+\.\d+)\.\d+-local-strict$", entry.name)
        if match:
            found.add(match.group(1))
    return tuple(sorted(found, key=version_key))


def schema_version(kubernetes: Optional[str]) -> str:
    """The installed schema version that serves ``kubernetes`` (None: the newest)."""
    versions = schema_versions()
    if kubernetes is None:
        return versions[-1]
    wanted = version_key(kubernetes.lstrip("v"))[:2]
    fitting = [v for v in versions if version_key(v)[:2] <= wanted]
    if not fitting:
        raise SchemaVersionError(f"no Kubernetes schema for {kubernetes}: the installed schemas cover "
                                 f"{versions[0]} to {versions[-1]}")
    return fitting[-1]


def _directory(version: str) -> Path:
    return _root() / f"v{version}.0-local-strict"


# Names from the linted file become schema file names: only well-formed ones are looked up (no path
# separators, no dots, bounded lengths), anything else simply has no schema.
KIND_NAME = re.compile(r"^[A-Za-z][A-Za-z0-9]{0,62}$")
API_VERSION_NAME = re.compile(r"^(?:[a-z0-9]([-a-z0-9.]{0,251}[a-z0-9])?/)?v[0-9]{1,3}(?:(?:alpha|beta)[0-9]{1,3})?$")


def well_formed(api_version: str, kind: str) -> bool:
    return bool(KIND_NAME.match(kind)) and bool(API_VERSION_NAME.match(api_version))


def _schema_file(api_version: str, kind: str) -> str:
    # kubernetes-validate's naming: rbac.authorization.k8s.io/v1 -> rbac-v1; v1 -> v1
    group_version = re.sub(r"^([^./]*)(?:\.[^/]*)?/", r"\1-", api_version)
    return f"{kind.lower()}-{group_version}.json"


@lru_cache(maxsize=4)
def _registry(version: str) -> Any:
    from referencing import Registry, Resource

    definitions = json.loads(_directory(version).joinpath("_definitions.json").read_text(encoding="utf-8"))
    return Resource.from_contents(definitions) @ Registry(), definitions["$id"]


@lru_cache(maxsize=64)
def _validator(version: str, schema_name: str, api_version: str = "") -> Any:
    """A validator for a kind's file (None when absent, or when the file is another group's: the package's
    file names keep only a group's first label, so ``scheduling.volcano.sh/v1beta1`` PodGroup would find
    ``scheduling.k8s.io/v1beta1``'s) or for a definition (``#<name>``)."""
    from jsonschema import Draft202012Validator

    registry, definitions_id = _registry(version)
    if schema_name.startswith("#"):
        schema = {"$ref": f"{definitions_id}#/$defs/{schema_name[1:]}"}
    else:
        file = _directory(version).joinpath(schema_name)
        if not file.is_file():
            return None
        schema = json.loads(file.read_text(encoding="utf-8"))
        served = schema.get("properties", {}).get("apiVersion", {}).get("enum") or []
        if api_version not in served:
            return None
    return Draft202012Validator(schema, registry=registry)


def has_schema(api_version: str, kind: str, kubernetes: Optional[str] = None) -> bool:
    if not well_formed(api_version, kind):
        return False
    return _validator(schema_version(kubernetes), _schema_file(api_version, kind), api_version) is not None


def object_problems(data: dict[str, Any], kubernetes: Optional[str] = None) -> Iterator[SchemaProblem]:
    """What the API server's schema refuses in a whole object of a built-in kind (none for other kinds)."""
    api_version = str(data.get("apiVersion"))
    if not well_formed(api_version, str(data.get("kind"))):
        return
    validator = _validator(schema_version(kubernetes), _schema_file(api_version, str(data.get("kind"))), api_version)
    if validator is not None:
        yield from _problems(validator, data)


def pod_template_problems(template: dict[str, Any], kubernetes: Optional[str] = None) -> Iterator[SchemaProblem]:
    """What the schema refuses in a pod template (``metadata`` + ``spec``) embedded in any object."""
    yield from _problems(_validator(schema_version(kubernetes), "#" + POD_TEMPLATE_DEF), template)


def _problems(validator: Any, data: Any) -> Iterator[SchemaProblem]:
    for error in sorted(validator.iter_errors(data), key=lambda e: [str(p) for p in e.absolute_path]):
        yield from _explain(error)


def _explain(error: Any) -> Iterator[SchemaProblem]:
    if error.validator in ("anyOf", "oneOf", "allOf") and error.context:
        best = min(error.context, key=lambda e: len(list(e.absolute_path)) * -1)
        yield from _explain(best)
        return
    if error.validator not in REPORTED_KEYWORDS:
        return
    path = tuple(error.absolute_path)
    if error.validator == "additionalProperties":
        allowed = set(error.schema.get("properties", {}))
        for key in sorted(set(error.instance) - allowed, key=str):
            if str(key).startswith("$"):
                continue  # a strategic-merge-patch directive ($patch, $setElementOrder/...): a kustomize patch
            yield SchemaProblem(path + (key,), f"unknown field '{key}'", unknown_field=str(key),
                                allowed=tuple(sorted(allowed)))
        return
    if holds_placeholder(error.instance):
        return  # `completions: ${COMPLETIONS}`: envsubst fills it before the API server sees it
    yield SchemaProblem(path, error.message)


@dataclass(frozen=True)
class RemovedApi:
    api_version: str
    kind: str
    removed: str  # the Kubernetes release that stopped serving it
    use: str


@lru_cache(maxsize=1)
def removed_apis() -> dict[tuple[str, str], RemovedApi]:
    """data/k8s_removed_apis.yaml by (apiVersion, kind)."""
    from .. import data_tables

    out = {}
    for row in data_tables.load(data_tables.DATA_DIR / "k8s_removed_apis.yaml")["removed"]:
        for kind in row["kinds"]:
            out[(row["api"], kind)] = RemovedApi(row["api"], kind, str(row["removed"]), row["use"])
    return out


def removed_api(api_version: str, kind: str, kubernetes: Optional[str] = None) -> Optional[RemovedApi]:
    """The removal of ``apiVersion``/``kind`` in or before ``kubernetes`` (None: the newest version)."""
    found = removed_apis().get((api_version, kind))
    if found is None:
        return None
    if kubernetes is not None and version_key(kubernetes.lstrip("v"))[:2] < version_key(found.removed)[:2]:
        return None
    return found


# API groups the Kubernetes API server itself serves: a kind under one of them that the schemas do not
# have is refused, not a custom resource.
BUILT_IN_GROUPS = frozenset({"", "apps", "batch", "autoscaling", "policy", "networking.k8s.io",
                             "rbac.authorization.k8s.io", "storage.k8s.io", "scheduling.k8s.io", "node.k8s.io",
                             "discovery.k8s.io", "coordination.k8s.io", "certificates.k8s.io",
                             "admissionregistration.k8s.io", "apiextensions.k8s.io", "apiregistration.k8s.io",
                             "events.k8s.io", "flowcontrol.apiserver.k8s.io", "resource.k8s.io",
                             "authentication.k8s.io", "authorization.k8s.io", "storagemigration.k8s.io"})


def group_of(api_version: str) -> str:
    return api_version.rsplit("/", 1)[0] if "/" in api_version else ""


def served_api_versions(kind: str, kubernetes: Optional[str] = None) -> list[str]:
    """The built-in apiVersions that serve ``kind`` in the schemas of that version (empty: no such kind)."""
    if not KIND_NAME.match(kind):
        return []
    directory = _directory(schema_version(kubernetes))
    found: list[str] = []
    for file in sorted(directory.glob(f"{kind.lower()}-*.json")):
        schema = json.loads(file.read_text(encoding="utf-8"))
        kinds = schema.get("properties", {}).get("kind", {}).get("enum") or []
        if kind in kinds:
            found += [v for v in schema.get("properties", {}).get("apiVersion", {}).get("enum") or [] if v not in found]
    return found
