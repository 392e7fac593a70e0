"""hpcconf lint on real files from public repositories, held against an expert's verdicts.

``../shared/upstream/wild/`` holds the files (``files/``), where they come from (``SOURCES.md``) and the
expert's verdict on every finding of hpcconf at commit 708c0717 and every real defect it missed
(``verdicts.yaml``). Each file is linted alone, copied under its own name into an empty directory, with
the file's ``args``; each group is linted as one directory (``hpcconf lint . ARGS``). The test holds:

- no finding judged false comes back (matched by code and line; in groups, by file, code and line);
- every finding judged true stays;
- every listed miss is caught by the rule named in MISSES_CAUGHT, or is named in MISSES_NOT_YET_CAUGHT
  with the reason;
- no finding appears that the expert did not judge (a new finding on a real file is a new claim: it
  must be a caught miss, or it is a false alarm until someone judges it).

Counts at commit 708c0717 (before this test), by rule, over the single files and the groups:
  false alarms present: DKR002 7, MPI002 5, HELM001 1, NCCL010 1, NCCL017 1, VOL003 1, XA001 1 (17)
  true kept: AZH001 21, AZH008 2, DKR003 1, DKR004 1, NCCL010 1, NCCL015 1, NCCL026 1, NCCL027 6,
             NCCL028 2, VOL001 1, HELM004 1 (38 of 38)
  misses caught: 0 of 3 (plus 1 debatable miss)
Run ``python -m pytest tests/test_wild.py -s`` to print the current counts.
"""

from __future__ import annotations

import json
import shutil
from collections import Counter
from pathlib import Path

import pytest
from ruamel.yaml import YAML
from typer.testing import CliRunner

from hpcconf.cli import app

WILD = Path(__file__).resolve().parents[1].parent / "shared" / "upstream" / "wild"

# (file, line of the miss) -> the rule that now reports it there (or on one of its alt_lines).
MISSES_CAUGHT: dict[tuple[str, int], str] = {
    ("crusoe-cmk-nccl-gb200-mpijob.yaml", 50): "NCCL012",
    ("nemo-csp-azure-nccl.sh", 1): "SLURM001",
    ("user-mcwgem-train_node_4.sh", 11): "NCCL012",
    ("aws-nccl-tests-mpijob.yaml", 22): "K8S005",
    ("nemo-csp-aws-nccl.sh", 1): "SLURM001",
    ("nemo-csp-oci-nccl.sh", 1): "SLURM001",
    ("oci-bm-gpu-rtxpro-8.nccl.conf", 2): "NCCL029",
}
# Findings the expert could not judge (hpcconf did not see the setting then), judged here, with the evidence.
NEW_FINDINGS_JUDGED_TRUE: dict[tuple[str, str, int], str] = {
    ("crusoe-ib-probe-multinode-mpijob.yaml", "NCCL010", 89):
        "NCCL_BOOTSTRAP_TIMEOUT (an mpirun -x list item, read since list-form argv is parsed) is read by no "
        "NCCL release (no match in NVIDIA/nccl at 5067397c) nor by nccl-rdma-sharp-plugins or aws-ofi-nccl",
}
NEW_FINDINGS_JUDGED_TRUE[("user-mcwgem-train_node_4.sh", "NCCL060", 8)] = (
    "info, and it names the context: NCCL_P2P_DISABLE=1 ('keep IB but disable P2P' against a PCIe hang) costs NVLink "
    "bandwidth only on a node with NVLink, which the script does not name (NCCL docs: P2P_DISABLE disables P2P "
    "over NVLink and PCIe)")
_CENTOS7_EOL = ("CentOS 7.9 reached end of life on 2024-06-30 (Red Hat's CentOS Linux EOL notice): the image gets "
                "no security updates; AZH100 warns on each place that pins it")
NEW_FINDINGS_JUDGED_TRUE.update({("azhop-tutorial-lab1-config.yml", "AZH100", line): _CENTOS7_EOL
                                 for line in (65, 189, 196, 201, 206, 212, 219, 226)})
_UNPINNED = ("HELM006 (info): the file names no chart version and is linted alone with no --chart; it is the "
             "chart's values.yaml on the default branch ({}), newer than any release tag, so keys can only be judged "
             "against the union of the versions read")
NEW_FINDINGS_JUDGED_TRUE.update({
    ("aioa-gpu-operator-values.yaml", "HELM006", 1): _UNPINNED.format("a copy of NVIDIA/gpu-operator's values"),
    ("aioa-network-operator-values.yaml", "HELM006", 1): _UNPINNED.format("a copy of Mellanox/network-operator's values"),
    ("node-feature-discovery-values-v0.19.0.yaml", "HELM006", 1):
        _UNPINNED.format("the file name says v0.19.0 but the file itself pins nothing"),
    ("aws-nccl-tests-mpijob.yaml", "K8S005", 24):
        "LD_LIBRARY_PATH ...:$LD_LIBRARY_PATH: Kubernetes expands only $(VAR) (the same latent defect the expert "
        "listed as a miss at line 22, on the next env value)",
    ("gpu-operator-values-main.yaml", "HELM006", 1): _UNPINNED.format("NVIDIA/gpu-operator at fa829d61"),
    ("network-operator-values.yaml", "HELM006", 1): _UNPINNED.format("Mellanox/network-operator at 57181a61"),
})
_NOT_VALIDATED = ("K8S038 (info): a custom resource kind hpcconf has no schema for ({}); the info says so, which is "
                  "true by construction: nothing in the document was checked against a schema")
NEW_FINDINGS_JUDGED_TRUE.update({
    ("crusoe-cmk-nccl-gb200-mpijob.yaml", "K8S038", 2): _NOT_VALIDATED.format("resource.nvidia.com ComputeDomain"),
    ("netopdocs-sriov-ib-rdma-complete.yaml", "K8S038", 37): _NOT_VALIDATED.format("SriovNetworkNodePolicy"),
    ("netopdocs-sriov-ib-rdma-complete.yaml", "K8S038", 55): _NOT_VALIDATED.format("SriovIBNetwork"),
    ("oci-kueue-h100-mpijob.yaml", "K8S038", 2): _NOT_VALIDATED.format("kueue ResourceFlavor"),
    ("oci-kueue-h100-mpijob.yaml", "K8S038", 11): _NOT_VALIDATED.format("kueue ClusterQueue"),
    ("oci-kueue-h100-mpijob.yaml", "K8S038", 31): _NOT_VALIDATED.format("kueue LocalQueue"),
})
_RERUN_IN_PLACE = ("VOL010: the launcher runs all_reduce_perf under `set -e` with restartPolicy OnFailure and no PodFailed "
                   "policy: a failed test exits non-zero, the kubelet restarts the launcher in place (its pod never "
                   "reaches Failed, so Volcano sees no PodFailed), and the test reruns while the job holds the GPUs")
NEW_FINDINGS_JUDGED_TRUE.update({
    ("oci-volcano-h100-nccl-test.yaml", "VOL010", 78): _RERUN_IN_PLACE,
    ("oci-volcano-gpu4.8-nccl-test.yaml", "VOL010", 71): _RERUN_IN_PLACE,
})
_OLDER_CRD = ("K8S041 (info): {} is a field of network-operator v26.4.1's NicClusterPolicy CRD that v23.4.0's lacks "
              "(deployment/network-operator/crds/mellanox.com_nicclusterpolicies.yaml at both tags); the file names no "
              "release, so which CRD the cluster has is cluster state and the info names both")
NEW_FINDINGS_JUDGED_TRUE.update({
    ("aioa-nicclusterpolicy-base.yaml", "K8S041", 33): _OLDER_CRD.format("ofedDriver.forcePrecompiled"),
    ("aioa-nicclusterpolicy-base.yaml", "K8S041", 54): _OLDER_CRD.format("docaTelemetryService"),
    ("netop-nicclusterpolicy-cr-full.yaml", "K8S041", 94): _OLDER_CRD.format("nvIpam"),
    ("netop-nicclusterpolicy-cr-full.yaml", "K8S041", 106): _OLDER_CRD.format("nicFeatureDiscovery"),
    ("netop-nicclusterpolicy-cr-full.yaml", "K8S041", 110): _OLDER_CRD.format("docaTelemetryService"),
    ("netop-nicclusterpolicy-cr-full.yaml", "K8S041", 114): _OLDER_CRD.format("nicConfigurationOperator"),
    ("netop-nicclusterpolicy-cr.yaml", "K8S041", 59): _OLDER_CRD.format("nvIpam"),
    ("netopdocs-host-device-rdma-complete.yaml", "K8S041", 23): _OLDER_CRD.format("nvIpam"),
    ("netopdocs-macvlan-rdma-shared-complete.yaml", "K8S041", 22): _OLDER_CRD.format("nvIpam"),
    ("netopdocs-sriov-ib-rdma-complete.yaml", "K8S041", 10): _OLDER_CRD.format("nvIpam"),
})
# (file, line of the miss) -> why hpcconf does not report it yet.
MISSES_NOT_YET_CAUGHT: dict[tuple[str, int], str] = {
    ("azurehpc-aks-ndv4-nhc-volcano.yaml", 34):
        "debatable: a privileged pod may use every GPU through the image's NVIDIA_VISIBLE_DEVICES without "
        "requesting nvidia.com/gpu; hpcconf cannot tell from the manifest that the image runs GPU work",
}


def _verdicts() -> dict:
    if not (WILD / "verdicts.yaml").is_file():
        pytest.skip(f"{WILD} is absent: the real-world files and verdicts are provided beside the checkout")
    return YAML(typ="safe").load((WILD / "verdicts.yaml").read_text())


def _lint(directory: Path, targets: list[str], args: list[str], monkeypatch: pytest.MonkeyPatch) -> list[dict]:
    monkeypatch.chdir(directory)  # no config file above an empty tmp dir: defaults only
    result = CliRunner().invoke(app, ["lint", *targets, "--format", "json", *args])
    assert result.exit_code in (0, 1), result.output
    return json.loads(result.stdout)["findings"]


def _keys(items: list[dict], with_file: bool = False) -> set[tuple]:
    return {((i["file"],) if with_file else ()) + (i["code"], i["line"]) for i in items or []}


class Tally:
    """Counts by rule, printed at the end so a run with -s shows where hpcconf stands."""

    def __init__(self) -> None:
        self.false_present: Counter = Counter()
        self.true_kept: Counter = Counter()
        self.true_lost: Counter = Counter()
        self.unjudged: list[str] = []
        self.misses_caught = 0
        self.misses = 0


def _judge(label: str, found: set[tuple], verdict: dict, tally: Tally, with_file: bool) -> list[str]:
    problems = []
    for key in _keys(verdict.get("false"), with_file) & found:
        tally.false_present[key[-2]] += 1
        problems.append(f"{label}: false alarm {key} came back")
    for key in _keys(verdict.get("true"), with_file):
        if key in found:
            tally.true_kept[key[-2]] += 1
        else:
            tally.true_lost[key[-2]] += 1
            problems.append(f"{label}: true finding {key} is gone")
    return problems


def _judge_misses(name: str, found: set[tuple], verdict: dict, tally: Tally) -> tuple[list[str], set[tuple]]:
    problems, catches = [], set()
    for miss in verdict.get("misses") or []:
        tally.misses += 0 if miss.get("debatable") else 1
        key = (name, miss["line"])
        lines = [miss["line"], *(miss.get("alt_lines") or [])]
        if key in MISSES_CAUGHT:
            code = MISSES_CAUGHT[key]
            hit = {(code, line) for line in lines} & found
            catches |= hit
            if hit:
                tally.misses_caught += 1
            else:
                problems.append(f"{name}: miss at line {miss['line']} ({miss['defect']}) is not caught by {code}")
        elif key not in MISSES_NOT_YET_CAUGHT:
            problems.append(f"{name}: miss at line {miss['line']} ({miss['defect']}) is neither caught nor "
                            "listed in MISSES_NOT_YET_CAUGHT")
    return problems, catches


def test_wild_files_hold_the_verdicts(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    verdicts = _verdicts()
    tally = Tally()
    problems: list[str] = []
    for entry in verdicts["files"]:
        name = entry["file"]
        work = tmp_path / name.replace(".", "_")
        work.mkdir()
        shutil.copyfile(WILD / "files" / name, work / name)
        found = _keys(_lint(work, [name], entry.get("args") or [], monkeypatch))
        problems += _judge(name, found, entry, tally, with_file=False)
        miss_problems, catches = _judge_misses(name, found, entry, tally)
        problems += miss_problems
        judged = _keys(entry.get("true")) | _keys(entry.get("false")) | _keys(entry.get("debatable")) | catches \
            | {(code, line) for (file, code, line) in NEW_FINDINGS_JUDGED_TRUE if file == name}
        tally.unjudged += [f"{name}: {key}" for key in sorted(found - judged)]
    for group in verdicts["groups"]:
        work = tmp_path / ("group-" + group["group"])
        work.mkdir()
        for name in group["files"]:
            shutil.copyfile(WILD / "files" / name, work / name)
        found = _keys(_lint(work, ["."], group.get("args") or [], monkeypatch), with_file=True)
        problems += _judge(f"group {group['group']}", found, group, tally, with_file=True)
    _print(tally)
    problems += [f"unjudged finding {u}" for u in tally.unjudged]
    assert not problems, "\n".join(problems)


def _print(tally: Tally) -> None:
    def by_rule(counter: Counter) -> str:
        return ", ".join(f"{code} {n}" for code, n in sorted(counter.items())) or "none"

    print(f"\nfalse alarms present: {by_rule(tally.false_present)} ({sum(tally.false_present.values())})")
    print(f"true kept: {by_rule(tally.true_kept)} ({sum(tally.true_kept.values())}); "
          f"lost: {by_rule(tally.true_lost)}")
    print(f"misses caught: {tally.misses_caught} of {tally.misses}")
    print(f"unjudged findings: {len(tally.unjudged)}")
