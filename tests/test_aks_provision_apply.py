"""provision.sh creates or updates: run twice against a fake az/kubectl/helm, the second run applies only
the reviewed change (a count is scaled, a pool added), and a change AKS cannot make in place (a VM size)
stops the script before it changes anything. Nothing is ever deleted but the previous NCCL test job."""

from __future__ import annotations

import json
import os
import shutil
import stat
import subprocess
from pathlib import Path

import pytest

from hpcconf.pipeline import compile_spec

REPO = Path(__file__).resolve().parents[1]
CURRENT = REPO / "examples" / "ndmv4-aks-current.yaml"
FAKE_CLI = REPO / "tests" / "fixtures" / "fake-cli"
MUTATING = (("aks", "create"), ("aks", "upgrade"), ("aks", "nodepool", "add"), ("aks", "nodepool", "scale"),
            ("aks", "nodepool", "delete"), ("acr", "create"))

pytestmark = pytest.mark.skipif(shutil.which("bash") is None, reason="needs bash to run provision.sh")


class Cloud:
    """A fake az (state in a JSON file), kubectl and helm on PATH; every call is recorded."""

    def __init__(self, root: Path):
        self.bin = root / "bin"
        self.bin.mkdir()
        for name, source in (("az", "az"), ("kubectl", "kubectl"), ("helm", "kubectl")):
            target = self.bin / name
            shutil.copyfile(FAKE_CLI / source, target)
            target.chmod(target.stat().st_mode | stat.S_IXUSR)
        self.log = root / "calls.jsonl"
        self.state = root / "az-state.json"

    def run(self, script: Path) -> tuple[subprocess.CompletedProcess, list[list[str]]]:
        self.log.write_text("")
        env = {**os.environ, "PATH": f"{self.bin}{os.pathsep}{os.environ['PATH']}",
               "FAKE_CLI_LOG": str(self.log), "FAKE_AZ_STATE": str(self.state)}
        done = subprocess.run(["bash", str(script)], env=env, capture_output=True, text=True, timeout=60)
        calls = [json.loads(line) for line in self.log.read_text().splitlines()]
        return done, calls

    def pools(self) -> dict:
        return json.loads(self.state.read_text())["pools"]


def _mutations(calls: list[list[str]]) -> list[list[str]]:
    return [c[1:] for c in calls if c[0] == "az" and any(tuple(c[1:1 + len(m)]) == m for m in MUTATING)]


def _build(tmp_path: Path, name: str, text: str) -> Path:
    spec = tmp_path / name / "spec.yaml"
    spec.parent.mkdir()
    spec.write_text(text)
    build = compile_spec(spec)
    out = tmp_path / name / "out"
    for artifact in build.artifacts:
        (out / artifact.path).parent.mkdir(parents=True, exist_ok=True)
        (out / artifact.path).write_text(artifact.content)
    return out / "aks" / "provision.sh"


def _spec(count: int = 2, sku: str = "Standard_ND96amsr_A100_v4", extra_pool: str = "") -> str:
    text = CURRENT.read_text()
    text = text.replace("    sku: Standard_ND96amsr_A100_v4\n    count: 2\n", f"    sku: {sku}\n    count: {count}\n{extra_pool}")
    return text.replace("# yaml-language-server: $schema=../schemas/hpcconf-spec.schema.json\n", "")


@pytest.fixture()
def cloud(tmp_path: Path) -> Cloud:
    return Cloud(tmp_path)


def test_first_run_creates_second_run_scales_only_the_changed_pool(tmp_path, cloud):
    first = _build(tmp_path, "v1", _spec(count=2))
    done, calls = cloud.run(first)
    assert done.returncode == 0, done.stderr
    made = [m[:3] for m in _mutations(calls)]
    assert made == [["acr", "create", "--resource-group"], ["aks", "create", "--resource-group"],
                    ["aks", "nodepool", "add"]]
    assert cloud.pools()["ndmv4"]["count"] == 2 and cloud.pools()["ndmv4"]["osSku"] == "Ubuntu2404"
    assert any(c[:3] == ["helm", "upgrade", "-i"] for c in calls)

    again, calls = cloud.run(first)  # the same spec again: nothing to change
    assert again.returncode == 0, again.stderr
    assert _mutations(calls) == []

    second = _build(tmp_path, "v2", _spec(count=3))
    done, calls = cloud.run(second)
    assert done.returncode == 0, done.stderr
    assert _mutations(calls) == [["aks", "nodepool", "scale", "--resource-group", "ndmv4-aks-current-rg",
                                  "--cluster-name", "ndmv4-aks-current", "--name", "ndmv4", "--node-count", "3"]]
    assert cloud.pools()["ndmv4"]["count"] == 3 and set(cloud.pools()) == {"system", "ndmv4"}
    # the test job is the one thing deleted: a Volcano Job runs once, so the old run makes way for the new
    deletes = [c for c in calls if "delete" in c]
    assert deletes == [["kubectl", "delete", "-f", str(second.parent / "volcano-job.yaml"), "--ignore-not-found"]]


def test_an_added_pool_is_added_and_the_others_are_left_alone(tmp_path, cloud):
    assert cloud.run(_build(tmp_path, "v1", _spec()))[0].returncode == 0
    extra = "  - name: nc24\n    sku: Standard_NC24ads_A100_v4\n    count: 1\n"
    done, calls = cloud.run(_build(tmp_path, "v2", _spec(extra_pool=extra)))
    assert done.returncode == 0, done.stderr
    assert [m[:3] for m in _mutations(calls)] == [["aks", "nodepool", "add"]]
    assert cloud.pools()["nc24"] == {"count": 1, "vmSize": "Standard_NC24ads_A100_v4", "osSku": "Ubuntu2404",
                                     "osDiskSizeGb": 128}
    waits = [c for c in calls if c[:3] == ["kubectl", "wait", "node"]]
    assert {c[4] for c in waits} == {"agentpool=ndmv4", "agentpool=nc24"}  # every GPU pool is waited for


def test_a_vm_size_change_stops_before_changing_anything(tmp_path, cloud):
    assert cloud.run(_build(tmp_path, "v1", _spec()))[0].returncode == 0
    done, calls = cloud.run(_build(tmp_path, "v2", _spec(sku="Standard_ND96asr_v4", count=3)))
    assert done.returncode == 1
    assert "AKS cannot change these in place: the pool must be recreated" in done.stderr
    assert "'Standard_ND96amsr_A100_v4 Ubuntu2404 128'" in done.stderr and "'Standard_ND96asr_v4 Ubuntu2404 128'" in done.stderr
    assert _mutations(calls) == []  # not even the count: the script stopped before its first change
    assert not any(c[0] in ("helm", "kubectl") for c in calls)


def test_a_kubernetes_version_change_upgrades_in_place(tmp_path, cloud):
    assert cloud.run(_build(tmp_path, "v1", _spec()))[0].returncode == 0
    state = json.loads(cloud.state.read_text())
    cloud.state.write_text(json.dumps({**state, "k8s": "1.34.3"}))  # as if the cluster ran an older minor
    done, calls = cloud.run(_build(tmp_path, "v1b", _spec()))
    assert done.returncode == 0, done.stderr
    assert [m[:2] for m in _mutations(calls)] == [["aks", "upgrade"]]
