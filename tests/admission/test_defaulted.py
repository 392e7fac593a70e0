"""`hpcconf lint --defaulted`: the object as the API server stores it (defaults, Volcano's mutation)."""

from __future__ import annotations

import importlib.util
import json
from pathlib import Path

import pytest
from ruamel.yaml import YAML
from typer.testing import CliRunner

from hpcconf.cli import app
from hpcconf.knowledge.k8s_defaults import crd_defaults, defaulted, image_pull_policy, knows

ROOT = Path(__file__).resolve().parents[2]


def _generator():
    spec = importlib.util.spec_from_file_location("gen_crd_defaults", ROOT / "tools" / "gen_crd_defaults.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)  # type: ignore[union-attr]
    return module


def test_the_crd_defaults_table_is_the_crds_own() -> None:
    tool = _generator()
    schemas = tool._schemas_tool()
    if not schemas.SHARED.is_dir():
        pytest.skip("the upstream CRDs (../shared/upstream/k8s) are absent")
    if all((schemas.MIRROR / repo / "repo").is_dir() for repo in schemas.MIRRORED):
        assert crd_defaults() == tool.table(), "hpcconf/data/crd_defaults.yaml was edited: run tools/gen_crd_defaults.py"
        return
    for kind, versions in tool.table(shared_only=True).items():  # without the mirrors (CI): what ../shared holds
        for api_version, sources in versions.items():
            for source, paths in sources.items():
                assert crd_defaults()[kind][api_version][source] == paths


def test_every_crd_held_is_in_the_defaults_table() -> None:
    from hpcconf.knowledge.crd_schemas import crd_schemas

    held = {(kind, api, " ".join(label.split()[:2])) for kind, versions in crd_schemas().items()
            for api, sources in versions.items() for label in sources}
    table = {(kind, api, source) for kind, versions in crd_defaults().items()
             for api, sources in versions.items() for source in sources}
    assert held == table


def _pod(name: str = "c") -> dict:
    return {"spec": {"containers": [{"name": name, "image": "i:1", "ports": [{"containerPort": 22}]}]}}


def test_an_mpijob_gets_mpi_operators_crd_defaults() -> None:
    job = {"apiVersion": "kubeflow.org/v2beta1", "kind": "MPIJob", "metadata": {"name": "pi"},
           "spec": {"mpiReplicaSpecs": {"Launcher": {"replicas": 1, "template": _pod()},
                                        "Worker": {"replicas": 2, "template": _pod()}}}}
    spec = defaulted(job)["spec"]  # the newest CRD held: mpi-operator v0.8.0
    assert spec["launcherCreationPolicy"] == "AtStartup" and spec["mpiImplementation"] == "OpenMPI"
    assert spec["slotsPerWorker"] == 1 and spec["runLauncherAsWorker"] is False
    for replica in ("Launcher", "Worker"):  # every value of the map (additionalProperties) is defaulted
        assert spec["mpiReplicaSpecs"][replica]["template"]["spec"]["containers"][0]["ports"][0]["protocol"] == "TCP"
    old = defaulted(job, installed={"mpi-operator": "0.4.0"})["spec"]
    assert "launcherCreationPolicy" not in old and old["mpiImplementation"] == "OpenMPI"  # v0.4.0 has no such field


def test_a_jobset_gets_the_jobset_crd_defaults() -> None:
    jobset = {"apiVersion": "jobset.x-k8s.io/v1alpha2", "kind": "JobSet", "metadata": {"name": "js"},
              "spec": {"failurePolicy": {"maxRestarts": 2},
                       "replicatedJobs": [{"name": "w", "template": {"spec": {"template": _pod()}}}]}}
    spec = defaulted(jobset)["spec"]  # kubernetes-sigs/jobset v0.12.0
    assert spec["replicatedJobs"][0]["replicas"] == 1 and spec["replicatedJobs"][0]["groupName"] == "default"
    assert spec["failurePolicy"]["restartStrategy"] == "Recreate"


def test_a_nicclusterpolicy_gets_the_network_operator_crd_defaults() -> None:
    policy = {"apiVersion": "mellanox.com/v1alpha1", "kind": "NicClusterPolicy", "metadata": {"name": "p"},
              "spec": {"ofedDriver": {"image": "doca-driver", "repository": "nvcr.io/nvidia/mellanox",
                                      "version": "25.04", "upgradePolicy": {"drain": {}}}}}
    driver = defaulted(policy, installed={"network-operator": "23.4.0"})["spec"]["ofedDriver"]
    assert driver["terminationGracePeriodSeconds"] == 300 and driver["upgradePolicy"]["autoUpgrade"] is False
    assert driver["upgradePolicy"]["drain"]["enable"] is True


def test_the_volcano_scheduling_kinds_get_crd_defaults_and_the_queue_webhooks_patch() -> None:
    queue = {"apiVersion": "scheduling.volcano.sh/v1beta1", "kind": "Queue", "metadata": {"name": "q"}, "spec": {}}
    spec = defaulted(queue)["spec"]
    assert spec["weight"] == 1 and spec["reclaimable"] is True  # the CRD's default; createQueuePatch's
    podgroup = {"apiVersion": "scheduling.volcano.sh/v1beta1", "kind": "PodGroup", "metadata": {"name": "pg"},
                "spec": {"minMember": 2}}
    assert defaulted(podgroup)["spec"]["queue"] == "default"


@pytest.mark.parametrize(("api_version", "kind"), [("nv-ipam.nvidia.com/v1alpha1", "IPPool"),
                                                    ("nv-ipam.nvidia.com/v1alpha1", "CIDRPool"),
                                                    ("topology.volcano.sh/v1alpha1", "HyperNode"),
                                                    ("mellanox.com/v1alpha1", "HostDeviceNetwork")])
def test_a_crd_held_without_defaults_is_printed_as_written_without_a_note(api_version: str, kind: str,
                                                                           tmp_path: Path) -> None:
    obj = {"apiVersion": api_version, "kind": kind, "metadata": {"name": "x"}, "spec": {"a": 1}}
    assert knows(obj) and defaulted(obj) == obj


@pytest.mark.parametrize(("image", "policy"), [("busybox", "Always"), ("busybox:latest", "Always"),
                                                ("busybox:1.36", "IfNotPresent"), ("host:5000/img", "Always"),
                                                ("host:5000/img:2", "IfNotPresent"), ("img@sha256:ab", "IfNotPresent")])
def test_image_pull_policy_follows_the_tag(image: str, policy: str) -> None:
    assert image_pull_policy(image) == policy


def test_a_volcano_job_gets_the_crd_defaults_and_the_webhook_patch() -> None:
    job = {"apiVersion": "batch.volcano.sh/v1alpha1", "kind": "Job", "metadata": {"name": "j"},
           "spec": {"plugins": {"pytorch": []}, "tasks": [
               {"replicas": 2, "template": {"spec": {"containers": [{"name": "c", "image": "i:1",
                                                                     "ports": [{"containerPort": 22}]}]}}}]}}
    out = defaulted(job, volcano_version="1.15.1")
    spec = out["spec"]
    assert spec["queue"] == "default" and spec["maxRetry"] == 3 and spec["minAvailable"] == 2
    assert spec["tasks"][0]["name"] == "default0" and spec["tasks"][0]["minAvailable"] == 2
    assert spec["plugins"] == {"pytorch": [], "svc": []}
    container = spec["tasks"][0]["template"]["spec"]["containers"][0]
    assert container["ports"][0]["protocol"] == "TCP"  # the CRD's default
    assert "imagePullPolicy" not in container  # a CR's pod template is not defaulted by the API server
    assert job["spec"]["tasks"][0].get("name") is None


def test_a_daemonset_gets_pod_and_rollout_defaults() -> None:
    ds = {"apiVersion": "apps/v1", "kind": "DaemonSet", "metadata": {"name": "d"}, "spec": {"template": {"spec": {
        "hostNetwork": True, "containers": [{"name": "c", "image": "img", "ports": [{"containerPort": 9}],
                                             "resources": {"limits": {"nvidia.com/gpu": 8}}}]}}}}
    out = defaulted(ds)
    pod = out["spec"]["template"]["spec"]
    container = pod["containers"][0]
    assert container["imagePullPolicy"] == "Always"
    # SetDefaults_Pod's extras are for Pods: a template keeps limits only and gets no hostPort
    assert "requests" not in container["resources"]
    assert container["ports"][0] == {"containerPort": 9, "protocol": "TCP"}
    bare = defaulted({"apiVersion": "v1", "kind": "Pod", "spec": {"hostNetwork": True, "containers": [
        {"name": "c", "image": "img:1", "ports": [{"containerPort": 9}], "resources": {"limits": {"cpu": "1"}}}]}})
    assert bare["spec"]["containers"][0]["resources"]["requests"] == {"cpu": "1"}
    assert bare["spec"]["containers"][0]["ports"][0]["hostPort"] == 9
    assert pod["restartPolicy"] == "Always" and pod["dnsPolicy"] == "ClusterFirst"
    assert out["spec"]["updateStrategy"] == {"type": "RollingUpdate", "rollingUpdate": {"maxUnavailable": 1,
                                                                                        "maxSurge": 0}}


def test_a_service_and_a_job() -> None:
    svc = defaulted({"apiVersion": "v1", "kind": "Service", "spec": {"ports": [{"port": 80}]}})
    assert svc["spec"]["ports"][0] == {"port": 80, "protocol": "TCP", "targetPort": 80}
    assert svc["spec"]["type"] == "ClusterIP"
    job = defaulted({"apiVersion": "batch/v1", "kind": "Job", "spec": {"template": {"spec": {
        "restartPolicy": "Never", "containers": [{"name": "c", "image": "i:1"}]}}}})
    assert (job["spec"]["completions"], job["spec"]["parallelism"], job["spec"]["backoffLimit"]) == (1, 1, 6)
    assert job["spec"]["template"]["spec"]["restartPolicy"] == "Never"
    assert job["spec"]["podReplacementPolicy"] == "TerminatingOrFailed"
    failing = defaulted({"apiVersion": "batch/v1", "kind": "Job", "spec": {"podFailurePolicy": {"rules": []},
                                                                         "template": {"spec": {}}}})
    assert failing["spec"]["podReplacementPolicy"] == "Failed"


def test_the_command_prints_defaulted_objects(tmp_path: Path) -> None:
    manifest = tmp_path / "svc.yaml"
    manifest.write_text(json.dumps({"apiVersion": "v1", "kind": "Service", "metadata": {"name": "s"},
                                    "spec": {"ports": [{"port": 80}]}}))
    result = CliRunner().invoke(app, ["lint", "--defaulted", str(manifest)])
    assert result.exit_code == 0, result.output
    assert YAML(typ="safe").load(result.stdout)["spec"]["ports"][0]["targetPort"] == 80


def test_a_refused_file_prints_its_errors_and_no_object(tmp_path: Path) -> None:
    manifest = tmp_path / "pod.yaml"
    manifest.write_text("apiVersion: v1\nkind: Pod\nmetadata: {name: p}\nspec:\n  containers:\n"
                        "    - name: c\n      image: i:1\n      resourcse: {}\n")
    result = CliRunner().invoke(app, ["lint", "--defaulted", str(manifest)])
    assert result.exit_code == 1
    assert "K8S030" in result.output and "apiVersion" not in result.stdout


def test_defaulted_takes_one_file(tmp_path: Path) -> None:
    result = CliRunner().invoke(app, ["lint", "--defaulted", str(tmp_path)])
    assert result.exit_code == 2 and "--defaulted takes one manifest file" in result.output


def test_a_file_that_is_not_yaml_prints_its_located_error_and_no_object(tmp_path: Path) -> None:
    manifest = tmp_path / "broken.yaml"
    manifest.write_text("apiVersion: v1\nkind: Pod\nmetadata: {name: p\n")
    result = CliRunner().invoke(app, ["lint", "--defaulted", str(manifest)])
    assert result.exit_code == 1 and "HPC001" in result.output and "Traceback" not in result.output
    assert "apiVersion" not in result.stdout


def _admission_rules() -> list[str]:
    from hpcconf.lint.rule_loading import load_rules

    return [code for code, r in load_rules().items() if r.admission]


def test_every_rule_of_the_admission_modules_is_marked_as_refused_at_admission() -> None:
    """A new rule in a module of admission checks cannot be left out of what stops ``--defaulted``."""
    from hpcconf.lint.rule_loading import load_rules

    for code, r in load_rules().items():
        module = r.check.__module__ if r.check else ""
        if module.rsplit(".", 1)[-1] in ("k8s_admission", "volcano_admission") and r.severity.value == "error":
            assert r.admission, f"{code} judges admission but is not marked admission=True"


@pytest.mark.parametrize("code", _admission_rules())
def test_each_admission_rules_bad_fixture_prints_errors_and_no_object(code: str) -> None:
    fixtures = sorted((ROOT / "tests" / "rules" / code).glob("bad*.yaml"))
    if not fixtures:
        pytest.skip(f"{code} has no YAML bad fixture")
    for fixture in fixtures:
        result = CliRunner().invoke(app, ["lint", "--defaulted", str(fixture)])
        if f"error[{code}]" not in result.output:
            continue  # the fixture needs context it does not carry alone (another file of its set)
        assert result.exit_code == 1, (fixture.name, result.output)
        assert "nothing to default" in result.output and "apiVersion" not in result.stdout, fixture.name
