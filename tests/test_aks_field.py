"""What an AKS deployer finds running today's output on today's upstream (issue 21, AKS half): the health-check
pod gets the NVIDIA runtime under gpu-operator's CDI default, a failing test fails the Volcano job, and the
NFD/NodeFeatureRule, image pins and UCX bootstrap settings. Each test names the upstream fact it holds to."""

from __future__ import annotations

import re
import shutil
import subprocess
from pathlib import Path

import pytest
from ruamel.yaml import YAML

from hpcconf.knowledge import charts, pci_ids
from hpcconf.lint.context import LintContext
from hpcconf.lint.engine import lint_paths
from hpcconf.pipeline import compile_spec
from hpcconf.resolve.test_passes import RUN_START_S, run_budget_s

REPO = Path(__file__).resolve().parents[1]
CURRENT = REPO / "examples" / "ndmv4-aks-current.yaml"
AMD = REPO / "examples" / "ndmi300x-aks-slurm.yaml"


def _docs(text: str) -> list[dict]:
    return [d for d in YAML(typ="safe").load_all(text) if d]


def _artifacts(spec: Path) -> dict[str, str]:
    return {a.path: a.content for a in compile_spec(spec).artifacts}


needs_bash_only = pytest.mark.skipif(shutil.which("bash") is None, reason="needs bash")


def _daemon_sets(artifacts: dict[str, str]) -> list[dict]:
    return [d for d in _docs(artifacts["aks/health-checks.yaml"]) if d["kind"] == "DaemonSet"]


# -- item 1: the health-check pod and gpu-operator's CDI default -------------------------------------------

def test_cdi_threshold_agrees_with_the_chart_defaults():
    # values.yaml cdi.enabled: false up to v25.3.x, true from v25.10 (chart_keys.yaml, read at each tag).
    for version in charts.known_versions("gpu-operator"):
        default = charts.chart_default("gpu-operator", version, "cdi.enabled")
        assert charts.gpu_operator_cdi_by_default(version) is bool(default), version


def test_nvidia_health_check_pod_names_the_operators_runtime_class():
    (daemon_set,) = _daemon_sets(_artifacts(CURRENT))
    pod = daemon_set["spec"]["template"]["spec"]
    assert pod["runtimeClassName"] == "nvidia"
    container = pod["containers"][0]
    assert {"name": "NVIDIA_VISIBLE_DEVICES", "value": "all"} in container["env"]
    assert "nvidia.com/gpu" not in container["resources"]["requests"]  # it must not hold the test's GPUs


def test_amd_health_check_pod_has_no_nvidia_runtime_class():
    (daemon_set,) = _daemon_sets(_artifacts(AMD))
    assert "runtimeClassName" not in daemon_set["spec"]["template"]["spec"]


def _aks_files(tmp_path: Path, artifacts: dict[str, str]) -> Path:
    root = tmp_path / "out"
    for path, text in artifacts.items():
        if path.startswith("aks/"):
            (root / path).parent.mkdir(parents=True, exist_ok=True)
            (root / path).write_text(text, encoding="utf-8")
    return root / "aks"


def test_generated_health_checks_lint_clean_with_their_gpu_operator_values(tmp_path):
    aks = _aks_files(tmp_path, _artifacts(CURRENT))
    findings = lint_paths([str(aks)], LintContext()).findings
    assert not [f for f in findings if f.code == "K8S006"], findings


def test_the_old_daemonset_is_an_error_beside_cdi_values_and_silent_when_cdi_is_off(tmp_path):
    artifacts = _artifacts(CURRENT)
    old = artifacts["aks/health-checks.yaml"].replace("      runtimeClassName: nvidia\n", "")
    assert old != artifacts["aks/health-checks.yaml"]
    aks = _aks_files(tmp_path, {**artifacts, "aks/health-checks.yaml": old})
    errors = [f for f in lint_paths([str(aks)], LintContext()).findings if f.code == "K8S006"]
    assert [f.severity.value for f in errors] == ["error"] and "26.7.0" in errors[0].message
    values = aks / "gpu-operator-values.yaml"
    values.write_text(values.read_text(encoding="utf-8") + "cdi:\n  enabled: false\n", encoding="utf-8")
    assert not [f for f in lint_paths([str(aks)], LintContext()).findings if f.code == "K8S006"]
    values.unlink()  # the pod alone: the deployment's gpu-operator is unknown -> info
    alone = [f for f in lint_paths([str(aks / "health-checks.yaml")], LintContext()).findings if f.code == "K8S006"]
    assert [f.severity.value for f in alone] == ["info"]


# -- item 6 (AKS): the inputs run-health-checks.sh gives the container --------------------------------------

def test_health_check_pod_gets_the_kernel_log_and_8_gib_shm():
    # run-health-checks.sh @0e0a1ac: -v ${kernel_log}:/azure-nhc/syslog (syslog, else messages), --shm-size=8g.
    (daemon_set,) = _daemon_sets(_artifacts(CURRENT))
    pod = daemon_set["spec"]["template"]["spec"]
    volumes = {v["name"]: v for v in pod["volumes"]}
    mounts = {m["name"]: m for m in pod["containers"][0]["volumeMounts"]}
    assert volumes["host-log"]["hostPath"] == {"path": "/var/log", "type": "Directory"}
    assert mounts["host-log"] == {"name": "host-log", "mountPath": "/host/var/log", "readOnly": True}
    assert volumes["shm"]["emptyDir"] == {"medium": "Memory", "sizeLimit": "8Gi"} and mounts["shm"]["mountPath"] == "/dev/shm"
    script = pod["containers"][0]["command"][2]
    link = script.index("ln -sf \"$log\" /azure-nhc/syslog")
    assert "for log in /host/var/log/syslog /host/var/log/messages; do" in script
    assert link < script.index("/azure-nhc/aznhc-entrypoint.sh")


@needs_bash_only
def test_health_check_script_links_the_first_kernel_log_that_exists(tmp_path):
    (daemon_set,) = _daemon_sets(_artifacts(CURRENT))
    script = daemon_set["spec"]["template"]["spec"]["containers"][0]["command"][2]
    head = script[:script.index("rc=0\n")]
    (tmp_path / "host" / "var" / "log").mkdir(parents=True)
    (tmp_path / "host" / "var" / "log" / "messages").write_text("kernel: NVRM: Xid 79\n", encoding="utf-8")
    (tmp_path / "azure-nhc").mkdir()
    sandboxed = head.replace("/host/var/log", f"{tmp_path}/host/var/log").replace("/azure-nhc", f"{tmp_path}/azure-nhc")
    subprocess.run(["bash", "-c", sandboxed], check=True, timeout=30)
    assert (tmp_path / "azure-nhc" / "syslog").read_text(encoding="utf-8") == "kernel: NVRM: Xid 79\n"


# -- item 5: a failing test fails the job -------------------------------------------------------------------

FAKE_MPIRUN = """#!/bin/bash
# mpirun stand-in: prints an nccl-tests table ($STUB_BUSBW GB/s, $STUB_WRONG wrong) and exits $STUB_RC.
echo "# nccl-tests stand-in: $*"
[ -n "$STUB_HANG" ] && exec sleep "$STUB_HANG"  # a hung collective: never prints, never exits on its own
echo "#       size         count      type   redop    root     time   algbw   busbw #wrong     time   algbw   busbw #wrong"
if [ "${STUB_TABLE:-1}" = 1 ]; then
  for size in 8 1048576 8589934592 17179869184; do
    printf '%s\\n' "$(printf "%14s %14s     float     sum      -1    62639  274.27  %7s  %5s    62601  274.44  %7s  %5s" \
      "$size" "$((size / 4))" "$STUB_BUSBW" "$STUB_WRONG" "$STUB_BUSBW" "$STUB_WRONG")"
  done
  echo "# Out of bounds values : $STUB_WRONG OK"
  echo "# Avg bus bandwidth    : $STUB_BUSBW"
fi
exit "${STUB_RC:-0}"
"""


def _launcher_script(artifacts: dict[str, str]) -> str:
    job = _docs(artifacts["aks/volcano-job.yaml"])[0]
    launcher = next(t for t in job["spec"]["tasks"] if t["name"] == "mpimaster")
    return launcher["template"]["spec"]["containers"][0]["command"][2]


@pytest.fixture(scope="module")
def launcher() -> str:
    return _launcher_script(_artifacts(CURRENT))


def _run_launcher(script: str, tmp_path: Path, **stub: str) -> subprocess.CompletedProcess:
    """The launcher's script with the pod's fixed paths moved into ``tmp_path`` and ``mpirun`` a stand-in;
    PATH holds no hpcconf (the test image has none)."""
    bin_dir, logs = tmp_path / "bin", tmp_path / "logs"
    bin_dir.mkdir(parents=True)
    logs.mkdir()
    (bin_dir / "mpirun").write_text(FAKE_MPIRUN, encoding="utf-8")
    (bin_dir / "mpirun").chmod(0o755)
    hostfile = tmp_path / "mpiworker.host"
    hostfile.write_text("worker-0\nworker-1\n", encoding="utf-8")
    sandboxed = (re.sub(r"timeout -k \d+ \d+ ", "timeout -k 1 1 ", script).replace("/tmp/", f"{logs}/")
                 .replace("/etc/volcano/mpiworker.host", str(hostfile))
                 .replace("mkdir -p /var/run/sshd; /usr/sbin/sshd", "true"))
    assert "/usr/sbin/sshd" not in sandboxed and "/etc/volcano" not in sandboxed
    env = {"PATH": f"{bin_dir}:/usr/bin:/bin", "STUB_BUSBW": "240.00", "STUB_WRONG": "0", **stub}
    return subprocess.run(["bash", "-c", sandboxed], capture_output=True, text=True, env=env, timeout=60)


needs_bash = pytest.mark.skipif(shutil.which("bash") is None or shutil.which("awk") is None, reason="needs bash and awk")


@needs_bash
def test_healthy_run_ends_the_launcher_with_0(launcher, tmp_path):
    result = _run_launcher(launcher, tmp_path)
    assert result.returncode == 0, result.stdout + result.stderr
    assert "single-node.all_reduce: pass: busbw 240.00 GB/s >= 228 GB/s" in result.stdout
    assert "hpcconf is not in this image" in result.stdout


@needs_bash
def test_failing_mpirun_fails_the_launcher(launcher, tmp_path):
    result = _run_launcher(launcher, tmp_path, STUB_RC="1")
    assert result.returncode == 1, result.stdout + result.stderr
    assert "FAILED: all_reduce_perf: exit status 1" in result.stderr
    # Every test still ran and was judged before the job failed.
    assert "== single-node.all_reduce" in result.stdout and "== verdict" in result.stdout


@needs_bash
def test_hung_mpirun_is_stopped_and_fails_the_launcher(launcher, tmp_path):
    # Review D2: a hung collective held the gang's GPUs for ever; each mpirun now runs under timeout.
    result = _run_launcher(launcher, tmp_path, STUB_HANG="120")
    assert result.returncode == 1, result.stdout + result.stderr
    assert "FAILED: all_reduce_perf: timed out (exit status 124)" in result.stderr
    assert "== verdict" in result.stdout


def test_every_launcher_mpirun_has_a_budget_from_its_sizes(launcher):
    runs = [line for line in launcher.splitlines() if "mpirun --allow-run-as-root" in line]
    assert runs and all(re.match(r"\s*timeout -k 60 \d+ mpirun ", line) for line in runs), runs
    # Larger messages or more iterations take longer, and the budget is whole minutes above the start allowance.
    base = ["-b", "8", "-e", "8G", "-f", "2", "-n", "20", "-w", "5"]
    assert run_budget_s(base) == 1200
    assert run_budget_s([*base[:3], "16G", *base[4:]]) > run_budget_s(base)
    assert run_budget_s([*base[:7], "100", *base[8:]]) > run_budget_s(base)
    assert run_budget_s(["-b", "8", "-e", "8"]) % 60 == 0 and run_budget_s(["-b", "8", "-e", "8"]) > RUN_START_S


@needs_bash
@pytest.mark.parametrize("stub, message", [
    ({"STUB_WRONG": "3"}, "all_reduce_perf: FAIL: 4 row(s) with wrong results"),
    ({"STUB_BUSBW": "150.00"}, "single-node.all_reduce: FAIL: busbw 150.00 GB/s at 17179869184 bytes, floor 228 GB/s"),
    ({"STUB_TABLE": "0"}, "all_gather_perf: FAIL: no nccl-tests results in the log"),
], ids=["wrong-results", "below-floor", "no-table"])
def test_bad_results_fail_the_launcher_without_hpcconf(launcher, tmp_path, stub, message):
    result = _run_launcher(launcher, tmp_path, **stub)
    assert result.returncode == 1, result.stdout + result.stderr
    assert message in result.stdout


def test_failed_launcher_fails_the_volcano_job():
    """Volcano v1.15.1: a pod fails only under restartPolicy Never (OnFailure restarts it in place, the job stays
    Running); PodFailed -> RestartJob with maxRetry 1 moves the job to Failed (state/restarting.go)."""
    job = _docs(_artifacts(CURRENT)["aks/volcano-job.yaml"])[0]
    launcher = next(t for t in job["spec"]["tasks"] if t["name"] == "mpimaster")
    assert launcher["template"]["spec"]["restartPolicy"] == "Never"
    assert {"event": "PodFailed", "action": "RestartJob"} in launcher["policies"]
    assert job["spec"]["maxRetry"] == 1
    # The launcher's wait outlasts the workers' wait for their node's health checks (1800 s).
    wait = launcher["template"]["spec"]["initContainers"][0]["command"]
    assert "--timeout=2400s" in wait


def test_report_hint_names_the_launcher_pod_not_the_hostname(launcher):
    assert "$(hostname)" not in launcher
    assert "kubectl logs -n nccl-test nccl-allreduce-job1-mpimaster-0 > nccl.log" in launcher


def test_launcher_script_parses(launcher):
    if shutil.which("bash"):
        subprocess.run(["bash", "-n"], input=launcher, text=True, check=True)


# -- item 9: NFD labels only the InfiniBand VFs where the whitelist would label more ---------------------------

def _nfd_whitelist(artifacts: dict[str, str]) -> list[str]:
    values = _docs(artifacts["aks/nfd-values.yaml"])[0]
    return values["worker"]["config"]["sources"]["pci"]["deviceClassWhitelist"]


def test_amd_pool_labels_infiniband_vfs_by_device_id_not_by_class(shared_dir):
    artifacts = _artifacts(AMD)
    assert not {"02", "0200", "0207"} & set(_nfd_whitelist(artifacts))
    (rule,) = _docs(artifacts["aks/nfd-network-rule.yaml"])
    (match,) = rule["spec"]["rules"][0]["matchFeatures"]
    assert rule["spec"]["rules"][0]["labels"] == {"feature.node.kubernetes.io/pci-15b3.present": "true"}
    assert match["feature"] == "pci.device" and match["matchExpressions"]["device"]["value"] == ["101e"]  # ConnectX-7 VF
    # Only InfiniBand VFs (class 0207): 101e is also the id of ConnectX-6 Dx/7 Ethernet VFs (review C2).
    assert match["matchExpressions"]["class"] == {"op": "In", "value": ["0207"]}
    # Azure's reference rule (Azure/aks-rdma-infiniband @700dabb4) matches the same feature and ids.
    reference = YAML(typ="safe").load((shared_dir / "upstream" / "k8s" / "azure-aks-rdma-infiniband" /
                                       "nodefeaturerule-network.yaml").read_text(encoding="utf-8"))
    (ref_match,) = reference["spec"]["rules"][0]["matchFeatures"]
    assert ref_match["feature"] == "pci.device"
    assert set(ref_match["matchExpressions"]["device"]["value"]) == set(pci_ids.all_ib_vf_device_ids())
    provision = artifacts["aks/provision.sh"]
    assert provision.index('-f "$HERE/"nfd-values.yaml') < provision.index('kubectl apply -f "$HERE/"nfd-network-rule.yaml') \
        < provision.index("network-operator network-operator")


def test_amd_nfd_files_lint_clean_together(tmp_path):
    aks = _aks_files(tmp_path, _artifacts(AMD))
    findings = [f for f in lint_paths([str(aks)], LintContext()).findings if f.code in ("HELM003", "HELM007")]
    assert not findings, findings


def test_all_infiniband_nvidia_cluster_keeps_the_class_whitelist():
    artifacts = _artifacts(CURRENT)
    assert "02" in _nfd_whitelist(artifacts) and "aks/nfd-network-rule.yaml" not in artifacts


def test_nvidia_pool_without_infiniband_beside_one_with_it_gets_the_rule(tmp_path):
    text = CURRENT.read_text(encoding="utf-8").replace(
        "    count: 2\n", "    count: 2\n  - name: nc24\n    sku: Standard_NC24ads_A100_v4\n    count: 1\n", 1)
    spec = tmp_path / CURRENT.name
    spec.write_text(text, encoding="utf-8")
    artifacts = _artifacts(spec)
    assert "02" not in _nfd_whitelist(artifacts)
    (rule,) = _docs(artifacts["aks/nfd-network-rule.yaml"])
    assert rule["spec"]["rules"][0]["matchFeatures"][0]["matchExpressions"]["device"]["value"] == ["101c"]  # ConnectX-6 VF


# -- item 12 (AKS): MPI bootstraps on the pod network; the single-node pass runs as Azure's check does -----------

def _runs(script: str) -> dict[str, dict[str, str]]:
    """The exports of each mpirun in a launcher script, by the log it writes."""
    runs = {}
    for call in script.replace("\\\n", " ").splitlines():
        if call.startswith(("mpirun ", "timeout ")) and " mpirun " in f" {call}":
            words = call.split()
            log = re.findall(r'tee (?:-a )?"([^"]+)"', call)[-1]
            runs[log] = dict(words[i + 1].split("=", 1) for i, w in enumerate(words) if w == "-x")
    return runs


def _init_spec(tmp_path: Path, sku: str) -> Path:
    from hpcconf.catalog import Catalog
    from hpcconf.init_spec import init_context, render_init_spec

    context = init_context(Catalog.load().get(sku), 2, ["aks"], "field", None, None, "spec.yaml", "test")
    spec = tmp_path / "spec.yaml"
    spec.write_text(render_init_spec(context), encoding="utf-8")
    return spec


def test_mpi_bootstraps_over_the_pod_network_in_every_run(launcher):
    # Azure NHC's NCCL check: -x UCX_TLS=tcp -x UCX_NET_DEVICES=eth0 (customTests/azure_nccl_allreduce.nhc @0e0a1ac2).
    runs = _runs(launcher)
    assert len(runs) == 3  # the matrix loop, the ring pass, the single-node pass
    for env in runs.values():
        assert (env["UCX_TLS"], env["UCX_NET_DEVICES"], env["NCCL_SOCKET_IFNAME"]) == ("tcp", "eth0", "eth0")


@pytest.mark.parametrize("sku, single_node_topo", [("Standard_ND96isr_H200_v5", False), ("Standard_ND96isr_H100_v5", False),
                                                    ("Standard_ND96amsr_A100_v4", True)])
def test_single_node_pass_drops_the_topology_file_where_azures_check_does(tmp_path, sku, single_node_topo):
    # PR #143 (67ca7512): Azure's single-node check runs with NCCL_TOPO_FILE= on H100/H200 (spurious H200 failures
    # with it, issue #142); multi-node runs keep the file, as azhpc-images' ndv5 nccl.conf and Azure's AKS chart do.
    runs = _runs(_launcher_script(_artifacts(_init_spec(tmp_path, sku))))
    single = runs.pop("/tmp/single-node.all_reduce.log")
    assert ("NCCL_TOPO_FILE" in single) is single_node_topo
    assert runs and all("NCCL_TOPO_FILE" in env for env in runs.values())


# -- item 10 (AKS): floating tags -----------------------------------------------------------------------------

def test_generated_images_float_only_where_upstream_publishes_no_other_tag(tmp_path):
    from hpcconf.lint.rules.k8s import floating_tag

    artifacts = _artifacts(CURRENT)
    images = {c["image"] for path, text in artifacts.items() if path.endswith(".yaml") and path.startswith("aks/")
              for doc in _docs(text) for c in _containers(doc)}
    assert "hpcconfdemo.azurecr.io/nccl-tests:25.10" in images and "mcr.microsoft.com/oss/kubernetes/kubectl:v1.30.0" in images
    assert {i for i in images if floating_tag(i)} == {"mcr.microsoft.com/aznhc/aznhc-nv:latest"}
    assert "pin a digest with health_checks.image" in artifacts["aks/health-checks.yaml"]
    aks = _aks_files(tmp_path, artifacts)
    floating = [f for f in lint_paths([str(aks)], LintContext()).findings if f.code == "K8S008"]
    assert [f.severity.value for f in floating] == ["info"]


def _containers(doc: dict):
    from hpcconf.artifacts import Kind
    from hpcconf.parsers.k8s import pods

    class _Doc:
        kind = Kind.VOLCANO_JOB if doc.get("apiVersion", "").startswith("batch.volcano.sh/") else Kind.K8S_MANIFEST
        data = doc

    for pod in pods(_Doc()):
        for _, container in pod.containers(init=True):
            yield container


@needs_bash
def test_amd_launcher_judges_rccl_tests_against_the_mi300x_floor(tmp_path):
    # rccl-tests prints nccl-tests' table; MI300X's single-node floor: 314 GB/s at 16G (conf/nd96isr_mi300x_v5.conf).
    script = _launcher_script(_artifacts(AMD))
    healthy = _run_launcher(script, tmp_path / "healthy", STUB_BUSBW="350.00")
    assert healthy.returncode == 0, healthy.stdout + healthy.stderr
    assert "single-node.all_reduce: pass: busbw 350.00 GB/s >= 314 GB/s" in healthy.stdout
    slow = _run_launcher(script, tmp_path / "slow", STUB_BUSBW="300.00")
    assert slow.returncode == 1 and "floor 314 GB/s" in slow.stdout


def test_toolkit_off_leaves_the_default_runtime_unknown(tmp_path):
    artifacts = _artifacts(CURRENT)
    old = artifacts["aks/health-checks.yaml"].replace("      runtimeClassName: nvidia\n", "")
    aks = _aks_files(tmp_path, {**artifacts, "aks/health-checks.yaml": old})
    values = aks / "gpu-operator-values.yaml"
    values.write_text(values.read_text(encoding="utf-8").replace("toolkit:\n  enabled: true", "toolkit:\n  enabled: false"),
                      encoding="utf-8")
    findings = [f for f in lint_paths([str(aks)], LintContext()).findings if f.code == "K8S006"]
    assert [f.severity.value for f in findings] == ["info"]


def test_generated_job_has_no_vol010_and_its_2023_form_has_both(tmp_path):
    aks = _aks_files(tmp_path, _artifacts(CURRENT))
    assert not [f for f in lint_paths([str(aks)], LintContext()).findings if f.code == "VOL010"]
    # The launcher as it was: a failure recorded nowhere, restarted in place by the kubelet.
    job = (aks / "volcano-job.yaml").read_text(encoding="utf-8")
    old = (job.replace("set -eo pipefail", "set -o pipefail").replace("restartPolicy: Never", "restartPolicy: OnFailure"))
    old = "\n".join(line.split(" || failed ")[0] for line in old.splitlines()) + "\n"
    (aks / "volcano-job.yaml").write_text(old, encoding="utf-8")
    found = sorted(f.severity.value for f in lint_paths([str(aks / "volcano-job.yaml")], LintContext()).findings
                   if f.code == "VOL010")
    # The status lost: the container then exits with its last command's 0, so OnFailure never restarts it and
    # the endless in-place rerun (review D10) is no second finding (held-out review, issue 20: VOL010).
    assert found == ["warning"]
