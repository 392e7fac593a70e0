"""Kubernetes objects hpcconf cannot validate (K8S038): said once per kind, so a clean run is not read as
a checked one."""

from __future__ import annotations

from typing import Iterator

from ...artifacts import Kind
from ...diagnostics import Diagnostic, Severity
from ...parsers.k8s import as_dict, crd_pod_template_paths
from ...rules_registry import rule
from ..context import LintContext
from ..document import Document, DocumentSet

# Kinds hpcconf validates by other means than a Kubernetes schema: its own CR rules, or pod templates.
OTHER_CHECKED_KINDS = frozenset({
    ("scheduling.volcano.sh", "Queue"), ("scheduling.volcano.sh", "PodGroup"), ("kubeflow.org", "MPIJob"),
    ("mellanox.com", "HostDeviceNetwork"), ("mellanox.com", "NicClusterPolicy"), ("mellanox.com", "IPoIBNetwork"),
    ("mellanox.com", "MacvlanNetwork"), ("nv-ipam.nvidia.com", "IPPool"), ("nfd.k8s-sigs.io", "NodeFeatureRule"),
    ("amd.com", "DeviceConfig"), ("nvidia.com", "ClusterPolicy"), ("k8s.cni.cncf.io", "NetworkAttachmentDefinition")})


@rule(code="K8S038", name="manifest-not-validated", severity=Severity.INFO, kinds=(Kind.K8S_MANIFEST,),
      scope="set")
def manifest_not_validated(docs: DocumentSet, ctx: LintContext) -> Iterator[Diagnostic]:
    """Kubernetes objects of a kind hpcconf has no schema for: not validated, said once.

    ## What it catches
    Documents whose ``apiVersion``/``kind`` is neither a built-in kind of the Kubernetes version (the
    kubernetes-validate schemas) nor a custom resource hpcconf checks (Volcano, mpi-operator,
    network-operator, nv-ipam, NFD, GPU operators). One info per kind, at its first document. For
    LeaderWorkerSet and KubeRay's RayCluster, RayJob and RayService the info says that their pod templates
    are validated as pods (K8S030 and the pod rules read them) and only the resource around them is not.

    ## Why is this bad?
    It is not: a clean lint says nothing about these objects, and this says so, instead of letting a
    typo in ``apiVersion`` (``apps/v1beta``) pass as "no findings". The API server refuses an unknown
    ``apiVersion`` ("no matches for kind ... in version ...").

    ## Example
    ```yaml
    apiVersion: cert-manager.io/v1
    kind: Certificate
    ```

    ## Fix
    Nothing to fix when the kind is meant; correct ``apiVersion``/``kind`` when it is a typo.
    """
    version = ctx.kubernetes()
    first: dict[tuple[str, str], tuple[Document, int]] = {}
    for doc in docs.of_kind(Kind.K8S_MANIFEST):
        from ...knowledge.crd_schemas import crd_sources  # the schema tables load with the first manifest
        from ...knowledge.k8s_openapi import BUILT_IN_GROUPS, group_of, has_schema

        data = as_dict(doc.data)
        api_version, kind = str(data.get("apiVersion") or ""), str(data.get("kind") or "")
        if not api_version or not kind or (group_of(api_version), kind) in OTHER_CHECKED_KINDS \
                or has_schema(api_version, kind, version) or crd_sources(api_version, kind) \
                or group_of(api_version) in BUILT_IN_GROUPS:  # built-in groups: K8S039's
            continue
        seen = first.get((api_version, kind))
        first[(api_version, kind)] = (seen[0], seen[1] + 1) if seen else (doc, 1)
    for (api_version, kind), (doc, count) in sorted(first.items()):
        documents = f"{count} documents" if count > 1 else "a document"
        templates = crd_pod_template_paths(kind)
        if templates:  # LeaderWorkerSet, KubeRay: the pods are checked, the resource around them is not
            yield doc.at_path(("kind",), f"{documents} of kind {kind} ({api_version}): its pod templates "
                                         f"({', '.join(templates)}) are validated as pods, the rest of the "
                                         "resource is not (hpcconf has no schema for it; the API server refuses "
                                         "an apiVersion/kind the cluster does not serve)",
                              hint="nothing to do if the kind is meant; check the spelling otherwise")
            continue
        yield doc.at_path(("kind",), f"{documents} of kind {kind} ({api_version}) not validated: hpcconf has no "
                                     "schema for it (the API server refuses an apiVersion/kind the cluster does "
                                     "not serve)", hint="nothing to do if the kind is meant; check the spelling "
                                                        "otherwise")
