"""The generated test jobs' extra passes (ring, single node) and the node health checks on each platform."""

from __future__ import annotations

import os
import re
import subprocess
from pathlib import Path

import pytest
from ruamel.yaml import YAML

from hpcconf.knowledge.nhc import parse_nhc_conf
from hpcconf.pipeline import compile_spec

REPO = Path(__file__).resolve().parents[1]
CRUSOE = REPO / "examples" / "crusoe-h100-slurm.yaml"
AKS = REPO / "examples" / "ndmv4-aks.yaml"
AZHOP = REPO / "examples" / "azhop-ncv4.yaml"


def _artifacts(spec: Path) -> dict[str, str]:
    return {a.path: a.content for a in compile_spec(spec).artifacts}


def _with(tmp_path: Path, spec: Path, extra: str) -> Path:
    out = tmp_path / spec.name
    out.write_text(spec.read_text(encoding="utf-8") + extra, encoding="utf-8")
    return out


def _docs(text: str) -> list[dict]:
    return [d for d in YAML(typ="safe").load_all(text) if d]


# -- ring and single-node passes -------------------------------------------------------------------

def test_sbatch_runs_a_ring_pass_and_a_single_node_pass_and_judges_each(tmp_path):
    script = _artifacts(CRUSOE)["slurm/h100/all_reduce_perf.sbatch"]
    ring = re.search(r"^NCCL_ALGO=Ring timeout -k 60 \d+ srun (.*?)\| tee -a \"(\S+)\" \|\| failed \"ring\.all_reduce\" \$\?$",
                     script, re.S | re.M)
    assert ring and "all_reduce_perf -b 64M -e 2G" in ring.group(1) and "--nodes=1" not in ring.group(1)
    single = re.search(r"^timeout -k 60 \d+ srun --mpi=pmix --gpus-per-node=8 --nodes=1 (.*?)\| tee -a \"(\S+)\" "
                       r"\|\| failed \"single-node\.all_reduce\" \$\?$", script, re.S | re.M)
    assert single and "all_reduce_perf -b 1M -e 2G" in single.group(1)
    # The multi-node logs with --nodes 2, the single-node log with --nodes 1 (its own floor); all judged, worst exit kept.
    assert re.search(r'judge --nodes 2 "\$\{LOGS\[@\]\}" "\S+ring\.all_reduce\.log"', script)
    assert re.search(r'judge --nodes 1 "\S+single-node\.all_reduce\.log"', script)
    assert script.rstrip().endswith('exit "$RC"')
    subprocess.run(["bash", "-n"], input=script, text=True, check=True)


def test_single_node_pass_runs_to_the_floor_size(tmp_path):
    volcano = _artifacts(AKS)["aks/volcano-job.yaml"]
    # ND96amsr_A100_v4's single-node floor is at 16G (Azure's conf), beyond the test's 8G.
    assert re.search(r"-np 8 -npernode 8 .*?all_reduce_perf -b 8 -e 16G .*?/tmp/single-node\.all_reduce\.log", volcano, re.S)
    assert re.search(r"-np 16 -npernode 8 .*?-x NCCL_ALGO=Ring .*?all_reduce_perf -b 64M -e 8G", volcano, re.S)
    assert "judge --nodes 1 /tmp/single-node.all_reduce.log" in volcano
    assert "judge --nodes 2 /tmp/all_reduce.log" in volcano and "/tmp/ring.all_reduce.log\n" in volcano


def test_ring_pass_replaces_the_pools_nccl_algo(tmp_path):
    spec = _with(tmp_path, AKS, "nccl_env: {NCCL_ALGO: 'allreduce:Tree'}\n")
    volcano = _artifacts(spec)["aks/volcano-job.yaml"]
    ring = volcano.split("== ring.all_reduce", 1)[1].split("== single-node", 1)[0]
    assert "-x NCCL_ALGO=Ring" in ring and "allreduce:Tree" not in ring


def test_passes_can_be_turned_off(tmp_path):
    spec = tmp_path / CRUSOE.name
    spec.write_text(CRUSOE.read_text(encoding="utf-8").replace("nccl_test:\n", "nccl_test:\n  ring_pass: false\n  single_node: false\n"),
                    encoding="utf-8")
    script = _artifacts(spec)["slurm/h100/all_reduce_perf.sbatch"]
    assert "NCCL_ALGO=Ring srun" not in script and "single-node" not in script and "--nodes=1" not in script


def test_one_node_test_has_no_extra_pass():
    script = _artifacts(AZHOP)["slurm/nc96v4/all_reduce_perf.sbatch"]  # one node: the matrix is the single-node run
    assert "ring.all_reduce" not in script and "single-node" not in script


# -- health checks -------------------------------------------------------------------------------------

def test_slurm_gets_an_installer_and_slurm_conf_lines():
    out = _artifacts(CRUSOE)
    conf = out["slurm/health-check.conf"]
    assert "HealthCheckProgram=/usr/local/sbin/hpcconf-health-check-slurm" in conf
    assert "HealthCheckInterval=3600" in conf and "HealthCheckNodeState=IDLE" in conf
    installer = out["slurm/h100/install-health-checks.sh"]
    subprocess.run(["bash", "-n"], input=installer, text=True, check=True)
    # The conf it installs is the health target's file, byte for byte.
    embedded = installer.split("<<'HPCCONF_NHC_EOF'\n", 1)[1].split("HPCCONF_NHC_EOF\n", 1)[0]
    assert embedded == out["health/h100/nhc.conf"]
    assert "git -C \"$nhc_dir\" checkout --quiet 0e0a1ac26a64b32ac4dd7632a529638505d3314a" in installer
    script = out["slurm/h100/all_reduce_perf.sbatch"]
    assert "cat /var/lib/hpcconf/nhc.status" in script and "failed its health checks" in script


def test_installer_writes_conf_and_runner_under_a_root(tmp_path):
    out = _artifacts(CRUSOE)
    script = tmp_path / "install.sh"
    script.write_text(out["slurm/h100/install-health-checks.sh"], encoding="utf-8")
    root = tmp_path / "root"
    subprocess.run(["bash", str(script)], env={**os.environ, "HPCCONF_ROOT": str(root)}, check=True, capture_output=True)
    assert (root / "etc/hpcconf/nhc.conf").read_text(encoding="utf-8") == out["health/h100/nhc.conf"]
    assert os.access(root / "usr/local/sbin/hpcconf-health-check", os.X_OK)
    assert "exec /usr/local/sbin/hpcconf-health-check slurm" in (root / "usr/local/sbin/hpcconf-health-check-slurm").read_text()


def _runner(tmp_path: Path, nhc_rc: int, node_state: str = "State=IDLE Reason=none") -> tuple[subprocess.CompletedProcess, Path, Path]:
    """hpcconf-health-check against a fake run-health-checks.sh and a fake scontrol that logs its calls."""
    runner, env, status, calls = _runner_setup(tmp_path, nhc_rc, node_state)
    result = subprocess.run(["bash", str(runner)], env=env, capture_output=True, text=True)
    return result, status, calls


def _runner_setup(tmp_path: Path, nhc_rc: int, node_state: str = "State=IDLE Reason=none",
                  failed: str = "check_gpu_count: Expected 8 found 7", seconds: float = 0) -> tuple[Path, dict, Path, Path]:
    """The installed runner, its environment, status file and scontrol call log; the fake checks take
    ``seconds`` and, failing, append ``failed`` to the log as NHC does."""
    out = _artifacts(CRUSOE)
    root = tmp_path / "root"
    script = tmp_path / "install.sh"
    script.write_text(out["slurm/h100/install-health-checks.sh"], encoding="utf-8")
    subprocess.run(["bash", str(script)], env={**os.environ, "HPCCONF_ROOT": str(root)}, check=True, capture_output=True)
    nhc = tmp_path / "nhc"
    nhc.mkdir()
    (nhc / "run-health-checks.sh").write_text(
        f"#!/bin/bash\necho \"$*\" >> {tmp_path / 'nhc.runs'}\n"
        "while [ $# -gt 0 ]; do [ \"$1\" = -o ] && out=$2; shift; done\n"
        f"sleep {seconds}\n"
        f"[ {nhc_rc} -eq 0 ] || echo 'ERROR:  nhc:  Health check failed:  {failed}' >> \"$out\"\n"
        f"exit {nhc_rc}\n")
    (nhc / "run-health-checks.sh").chmod(0o755)
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    calls = tmp_path / "scontrol.calls"
    (bin_dir / "scontrol").write_text(f"#!/bin/bash\necho \"$*\" >> {calls}\n"
                                      f"[ \"$1\" = show ] && echo 'NodeName=n1 {node_state}'\nexit 0\n")
    (bin_dir / "scontrol").chmod(0o755)
    status = tmp_path / "status"
    env = {**os.environ, "PATH": f"{bin_dir}:{os.environ['PATH']}", "AZ_NHC_DIR": str(nhc),
           "HPCCONF_NHC_CONF": str(root / "etc/hpcconf/nhc.conf"), "HPCCONF_NHC_STATUS": str(status),
           "HPCCONF_NHC_FAST_CONF": str(root / "etc/hpcconf/nhc-fast.conf"),
           "HPCCONF_NHC_LOG": str(tmp_path / "nhc.log")}
    return root / "usr/local/sbin/hpcconf-health-check", env, status, calls


def test_runner_pass_records_and_resumes_only_its_own_drain(tmp_path):
    result, status, calls = _runner(tmp_path, 0, "State=IDLE+DRAIN Reason=hpcconf-nhc: checking")
    assert result.returncode == 0 and status.read_text().startswith("pass ")
    assert "state=resume" in calls.read_text()


def test_runner_failure_drains_with_the_failed_check(tmp_path):
    result, status, calls = _runner(tmp_path, 1)
    assert result.returncode == 1 and status.read_text().startswith("fail ")
    assert "check_gpu_count: Expected 8 found 7" in status.read_text()
    assert re.search(r"state=drain reason=hpcconf-nhc: failed: Health check failed:\s+check_gpu_count", calls.read_text())


def test_runner_failure_names_this_runs_check_not_an_earlier_one(tmp_path):
    # run-health-checks.sh appends to the log, so the log still holds every earlier failure.
    _runner(tmp_path, 1)
    (tmp_path / "again").mkdir()
    runner, env, status, calls = _runner_setup(tmp_path / "again", 1, failed="check_hw_ib: No IB port mlx5_ib3:1 is ACTIVE")
    env["HPCCONF_NHC_LOG"] = str(tmp_path / "nhc.log")
    subprocess.run(["bash", str(runner)], env=env, capture_output=True, text=True)
    assert "check_hw_ib: No IB port mlx5_ib3:1" in status.read_text() and "check_gpu_count" not in status.read_text()
    assert "failed: Health check failed:  check_hw_ib" in calls.read_text()


def test_slurm_mode_runs_only_the_fast_checks_in_the_foreground(tmp_path):
    """HealthCheckProgram: the fast conf (no bandwidth test: it would share GPUs and HCAs with a job), done
    before slurmd's 60 s are up, so no job starts on a node under test and nothing is left running."""
    runner, env, status, calls = _runner_setup(tmp_path, 1, seconds=0.5)
    result = subprocess.run(["bash", str(runner), "slurm"], env=env, capture_output=True, text=True, timeout=30)
    assert result.returncode == 0  # slurmd ignores it; the drain is the verdict
    assert status.read_text().startswith("fail ")  # finished before the program returned
    assert re.search(r"state=drain reason=hpcconf-nhc: failed: Health check failed:\s+check_gpu_count", calls.read_text())
    (run,) = (tmp_path / "nhc.runs").read_text().splitlines()
    assert f"-c {env['HPCCONF_NHC_FAST_CONF']} " in run + " "
    fast = Path(env["HPCCONF_NHC_FAST_CONF"]).read_text(encoding="utf-8")
    full = Path(env["HPCCONF_NHC_CONF"]).read_text(encoding="utf-8")
    slow = ("check_nccl_allreduce", "check_ib_bw_gdr", "check_ib_bw_non_gdr", "check_gpu_bw", "check_rccl_allreduce")
    assert not any(f"|| {name} " in fast for name in slow) and "|| check_gpu_count 8" in fast
    assert full.count(" || ") > fast.count(" || ") or not any(f"|| {name} " in full for name in slow)


def test_slurm_mode_gives_no_verdict_when_the_checks_outlast_its_time(tmp_path):
    runner, env, status, calls = _runner_setup(tmp_path, 0, seconds=5)
    text = runner.read_text(encoding="utf-8").replace("HPCCONF_NHC_TIMEOUT=50", "HPCCONF_NHC_TIMEOUT=1")
    runner.write_text(text, encoding="utf-8")
    result = subprocess.run(["bash", str(runner), "slurm"], env=env, capture_output=True, text=True, timeout=30)
    assert result.returncode == 0 and not status.exists()
    assert not calls.exists() or "drain" not in calls.read_text()


def test_full_mode_drains_first_and_waits_for_the_nodes_jobs(tmp_path):
    runner, env, status, calls = _runner_setup(tmp_path, 0, "State=MIXED+DRAIN Reason=hpcconf-nhc: bandwidth checks")
    env["HPCCONF_NHC_WAIT_S"] = "0"
    result = subprocess.run(["bash", str(runner), "full"], env=env, capture_output=True, text=True, timeout=30)
    assert result.returncode == 1 and "still runs jobs" in result.stderr
    assert not (tmp_path / "nhc.runs").exists()  # no bandwidth test beside a job
    assert "state=drain reason=hpcconf-nhc: bandwidth checks" in calls.read_text()
    (tmp_path / "idle").mkdir()
    runner, env, status, calls = _runner_setup(tmp_path / "idle", 0, "State=IDLE+DRAIN Reason=hpcconf-nhc: bandwidth checks")
    result = subprocess.run(["bash", str(runner), "full"], env=env, capture_output=True, text=True, timeout=30)
    assert result.returncode == 0 and status.read_text().startswith("pass ") and "state=resume" in calls.read_text()
    (run,) = (tmp_path / "idle" / "nhc.runs").read_text().splitlines()
    assert f"-c {env['HPCCONF_NHC_CONF']} " in run + " "


def test_runner_never_touches_an_administrators_drain(tmp_path):
    result, _status, calls = _runner(tmp_path, 1, "State=IDLE+DRAIN Reason=bad_dimm [admin]")
    assert result.returncode == 1
    assert "update" not in calls.read_text()


def test_azhop_cluster_init_installs_and_runs_the_checks():
    out = _artifacts(AZHOP)
    dispatcher = out["azhop/cluster-init/scripts/zz-hpcconf-nhc.sh"]
    assert "ndv4) bash \"$spec_dir/files/hpcconf/ndv4/install-health-checks.sh\"" in dispatcher
    assert dispatcher.rstrip().endswith("/usr/local/sbin/hpcconf-health-check run")
    for queue in ("ndv4", "nc48v4", "nc96v4"):
        installer = out[f"azhop/cluster-init/files/hpcconf/{queue}/install-health-checks.sh"]
        assert out[f"health/{queue}/nhc.conf"] in installer
        subprocess.run(["bash", "-n"], input=installer, text=True, check=True)
    assert "slurm/health-check.conf" not in out  # az-hop's slurm.conf is cyclecloud-slurm's


def test_aks_daemonset_taints_failing_nodes_with_least_privilege():
    out = _artifacts(AKS)
    docs = _docs(out["aks/health-checks.yaml"])
    kinds = [d["kind"] for d in docs]
    assert kinds == ["ServiceAccount", "ClusterRole", "ClusterRoleBinding", "ConfigMap", "DaemonSet"]
    role = docs[1]
    assert role["rules"] == [{"apiGroups": [""], "resources": ["nodes"], "verbs": ["get", "patch"]}]
    conf = docs[3]["data"]["aznhc.conf"]
    assert ("check_nccl_allreduce", ("228", "1", "16G", "$AZ_NHC_ROOT/topofiles/ndv4-topo.xml")) in parse_nhc_conf(conf)
    # The pod's conf is the node conf without the interfaces only Azure's HPC image names (ib0..7, docker0).
    node = parse_nhc_conf(out["health/ndmv4/nhc.conf"])
    pod = parse_nhc_conf(conf)
    assert [c for c in node if c[0] != "check_hw_eth" or c[1] in (("lo",), ("eth0",))] == pod
    assert ("check_hw_eth", ("docker0",)) in node and ("check_hw_eth", ("docker0",)) not in pod
    pod = docs[4]["spec"]["template"]["spec"]
    assert pod["nodeSelector"] == {"kubernetes.azure.com/agentpool": "ndmv4"} and pod["serviceAccountName"] == "hpcconf-nhc"
    container = pod["containers"][0]
    assert "nvidia.com/gpu" not in container["resources"]["requests"]  # it would hold the test's GPUs
    assert container["volumeMounts"][0]["mountPath"] == "/azure-nhc/conf"
    assert container["readinessProbe"]["exec"]["command"] == ["test", "-f", "/tmp/nhc-passed"]
    script = container["command"][2]
    subprocess.run(["bash", "-n"], input=script, text=True, check=True)
    assert "/spec/taints/-" in script and "hpcconf.io/nhc-failed" in script
    # The workers wait for the pod on their own node to be Ready.
    job = _docs(out["aks/volcano-job.yaml"])[0]
    worker = job["spec"]["tasks"][1]["template"]["spec"]
    wait = worker["initContainers"][0]["command"]
    assert wait[:3] == ["kubectl", "wait", "pod"] and "spec.nodeName=$(NODE_NAME)" in wait
    assert "app.kubernetes.io/name=hpcconf-nhc,hpcconf.io/pool=ndmv4" in wait
    assert "health-checks.yaml" in out["aks/provision.sh"]


def test_aks_daemonset_runs_azures_rocm_image_on_amd_pools(tmp_path):
    # check_gpu_count ... rocm and check_rccl_allreduce call rocm-smi and rccl-tests: only aznhc-rocm has them
    # (Azure/azurehpc-health-checks dockerfile/azure-rocm-nhc.dockerfile; run-health-checks.sh picks it on AMD).
    def images(spec: Path) -> list[str]:
        docs = _docs(_artifacts(spec)["aks/health-checks.yaml"])
        return [d["spec"]["template"]["spec"]["containers"][0]["image"] for d in docs if d["kind"] == "DaemonSet"]
    assert images(REPO / "examples" / "ndmi300x-aks-slurm.yaml") == ["mcr.microsoft.com/aznhc/aznhc-rocm:latest"]
    assert images(AKS) == ["mcr.microsoft.com/aznhc/aznhc-nv:latest"]
    pinned = "mcr.microsoft.com/aznhc/aznhc-rocm@sha256:" + "0" * 64
    assert images(_with(tmp_path, REPO / "examples" / "ndmi300x-aks-slurm.yaml", f"health_checks: {{image: '{pinned}'}}\n")) == [pinned]


def test_health_checks_can_be_turned_off(tmp_path):
    out = _artifacts(_with(tmp_path, AKS, "health_checks: {enabled: false}\n"))
    assert "aks/health-checks.yaml" not in out and not any(p.startswith("health/") for p in out)
    assert "initContainers" not in out["aks/volcano-job.yaml"].split("mpiworker", 2)[-1]
    out = _artifacts(_with(tmp_path, CRUSOE, "health_checks: {enabled: false}\n"))
    assert "slurm/health-check.conf" not in out and "nhc.status" not in out["slurm/h100/all_reduce_perf.sbatch"]


@pytest.mark.parametrize("spec", [CRUSOE, AKS, AZHOP])
def test_generated_scripts_parse(spec):
    for path, text in _artifacts(spec).items():
        if path.endswith((".sh", ".sbatch")):
            subprocess.run(["bash", "-n"], input=text, text=True, check=True)


def test_sbatch_logs_name_their_collective():
    """A log's file name holds the job's collective too (nccl-all_reduce-<pool>.<id>.all_gather.log): the
    binary echoed at the top of each log is what the report reads, before the file name."""
    from hpcconf.parsers.nccl_tests_log import collective_from_name, parse_text

    script = _artifacts(CRUSOE)["slurm/h100/all_reduce_perf.sbatch"]
    assert 'echo "== ${test}_perf" > "$log"' in script and 'tee -a "$log"' in script
    assert 'echo "== all_reduce_perf (single-node.all_reduce)" > ' in script
    table = ("== all_gather_perf\n#       size         count      type   redop    root     time   algbw   busbw #wrong"
             "     time   algbw   busbw #wrong\n           8             2     float    none      -1    10.00    0.00"
             "    0.00      0    10.00    0.00    0.00      0\n")
    name = "nccl-all_reduce-h100.1.all_gather.log"
    assert collective_from_name(name) == "all_reduce"
    assert [run.collective for run in parse_text(table, name, collective_from_name(name)).runs] == ["all_gather"]


@pytest.mark.parametrize("mode", ["slurm", "full"])
def test_runner_creates_the_status_directory_on_a_fresh_node(tmp_path, mode):
    """Nothing but the runner and the installer creates /var/lib/hpcconf: the lock beside the status file must
    not be opened in a directory that does not exist yet (no check would ever run, no node be drained)."""
    runner, env, _status, calls = _runner_setup(tmp_path, 1)
    status = tmp_path / "var/lib/hpcconf/nhc.status"
    env["HPCCONF_NHC_STATUS"] = str(status)
    result = subprocess.run(["bash", str(runner), mode], env=env, capture_output=True, text=True, timeout=30)
    assert "No such file" not in result.stderr and "Bad file descriptor" not in result.stderr
    assert status.read_text().startswith("fail ") and "state=drain" in calls.read_text()
    (run,) = (tmp_path / "nhc.runs").read_text().splitlines()
    conf = env["HPCCONF_NHC_FAST_CONF" if mode == "slurm" else "HPCCONF_NHC_CONF"]
    assert f"-c {conf} " in run + " "


def test_installer_creates_the_status_directory(tmp_path):
    script = tmp_path / "install.sh"
    script.write_text(_artifacts(CRUSOE)["slurm/h100/install-health-checks.sh"], encoding="utf-8")
    subprocess.run(["bash", str(script)], env={**os.environ, "HPCCONF_ROOT": str(tmp_path / "root")},
                   check=True, capture_output=True)
    assert (tmp_path / "root/var/lib/hpcconf").is_dir()
