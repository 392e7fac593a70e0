"""The K8S/VOL/HELM/XA rules on real files: the seeds' AKS artifacts get the findings they deserve,
hpcconf's own AKS artifacts get none above info, and breaking one link of a chain is caught."""

from __future__ import annotations

from pathlib import Path

import pytest

from hpcconf.diagnostics import Severity
from hpcconf.lint.context import LintContext
from hpcconf.lint.engine import lint_paths
from hpcconf.pipeline import compile_spec

REPO = Path(__file__).resolve().parents[1]
SEEDS = REPO / "tests" / "fixtures" / "aks-seeds"
EXAMPLES = [REPO / "examples" / "ndmv4-aks.yaml", REPO / "examples" / "ndmv4-aks-current.yaml"]
FAMILIES = ("K8S", "VOL", "HELM", "XA")


def _ours(findings):
    return sorted((Path(f.file).name, f.line, f.code) for f in findings if f.code.startswith(FAMILIES))


def _lint(paths, charts=None):
    ctx = LintContext()
    ctx.charts = dict(charts or {})
    return lint_paths([str(p) for p in paths], ctx).findings


def test_seed_artifacts_get_the_findings_they_deserve():
    found = _ours(_lint([SEEDS]))
    assert found == sorted([
        # No chart version is pinned: each values file says so (info) instead of being judged against the
        # newest chart; none has a key that no version has.
        ("seed000-gpu-operator.yaml", 1, "HELM006"), ("seed000-network-operator.yaml", 1, "HELM006"),
        ("seed000-nfd.yaml", 1, "HELM006"), ("seed003-network-operator.yaml", 1, "HELM006"),
        # No VOL003: the launcher's init container waits (kubectl wait --for=condition=Ready) for the workers.
        ("seed000-job.yaml", 43, "VOL010"),  # mpirun | tee without pipefail: a failed test ends the job Completed
        ("seed000-job.yaml", 56, "K8S008"),  # the test image by :latest
        # No second VOL010 for OnFailure: with the status lost in the pipe the launcher exits 0, never restarted.
        ("seed000-job.yaml", 74, "XA002"),   # the GPU-less first copy attaches 8 IB networks for 0 VFs
        ("seed000-job.yaml", 82, "K8S008"),  # the workers run the test's ranks from the same :latest image (D9)
        ("seed000-job.yaml", 108, "K8S008"),  # the second (duplicated) worker task likewise
        ("seed000-job.yaml", 96, "VOL001"),  # duplicated task name: Volcano rejects the job
        ("seed000-nodepool.sh", 3, "XA004"),  # SkipGPUDriverInstallation is not the tag AKS reads
    ])


def test_seed_values_on_todays_chart_are_ignored():
    # Installed unpinned today (network-operator 26.4.1), the chart ignores every NicClusterPolicy key.
    found = [f for f in _ours(_lint([SEEDS], {"network-operator": "26.4.1"})) if f[2] == "HELM001"]
    assert found == sorted([
        ("seed000-network-operator.yaml", 2, "HELM001"), ("seed000-network-operator.yaml", 5, "HELM001"),
        ("seed000-network-operator.yaml", 7, "HELM001"), ("seed000-network-operator.yaml", 9, "HELM001"),
        ("seed000-network-operator.yaml", 17, "HELM001"),
        ("seed003-network-operator.yaml", 2, "HELM001"), ("seed003-network-operator.yaml", 5, "HELM001"),
        ("seed003-network-operator.yaml", 8, "HELM001"), ("seed003-network-operator.yaml", 10, "HELM001"),
    ])


def test_seed_values_are_fine_on_the_blog_era_chart():
    found = _ours(_lint([SEEDS], {"network-operator": "23.4.0"}))
    assert [f for f in found if f[2] == "HELM001"] == []


def test_seed_000_and_003_resource_names_cannot_be_mixed(tmp_path):
    (tmp_path / "network-operator-values.yaml").write_text((SEEDS / "seed003-network-operator.yaml").read_text())
    (tmp_path / "hostdevicenetwork.yaml").write_text((SEEDS / "seed000-hostdevicenetwork.yaml").read_text())
    (tmp_path / "job.yaml").write_text((SEEDS / "seed000-job.yaml").read_text())
    found = [f for f in _ours(_lint([tmp_path], {"network-operator": "23.4.0"})) if f[2] == "XA001"]
    assert found == [("hostdevicenetwork.yaml", 8, "XA001"), ("job.yaml", 123, "XA001")]


@pytest.mark.parametrize("spec", EXAMPLES, ids=lambda p: p.stem)
def test_generated_aks_artifacts_have_nothing_above_info(spec):
    findings = lint_paths([str(spec)], LintContext()).findings
    serious = [f"{f.file}:{f.line} {f.code} {f.message}" for f in findings
               if f.severity.rank > Severity.INFO.rank and "-> aks/" in f.file]
    assert serious == []


def _written(tmp_path: Path, spec: Path) -> Path:
    build = compile_spec(spec)
    out = tmp_path / build.name
    for artifact in build.artifacts:
        target = out / artifact.path
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_text(artifact.content, encoding="utf-8")
    return out


def _edit(path: Path, old: str, new: str) -> None:
    text = path.read_text(encoding="utf-8")
    assert old in text
    path.write_text(text.replace(old, new), encoding="utf-8")


def _findings(out: Path, charts: dict, code: str) -> set[str]:
    return {f.message for f in _lint([out / "aks", out / "image"], charts) if f.code == code}


BLOG_CHARTS = {"network-operator": "23.4.0", "gpu-operator": "23.3.2", "node-feature-discovery": "0.14.1",
               "volcano": "1.7.0"}
BREAKAGES = [
    ("hostdevicenetwork.yaml", 'resourceName: mlnxnics', 'resourceName: infiniband', "XA001"),
    ("hostdevicenetwork.yaml", "networkNamespace: default", "networkNamespace: nccl", "XA005"),
    ("hostdevicenetwork.yaml", '"type": "whereabouts",', '"type": "whereabouts",,', "K8S004"),
    ("volcano-job.yaml", "-np 16", "-np 8", "VOL005"),
    ("volcano-job.yaml", "ppr:8:node", "ppr:4:node", "VOL005"),
    ("volcano-job.yaml", "/etc/volcano/mpiworker.host \\", "/etc/volcano/mpi-worker.host \\", "VOL004"),
    ("volcano-job.yaml", "  minAvailable: 3", "  minAvailable: 4", "VOL002"),
    ("volcano-job.yaml", "action: CompleteJob", "action: Complete", "VOL009"),
    ("volcano-job.yaml", "    svc: []\n", "", "VOL007"),
    ("volcano-job.yaml", "hostdev-net,hostdev-net,", "", "XA002"),
    ("volcano-job.yaml", "NCCL_TOPO_FILE=/workspace/nd96amsr-a100-v4-topo.xml", "NCCL_TOPO_FILE=/workspace/topo.xml", "XA003"),
    ("volcano-job.yaml", "serviceAccountName: mpi-worker-view", "serviceAccountName: mpi-view", "XA006"),
    ("volcano-job.yaml", "                    - IPC_LOCK\n", "                    - NET_ADMIN\n", "K8S002"),
    ("gpu-operator-values.yaml", "nfd:\n  enabled: false", "nfd:\n  enabled: true", "HELM004"),
    ("network-operator-values.yaml", "ofedDriver:\n  deploy: true", "ofedDriver:\n  deploy: false", "HELM002"),
    ("network-operator-values.yaml", "      linkTypes:\n        - infiniband\n", "", "HELM005"),
    ("nfd-values.yaml", "          - vendor", "          - class\n          - vendor", "HELM003"),
    ("provision.sh", "SkipGPUDriverInstall=true", "SkipGPUDriverInstallation=true", "XA004"),
    ("provision.sh", "    --os-sku \"$OS_SKU\" \\\n    --tags SkipGPUDriverInstall=true\n", "    --os-sku \"$OS_SKU\"\n", "XA007"),
]


@pytest.mark.parametrize("file,old,new,code", BREAKAGES, ids=[b[3] + "-" + b[0] for b in BREAKAGES])
def test_breaking_a_generated_artifact_is_caught(tmp_path, file, old, new, code):
    out = _written(tmp_path, EXAMPLES[0])
    before = _findings(out, BLOG_CHARTS, code)
    _edit(out / "aks" / file, old, new)
    assert _findings(out, BLOG_CHARTS, code) - before


def test_current_values_on_an_old_chart_and_old_values_on_a_new_chart(tmp_path):
    out = _written(tmp_path, EXAMPLES[0])
    findings = _lint([out / "aks" / "network-operator-values.yaml"], {"network-operator": "26.4.1"})
    assert {(f.code, f.line) for f in findings if f.code == "HELM001"} == {
        ("HELM001", 4), ("HELM001", 7), ("HELM001", 9), ("HELM001", 11), ("HELM001", 19)}


@pytest.mark.parametrize("spec", EXAMPLES, ids=lambda p: p.stem)
def test_generated_directory_lints_clean_without_the_spec(tmp_path, spec):
    """The files carry what the rules need (chart versions in the values headers, AZ_CLI_VERSION in the
    script), so linting the output directory alone finds nothing either."""
    out = _written(tmp_path, spec)
    findings = _lint([out / "aks", out / "image"])
    found = [(Path(f.file).name, f.code, f.severity) for f in findings if f.severity.rank > Severity.INFO.rank]
    # The legacy example's az CLI 2.50.0 predates --gpu-driver: its script can only use the tag AKS stopped
    # reading on 2025-07-14, a true finding on the script alone (with the spec, HPC208 reports it once).
    legacy = [("provision.sh", "XA004", Severity.WARNING)] if spec.stem == "ndmv4-aks" else []
    assert found == legacy


def test_policy_vocabulary_matches_volcanos_own_validating_policy(shared_dir):
    import re

    from hpcconf.lint.rules import volcano

    text = (shared_dir / "upstream" / "k8s" / "volcano" / "jobs-validating-policy-v1.15.1.yaml").read_text()
    lists = {name: set(re.findall(r'"([^"]+)"', body)) for name, body in
             re.findall(r"- name: (validEvents|validActions)\n\s+expression: \|\n\s+(\[.*?\])", text)}
    assert volcano.EVENTS_115 == lists["validEvents"]
    # The webhook also accepts RestartPartition (research k8s.md §3); the CEL list is the floor.
    assert lists["validActions"] <= volcano.ACTIONS_115 and volcano.ACTIONS_115 - lists["validActions"] == {"RestartPartition"}
    assert volcano.EVENTS_17 < volcano.EVENTS_115 and volcano.ACTIONS_17 < volcano.ACTIONS_115


def test_two_specs_linted_together_are_not_compared_with_each_other():
    """The blog spec's network lives in 'default', the current spec's job in 'nccl-test': each is
    consistent on its own, and set rules compare files of one deployment only."""
    findings = lint_paths([str(p) for p in EXAMPLES], LintContext()).findings
    # K8S008 (info, one file): Azure publishes its health-check images by :latest only; nothing compared.
    assert [f"{f.file}:{f.line} {f.code}" for f in findings if f.code.startswith(FAMILIES) and f.code != "K8S008"] == []
