"""Write hpcconf/data/crd_schemas.json: the structural schemas of the CRDs hpcconf validates custom resources against.

    python tools/gen_crd_schemas.py

Sources (each recorded in the table with its tag and commit):
- mpi-operator MPIJob, JobSet (github:kubernetes-sigs/jobset), nv-ipam's IPPool and CIDRPool, and Volcano's Queue,
  PodGroup (v1.7.0, v1.15.1) and HyperNode (v1.15.1, the CRD is new in v1.12) from the bare mirrors of their
  repositories at a tag (``git show``): IPPool at nvidia-k8s-ipam v0.2.0 (what network-operator v24.7.0, the last
  chart that renders NicClusterPolicy, pins: ``nvIpam.version`` in its values.yaml) and the copy network-operator
  v26.4.1 deploys (``manifests/state-nv-ipam-cni``; its ``hack/release.yaml`` builds nv-ipam at the same tag);
- network-operator NicClusterPolicy, HostDeviceNetwork and Volcano's Job from the verbatim CRD copies in
  ../shared/upstream/k8s (SOURCES.md names their tags and commits).

Only what admission judges is kept, in our own form: type, enum, required, properties, items,
additionalProperties, minimum, maximum (and their OpenAPI v3 exclusive flags), x-kubernetes-preserve-unknown-fields,
x-kubernetes-int-or-string, default (applied before the CEL rules run, as the API server defaults before it validates), and the CEL rules (x-kubernetes-validations:
rule, message, messageExpression, fieldPath, reason, optionalOldSelf). Pod templates (an object with ``spec.containers``)
are cut to ``pod-template: true``: K8S030 judges them against Kubernetes' own schema.
tests/admission/test_crd_schemas.py regenerates the table and fails when it was edited by hand.
"""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

from ruamel.yaml import YAML

ROOT = Path(__file__).resolve().parents[1]
SHARED = ROOT.parent / "shared" / "upstream" / "k8s"
MIRROR = Path("/work/.mirror")

# (source label, how to read it): a file in ../shared, or (mirror repo, tag, path) read with git show.
SOURCES: list[tuple[str, object]] = [
    ("kubeflow/mpi-operator v0.4.0 (c77dfcf42fb8a39b1824c6fe540a929b84a36844) manifests/base/kubeflow.org_mpijobs.yaml",
     ("kubeflow+mpi-operator", "v0.4.0", "manifests/base/kubeflow.org_mpijobs.yaml")),
    ("kubeflow/mpi-operator v0.8.0 (101db144e019e1de65aaded07745e9d805c2852a) manifests/base/kubeflow.org_mpijobs.yaml",
     ("kubeflow+mpi-operator", "v0.8.0", "manifests/base/kubeflow.org_mpijobs.yaml")),
    ("Mellanox/network-operator v23.4.0 deployment/network-operator/crds/mellanox.com_nicclusterpolicies.yaml",
     "network-operator/crds/mellanox.com_nicclusterpolicies-v23.4.0.yaml"),
    ("Mellanox/network-operator v26.4.1 deployment/network-operator/crds/mellanox.com_nicclusterpolicies.yaml",
     "network-operator/crds/mellanox.com_nicclusterpolicies-v26.4.1.yaml"),
    ("Mellanox/network-operator v23.4.0 deployment/network-operator/crds/mellanox.com_hostdevicenetworks.yaml",
     "network-operator/crds/mellanox.com_hostdevicenetworks-v23.4.0.yaml"),
    ("Mellanox/network-operator v26.4.1 deployment/network-operator/crds/mellanox.com_hostdevicenetworks.yaml",
     "network-operator/crds/mellanox.com_hostdevicenetworks-v26.4.1.yaml"),
    ("volcano-sh/volcano v1.15.1 config/crd/bases/batch.volcano.sh_jobs.yaml",
     "volcano/batch.volcano.sh_jobs-v1.15.1.yaml"),
    ("volcano-sh/volcano release-1.7 config/crd/bases/batch.volcano.sh_jobs.yaml",
     "volcano/batch.volcano.sh_jobs-release-1.7.yaml"),
    ("kubernetes-sigs/jobset v0.5.2 (8637f29b6aaa25991ff7f9ef9e1d47d85307838f) "
     "config/components/crd/bases/jobset.x-k8s.io_jobsets.yaml",
     ("kubernetes-sigs+jobset", "v0.5.2", "config/components/crd/bases/jobset.x-k8s.io_jobsets.yaml")),
    ("kubernetes-sigs/jobset v0.12.0 (f22e565ac3cc3265c7c45ef67ecffdc689af5d77) "
     "config/components/crd/bases/jobset.x-k8s.io_jobsets.yaml",
     ("kubernetes-sigs+jobset", "v0.12.0", "config/components/crd/bases/jobset.x-k8s.io_jobsets.yaml")),
    ("Mellanox/nvidia-k8s-ipam v0.2.0 (ef6ff29c8cc5f2e94226ded32c1405b1afa113e6) deploy/crds/nv-ipam.nvidia.com_ippools.yaml",
     ("Mellanox+nvidia-k8s-ipam", "v0.2.0", "deploy/crds/nv-ipam.nvidia.com_ippools.yaml")),
    ("Mellanox/network-operator v26.4.1 (85afd6d9c6978eb871a3292b9897f49746cc43cd) "
     "manifests/state-nv-ipam-cni/005-nv-ipam.nvidia.com_ippools.yaml",
     ("Mellanox+network-operator", "v26.4.1", "manifests/state-nv-ipam-cni/005-nv-ipam.nvidia.com_ippools.yaml")),
    ("Mellanox/nvidia-k8s-ipam v0.2.0 (ef6ff29c8cc5f2e94226ded32c1405b1afa113e6) deploy/crds/nv-ipam.nvidia.com_cidrpools.yaml",
     ("Mellanox+nvidia-k8s-ipam", "v0.2.0", "deploy/crds/nv-ipam.nvidia.com_cidrpools.yaml")),
    ("Mellanox/network-operator v26.4.1 (85afd6d9c6978eb871a3292b9897f49746cc43cd) "
     "manifests/state-nv-ipam-cni/005-nv-ipam.nvidia.com_cidrpools.yaml",
     ("Mellanox+network-operator", "v26.4.1", "manifests/state-nv-ipam-cni/005-nv-ipam.nvidia.com_cidrpools.yaml")),
    # Volcano's scheduling CRDs: v1.7.0 is the commit of the release-1.7 Job CRD in ../shared.
    ("volcano-sh/volcano v1.7.0 (1933d46bdc4434772518ebb74c4281671ddeffa1) config/crd/bases/scheduling.volcano.sh_queues.yaml",
     ("volcano-sh+volcano", "v1.7.0", "config/crd/bases/scheduling.volcano.sh_queues.yaml")),
    ("volcano-sh/volcano v1.15.1 (0a56ed331897f5455916a44d3075671376d731d6) "
     "config/crd/volcano/bases/scheduling.volcano.sh_queues.yaml",
     ("volcano-sh+volcano", "v1.15.1", "config/crd/volcano/bases/scheduling.volcano.sh_queues.yaml")),
    ("volcano-sh/volcano v1.7.0 (1933d46bdc4434772518ebb74c4281671ddeffa1) "
     "config/crd/bases/scheduling.volcano.sh_podgroups.yaml",
     ("volcano-sh+volcano", "v1.7.0", "config/crd/bases/scheduling.volcano.sh_podgroups.yaml")),
    ("volcano-sh/volcano v1.15.1 (0a56ed331897f5455916a44d3075671376d731d6) "
     "config/crd/volcano/bases/scheduling.volcano.sh_podgroups.yaml",
     ("volcano-sh+volcano", "v1.15.1", "config/crd/volcano/bases/scheduling.volcano.sh_podgroups.yaml")),
    ("volcano-sh/volcano v1.15.1 (0a56ed331897f5455916a44d3075671376d731d6) "
     "config/crd/volcano/bases/topology.volcano.sh_hypernodes.yaml",
     ("volcano-sh+volcano", "v1.15.1", "config/crd/volcano/bases/topology.volcano.sh_hypernodes.yaml")),
]

# The mirrors (github:<owner>/<name> fetched into /work/.mirror/<owner>+<name>) the table reads.
MIRRORED = sorted({where[0] for _, where in SOURCES if isinstance(where, tuple)})

KEPT = ("type", "enum", "required", "default", "minimum", "maximum", "exclusiveMinimum", "exclusiveMaximum",
        "x-kubernetes-preserve-unknown-fields", "x-kubernetes-int-or-string")
RULE_KEYS = ("rule", "message", "messageExpression", "fieldPath", "reason", "optionalOldSelf")


def read_source(where: object) -> str:
    if isinstance(where, tuple):
        repo, tag, path = where
        git_dir = MIRROR / str(repo) / "repo"
        return subprocess.run(["git", f"--git-dir={git_dir}", "show", f"{tag}:{path}"],
                              check=True, capture_output=True, text=True).stdout
    return (SHARED / str(where)).read_text()


def is_pod_template(schema: dict) -> bool:
    spec = (schema.get("properties") or {}).get("spec") or {}
    return "containers" in (spec.get("properties") or {})


def compact(schema: dict) -> dict:
    if is_pod_template(schema):
        return {"pod-template": True}
    out: dict = {key: schema[key] for key in KEPT if key in schema}
    rules = [{key: v[key] for key in RULE_KEYS if key in v} for v in schema.get("x-kubernetes-validations") or []]
    if rules:
        out["x-kubernetes-validations"] = rules
    if schema.get("properties"):
        out["properties"] = {key: compact(child) for key, child in sorted(schema["properties"].items())}
    if isinstance(schema.get("items"), dict):
        out["items"] = compact(schema["items"])
    extra = schema.get("additionalProperties")
    if isinstance(extra, dict):
        out["additionalProperties"] = compact(extra)
    elif isinstance(extra, bool):
        out["additionalProperties"] = extra
    return out


def table(shared_only: bool = False) -> dict:
    """The schemas by kind, API version and source; ``shared_only``: only those read from ../shared (what CI
    has; the mirror of a repository is a local fetch)."""
    out: dict = {}
    for label, where in SOURCES:
        if shared_only and isinstance(where, tuple):
            continue
        crd = next(d for d in YAML(typ="safe").load_all(read_source(where)) if d)  # a license header may come first
        group, kind = crd["spec"]["group"], crd["spec"]["names"]["kind"]
        for version in crd["spec"]["versions"]:
            if not version.get("served", True):
                continue
            schema = compact(version["schema"]["openAPIV3Schema"])
            out.setdefault(kind, {}).setdefault(f"{group}/{version['name']}", {})[label] = schema
    return out


def main() -> None:
    # JSON, not YAML: read on the first Kubernetes manifest of every lint run, json.loads takes 0.4 ms where the
    # YAML loader took 35 ms. One key per line keeps a regenerated table reviewable as a diff; the sources keep
    # their order (oldest tag first: K8S041 takes its hints from the newest).
    target = ROOT / "hpcconf" / "data" / "crd_schemas.json"
    document = {"generated-by": "tools/gen_crd_schemas.py (do not edit): structural schemas of CRDs, in our compact form",
                "layout": "kinds: kind -> apiVersion -> source (repository, tag, path) -> schema",
                "kinds": table()}
    target.write_text(json.dumps(document, indent=1) + "\n", encoding="utf-8")


if __name__ == "__main__":
    main()
