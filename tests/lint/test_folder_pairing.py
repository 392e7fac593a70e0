"""Files that only share a folder are not one deployment (issue 20, corpus C's flat-folder pairing): a set rule
compares them only on evidence (a kustomization or chart, a file naming the other, an object name one references
in the other); otherwise each file stands alone and what the comparison would say is info naming the assumption."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

from typer.testing import CliRunner

from hpcconf.cli import app

RULES = Path(__file__).resolve().parents[1] / "rules"


def _lint(tree: Path) -> list[dict]:
    report = tree.parent / "report.json"
    result = CliRunner().invoke(app, ["lint", str(tree), "--format", "json", "-o", str(report)])
    assert result.exit_code in (0, 1), result.output
    return json.loads(report.read_text())["findings"]


def _copy(case: str, into: Path, *, drop: tuple[str, ...] = ("kustomization.yaml",)) -> Path:
    shutil.copytree(RULES / case, into)
    for name in drop:
        (into / name).unlink(missing_ok=True)
    return into


def _codes(findings: list[dict], code: str) -> list[tuple[str, str]]:
    return [(Path(f["file"]).name, f["severity"]) for f in findings if f["code"] == code]


def test_two_unrelated_samples_in_one_folder_are_not_compared(tmp_path):
    # examples/: a gpu-operator sample and a network-operator sample, each its own install
    examples = _copy("HELM004/bad-both-operators", tmp_path / "examples")
    findings = _lint(examples)
    helm004 = [f for f in findings if f["code"] == "HELM004"]
    assert helm004 and all(f["severity"] == "info" for f in helm004), helm004
    assert all("only share the folder" in f["message"] for f in helm004)


def test_a_script_installing_both_makes_them_one_deployment(tmp_path):
    deploy = _copy("HELM004/bad-both-operators", tmp_path / "deploy")
    (deploy / "install.sh").write_text(
        "#!/bin/bash\nhelm install gpu-operator nvidia/gpu-operator -f gpu-operator-values.yaml\n"
        "helm install network-operator nvidia/network-operator -f network-operator-values.yaml\n", encoding="utf-8")
    assert ("gpu-operator-values.yaml", "error") in _codes(_lint(deploy), "HELM004")


def test_a_kustomization_makes_the_folder_one_deployment(tmp_path):
    deploy = _copy("XA001/bad-rdma-shared", tmp_path / "deploy", drop=())
    assert ("job.yaml", "error") in _codes(_lint(deploy), "XA001")
    alone = _copy("XA001/bad-rdma-shared", tmp_path / "samples")
    assert _codes(_lint(alone), "XA001") == [("job.yaml", "info")]


def test_a_network_the_pod_names_ties_the_files(tmp_path):
    # the job's k8s.v1.cni.cncf.io/networks names the HostDeviceNetwork the other file defines
    pair = _copy("XA002/bad-hostdevicenetwork-count", tmp_path / "pair")
    assert not (pair / "kustomization.yaml").exists()
    assert ("job.yaml", "warning") in _codes(_lint(pair), "XA002")


def test_a_check_a_fork_in_the_folder_defines_is_no_tie(tmp_path):
    # an Azure conf beside another site's fork of the check: the fork is not what NHC sources for this conf
    folder = _copy("NHC002/bad-custom-test", tmp_path / "confs", drop=("install.sh",))
    assert _codes(_lint(folder), "NHC002") == [("nhc.conf", "info")]


def test_a_pod_requesting_the_resource_a_network_provides_ties_the_files(tmp_path):
    # review20y (OguzPastirmaci/misc host-device/): the job asks for nvidia.com/hostdev, the HostDeviceNetwork
    # beside it provides resourceName hostdev, and the job names a network that is not that one
    pair = _copy("XA002/bad-undefined-network", tmp_path / "host-device")
    [finding] = [f for f in _lint(pair) if f["code"] == "XA002"]
    assert finding["severity"] == "warning" and "'ib-net' is not a network of this set" in finding["message"]


def test_equal_names_outside_reference_fields_tie_nothing(tmp_path):
    # two samples in one folder: one Pod is named "worker", the other sample's container is also called "worker"
    folder = tmp_path / "samples"
    folder.mkdir()
    (folder / "a.yaml").write_text("apiVersion: v1\nkind: Pod\nmetadata: {name: worker}\nspec:\n"
                                   "  containers: [{name: c, image: nginx:1.25}]\n", encoding="utf-8")
    (folder / "b.yaml").write_text("apiVersion: v1\nkind: Pod\nmetadata: {name: other}\nspec:\n"
                                   "  serviceAccountName: trainer\n"
                                   "  containers: [{name: worker, image: nginx:1.25}]\n", encoding="utf-8")
    from hpcconf.lint.detect import detect_documents
    from hpcconf.lint.pairing import components

    docs = [d for name in ("a.yaml", "b.yaml")
            for d in detect_documents(str(folder / name), (folder / name).read_text(), source_path=str(folder / name))]
    assert len(components(docs)) == 2
    (folder / "c.yaml").write_text("apiVersion: v1\nkind: ServiceAccount\nmetadata: {name: trainer}\n", encoding="utf-8")
    docs += detect_documents(str(folder / "c.yaml"), (folder / "c.yaml").read_text(), source_path=str(folder / "c.yaml"))
    assert sorted(len(part) for part in components(docs)) == [1, 2]  # b names c's ServiceAccount


def test_slurm_reads_the_gres_conf_of_its_own_directory(tmp_path):
    # slurmd reads gres.conf from the directory of slurm.conf: the two are one configuration without other evidence
    cluster = _copy("SLURM107/bad", tmp_path / "cluster")
    assert _codes(_lint(cluster), "SLURM107") == [("slurm.conf", "error")]
    # files of two prefixes are two samples that only share the folder: what a comparison finds is info
    samples = tmp_path / "samples"
    samples.mkdir()
    (samples / "hopper.slurm.conf").write_text((cluster / "slurm.conf").read_text())
    (samples / "blackwell.gres.conf").write_text((cluster / "gres.conf").read_text())
    findings = [f for f in _lint(samples) if f["code"] == "SLURM107"]
    assert [(Path(f["file"]).name, f["severity"]) for f in findings] == [("hopper.slurm.conf", "info")]
    assert "only share the folder" in findings[0]["message"]
