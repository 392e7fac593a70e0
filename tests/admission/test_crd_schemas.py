"""hpcconf/data/crd_schemas.json is what tools/gen_crd_schemas.py makes of the upstream CRDs: a hand edit fails here."""

from __future__ import annotations

import importlib.util
from pathlib import Path

import pytest

from hpcconf.knowledge.crd_schemas import crd_schemas, refused_by_every_version

ROOT = Path(__file__).resolve().parents[2]


def _tool():
    spec = importlib.util.spec_from_file_location("gen_crd_schemas", ROOT / "tools" / "gen_crd_schemas.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_the_schema_table_is_the_crds_own():
    tool = _tool()
    if not tool.SHARED.is_dir():
        pytest.skip("the upstream CRDs (../shared/upstream/k8s) are absent")
    if all((tool.MIRROR / repo / "repo").is_dir() for repo in tool.MIRRORED):
        assert crd_schemas() == tool.table(), "hpcconf/data/crd_schemas.json was edited: run tools/gen_crd_schemas.py"
        return
    # Without the mirror (CI): every entry read from ../shared still equals the CRD it came from.
    shared = tool.table(shared_only=True)
    committed = {kind: {api: {label: schema for label, schema in sources.items()
                              if any(label == s for s, w in tool.SOURCES if not isinstance(w, tuple))}
                        for api, sources in versions.items()}
                 for kind, versions in crd_schemas().items()}
    committed = {kind: {api: s for api, s in versions.items() if s} for kind, versions in committed.items()}
    committed = {kind: versions for kind, versions in committed.items() if versions}
    assert committed == shared, "hpcconf/data/crd_schemas.json was edited: run tools/gen_crd_schemas.py"


def test_every_source_names_its_tag():
    for kind, versions in crd_schemas().items():
        for api_version, sources in versions.items():
            for source in sources:
                repo, tag = source.split()[:2]
                assert "/" in repo and tag[0] in "vr", (kind, api_version, source)


def test_a_finding_needs_every_crd_version_to_agree():
    # v0.4.0's enum lacks MPICH, v0.8.0's has it: the version installed decides, so no finding.
    job = {"apiVersion": "kubeflow.org/v2beta1", "kind": "MPIJob", "metadata": {"name": "x"},
           "spec": {"mpiImplementation": "MPICH", "mpiReplicaSpecs": {}}}
    found, sources = refused_by_every_version(job)
    assert len(sources) == 2 and not found
    job["spec"]["mpiImplementation"] = "mpich"
    assert [p.check for p in refused_by_every_version(job)[0]] == ["enum"]
