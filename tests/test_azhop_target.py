"""The AzHOP target: seed 000's deployment rebuilt from examples/azhop-ncv4.yaml.

The generated config.yml must pass az-hop's own schema (upstream config.schema.json, draft-06) and
hpcconf's AzHOP lint with nothing above info; its cluster-init scripts must put the nccl target's
files exactly where the generated nccl.conf points NCCL.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
from pathlib import Path

import pytest

from hpcconf.diagnostics import Severity
from hpcconf.lint.context import LintContext
from hpcconf.lint.engine import lint_paths
from hpcconf.parsers.nccl_conf import parse_nccl_conf
from hpcconf.pipeline import compile_spec
from hpcconf.yamlpos import load_document

REPO = Path(__file__).resolve().parents[1]
EXAMPLE = REPO / "examples" / "azhop-ncv4.yaml"


@pytest.fixture(scope="module")
def build():
    return compile_spec(EXAMPLE)


def _artifact(build, path: str):
    return next(a for a in build.artifacts if a.path == path)


def _config(build) -> dict:
    return load_document(_artifact(build, "azhop/config.yml").content, "config.yml").data


def test_config_passes_az_hops_schema(build, shared_dir):
    jsonschema = pytest.importorskip("jsonschema")
    schema = json.loads((shared_dir / "upstream/azhop/az-hop/config.schema.json").read_text(encoding="utf-8"))
    errors = [f"{list(e.absolute_path)}: {e.message}" for e in jsonschema.Draft6Validator(schema).iter_errors(_config(build))]
    assert errors == []


def test_config_reproduces_seed_000_deployment(build):
    seed = load_document((REPO / "tests/fixtures/seeds/azhop-seed000-config.yml").read_text(), "seed").data
    config = _config(build)
    for key in ("project_name", "location", "resource_group", "admin_user", "queue_manager",
                "windows_base_image", "azurefiles", "users", "usergroups"):
        assert config[key] == seed[key], key
    # The seed's CentOS 7.9 and Ubuntu 20.04 images are past end of life (lint AZH100): their successors.
    assert config["linux_base_image"] == "almalinux:almalinux-x86_64:8_7-gen2:latest"
    assert config["network"]["vnet"]["address_space"] == seed["network"]["vnet"]["address_space"]
    prefixes = {role: s["address_prefixes"] for role, s in config["network"]["vnet"]["subnets"].items()}
    assert prefixes == {role: s["address_prefixes"] for role, s in seed["network"]["vnet"]["subnets"].items()}
    for role in ("deployer", "ad", "ondemand", "grafana", "scheduler", "cyclecloud"):
        assert config[role]["vm_size"] == seed[role]["vm_size"], role
    home = config["mounts"]["home"]
    assert (home["type"], home["mountpoint"], home["options"]) == ("azurefiles", "/anfhome", "vers=4,minorversion=1,sec=sys")
    # What the seed left implicit is written out: the placeholders its blog lost, both Slurm versions.
    assert (home["server"], home["export"]) == ("{{anf_home_ip}}", "{{anf_home_path}}")
    assert (config["slurm"]["slurm_version"], config["slurm"]["cyclecloud_slurm_version"]) == ("20.11.9", "2.7.2")
    # sinfo: ndv4 is the default partition (first queue), then the NC A100 v4 sizes and the CPU queue.
    queues = {q["name"]: q for q in config["queues"]}
    assert [q["name"] for q in config["queues"]] == ["ndv4", "nc48v4", "nc96v4", "execute"]
    assert queues["ndv4"]["vm_size"] == "Standard_ND96asr_v4" and queues["ndv4"]["ColocateNodes"] is True
    assert queues["nc48v4"]["vm_size"] == "Standard_NC48ads_A100_v4"
    assert queues["nc96v4"]["vm_size"] == "Standard_NC96ads_A100_v4"
    # Queue images pinned to a published version (AZH101: ':latest' mixes images within a queue).
    pinned = "microsoft-dsvm:ubuntu-hpc:2204:22.04.2024102301"
    assert {q["image"] for q in queues.values()} == {pinned}
    assert queues["execute"] == {**seed["queues"][0], "image": pinned,
                                 "EnableAcceleratedNetworking": False}


def test_lint_reports_nothing_above_info(build):
    result = lint_paths([str(EXAMPLE)], LintContext())
    above_info = [f"{f.file}:{f.line}: {f.code} {f.message}" for f in result.findings if f.severity != Severity.INFO]
    assert above_info == []
    assert any(f.code == "AZH011" for f in result.findings)  # the cyclecloud-slurm 2.7.2 note on A100 (#1919)


def test_comments_say_where_values_came_from(build):
    text = _artifact(build, "azhop/config.yml").content
    assert "# metadata.location" in text
    assert "slurm_version: \"20.11.9\"  # versions.slurm; cyclecloud-slurm 2.7.2 is the newest project supporting it" in text
    assert "compute:  # carved: upper half of 10.101.0.0/23, 251 node addresses" in text
    assert "first queue = Slurm default partition" in text


def _install(tmp_path: Path, build, queue: str) -> Path:
    """Lay the cluster-init files out as CycleCloud does and run the dispatcher as node `queue` would."""
    spec_dir = tmp_path / "spec"
    root = tmp_path / f"root-{queue}"
    for artifact in build.artifacts:
        if artifact.path.startswith("azhop/cluster-init/"):
            target = spec_dir / artifact.path.removeprefix("azhop/cluster-init/")
            target.parent.mkdir(parents=True, exist_ok=True)
            target.write_text(artifact.content, encoding="utf-8")
    env = {**os.environ, "HPCCONF_QUEUE": queue, "HPCCONF_ROOT": str(root), "CYCLECLOUD_SPEC_PATH": str(spec_dir)}
    run = subprocess.run(["bash", str(spec_dir / "scripts/zz-hpcconf-nccl.sh")], env=env, capture_output=True, text=True)
    assert run.returncode == 0, run.stderr
    return root


@pytest.mark.skipif(shutil.which("bash") is None, reason="needs bash to run the cluster-init scripts")
@pytest.mark.parametrize("queue", ["ndv4", "nc48v4", "nc96v4"])
def test_cluster_init_installs_what_nccl_conf_names(build, tmp_path, queue):
    root = _install(tmp_path, build, queue)
    installed = (root / "etc/nccl.conf").read_text(encoding="utf-8")
    assert installed == _artifact(build, f"nccl/{queue}/nccl.conf").content
    settings = dict((e.key, e.value) for e in parse_nccl_conf(installed).entries)
    for key in ("NCCL_TOPO_FILE", "NCCL_GRAPH_FILE"):
        if key in settings:
            path = settings[key]
            assert path.startswith("/opt/hpcconf/nccl/"), path
            file = root / path.lstrip("/")
            assert file.is_file(), f"{key}={path} not installed"
            assert file.read_text(encoding="utf-8") == _artifact(build, f"nccl/{Path(path).name}").content
    # No queue-wide graph: NC96's 4-GPU graph kills any job given fewer GPUs ("dev N not found").
    expected = {"ndv4": {"NCCL_TOPO_FILE"}, "nc48v4": set(), "nc96v4": {"NCCL_TOPO_FILE"}}[queue]
    assert expected == {k for k in ("NCCL_TOPO_FILE", "NCCL_GRAPH_FILE") if k in settings}
    if queue == "nc96v4":  # installed for a job that gets all 4 GPUs to opt in
        graph = root / "opt/hpcconf/nccl/nc96ads-a100-v4-graph.xml"
        assert graph.is_file() and f"NCCL_GRAPH_FILE={graph.relative_to(root).as_posix()}".replace("opt/", "/opt/", 1) in installed


@pytest.mark.skipif(shutil.which("bash") is None, reason="needs bash to run the cluster-init scripts")
def test_cluster_init_leaves_cpu_queues_alone(build, tmp_path):
    root = _install(tmp_path, build, "execute")
    assert not root.exists()


def test_every_gpu_queue_has_an_installer_and_the_dispatcher_knows_it(build):
    dispatcher = _artifact(build, "azhop/cluster-init/scripts/zz-hpcconf-nccl.sh").content
    assert "jetpack config cyclecloud.node.template" in dispatcher
    for queue in ("ndv4", "nc48v4", "nc96v4"):
        assert _artifact(build, f"azhop/cluster-init/files/hpcconf/{queue}/install-nccl-files.sh").kind == "shell-script"
        assert f"{queue}) exec bash" in dispatcher


def test_build_is_deterministic():
    first = {a.path: a.content for a in compile_spec(EXAMPLE).artifacts}
    second = {a.path: a.content for a in compile_spec(EXAMPLE).artifacts}
    assert first == second


HEAD = """apiVersion: hpcconf/v1
kind: Cluster
metadata: {name: variant, location: southcentralus}
platforms: [azhop]
"""
ND = "pools:\n  - {name: ndv5, sku: Standard_ND96isr_H100_v5, count: 8}\n"
NC = "pools:\n  - {name: nc96, sku: Standard_NC96ads_A100_v4, count: 4}\n"
VARIANTS = {
    "defaults": ND + "azhop: {}\n",
    "anf-home": ND + "azhop:\n  storage:\n    home: {type: anf, size_tib: 4, service_level: Premium}\n",
    "amlfs-64tib": ND + "azhop:\n  storage:\n    lustre: {sku: AMLFS-Durable-Premium-125, capacity_tib: 64}\n",
    "accounting-bastion-gateway": ND + "azhop:\n  slurm_accounting: true\n  slurm_cluster_name: gpu\n"
                                       "  network: {bastion: true, vpn_gateway: true, address_space: 10.8.0.0/22}\n",
    "existing-db": ND + "azhop:\n  slurm_accounting: true\n  database_fqdn: mysql.example.net\n",
    "local-auth-no-monitoring-jumpbox": ND + "azhop: {user_auth: local, monitoring: false, access: jumpbox}\n",
    "existing-home": ND + "azhop:\n  storage:\n    home: {type: existing, server: 10.2.0.4, export: /export/home, mountpoint: /home2}\n",
    "explicit-subnets": ND + "azhop:\n  network:\n    address_space: 10.50.0.0/22\n    subnets: {frontend: 10.50.0.0/29, ad: 10.50.0.8/29,"
                             " admin: 10.50.0.16/28, compute: 10.50.2.0/23}\n",
    "120-node-colocated-pool": "pools:\n  - {name: ndv5, sku: Standard_ND96isr_H100_v5, count: 120}\n"
                               "azhop:\n  network: {address_space: 10.9.0.0/22}\n",
    "openpbs-ethernet-gpus": NC + "azhop: {queue_manager: openpbs}\n",
    "pinned-cc-slurm": ND + "versions: {cyclecloud_slurm: 2.7.2}\nazhop:\n  extra_queues:\n"
                            "    - {name: login, type: login, vm_size: Standard_F4s_v2, max_count: 1, initial_count: 1}\n",
}


@pytest.mark.parametrize("name", sorted(VARIANTS))
def test_every_variant_passes_schema_and_lint(name, tmp_path, shared_dir):
    jsonschema = pytest.importorskip("jsonschema")
    spec = tmp_path / f"{name}.yaml"
    spec.write_text(HEAD + VARIANTS[name], encoding="utf-8")
    build = compile_spec(spec)
    config = _config(build)
    schema = json.loads((shared_dir / "upstream/azhop/az-hop/config.schema.json").read_text(encoding="utf-8"))
    assert [e.message for e in jsonschema.Draft6Validator(schema).iter_errors(config)] == []
    result = lint_paths([str(spec)], LintContext())
    # HPC206: ND H100 v5 with az-hop's cyclecloud-slurm (<= 3.0.4) is a documented risk, not a layout problem.
    assert [f"{f.line}: {f.code} {f.message}" for f in result.findings
            if f.severity != Severity.INFO and f.code != "HPC206"] == []


def test_variants_carry_what_they_ask_for(tmp_path):
    def config_of(name: str) -> dict:
        spec = tmp_path / f"{name}.yaml"
        spec.write_text(HEAD + VARIANTS[name], encoding="utf-8")
        return _config(compile_spec(spec))

    anf = config_of("anf-home")
    assert anf["anf"] == {"create": True, "homefs_size_tb": 4, "homefs_service_level": "Premium", "dual_protocol": False}
    assert "netapp" in anf["network"]["vnet"]["subnets"] and anf["mounts"]["home"]["type"] == "anf"
    amlfs = config_of("amlfs-64tib")
    assert amlfs["lustre"] == {"create": True, "sku": "AMLFS-Durable-Premium-125", "capacity": 64}
    assert amlfs["network"]["vnet"]["subnets"]["lustre"]["address_prefixes"].endswith("/25")  # 44-92 TiB: /25
    acct = config_of("accounting-bastion-gateway")
    subnets = acct["network"]["vnet"]["subnets"]
    assert subnets["bastion"]["name"] == "AzureBastionSubnet" and subnets["bastion"]["address_prefixes"].endswith("/26")
    assert subnets["gateway"]["name"] == "GatewaySubnet" and "database" in subnets
    assert acct["slurm"]["accounting_enabled"] is True and acct["slurm"]["cluster_name"] == "gpu"
    assert "database" not in config_of("existing-db")["network"]["vnet"]["subnets"]
    local = config_of("local-auth-no-monitoring-jumpbox")
    assert "ad" not in local and "ad" not in local["network"]["vnet"]["subnets"] and "grafana" not in local
    assert local["authentication"]["user_auth"] == "local" and local["jumpbox"] == {"vm_size": "Standard_B2ms"}
    pbs = config_of("openpbs-ethernet-gpus")
    assert pbs["queue_manager"] == "openpbs" and "ColocateNodes" not in pbs["queues"][0]
    pinned = config_of("pinned-cc-slurm")
    assert (pinned["slurm"]["slurm_version"], pinned["slurm"]["cyclecloud_slurm_version"]) == ("22.05.3", "2.7.2")
    assert pinned["queues"][1] == {"name": "login", "type": "login", "vm_size": "Standard_F4s_v2", "initial_count": 1,
                                   "max_count": 1, "image": "microsoft-dsvm:ubuntu-hpc:2204:22.04.2024102301",
                                   "EnableAcceleratedNetworking": False, "spot": False, "ColocateNodes": False}


@pytest.mark.skipif(shutil.which("bash") is None, reason="needs bash to run the cluster-init scripts")
def test_files_the_slurm_jobs_expect_are_installed_on_their_partition(build, tmp_path):
    import re

    jobs = [a for a in build.artifacts if a.kind == "sbatch-script"]
    if not jobs:
        pytest.skip("no sbatch target in this build")
    for job in jobs:
        partition = re.search(r"^#SBATCH\s+(?:-p|--partition)[ =](\S+)", job.content, re.M).group(1)
        root = _install(tmp_path / partition, build, partition)
        for path in set(re.findall(r"/opt/hpcconf/nccl/[\w.-]+", job.content)):
            assert (root / path.lstrip("/")).is_file(), f"{job.path} expects {path} on partition {partition}"


def test_config_creates_a_nat_gateway_for_outbound_access(build, tmp_path):
    # az-hop creates a NAT gateway only when config.yml says so (bicep/azhop.bicep defaults create to false),
    # and new Azure VNets no longer get default outbound access: the nodes could not reach package mirrors.
    assert _config(build)["nat_gateway"] == {"create": True}
    spec = tmp_path / "no-nat.yaml"
    spec.write_text(HEAD + ND + "azhop:\n  network: {nat_gateway: false}\n", encoding="utf-8")
    assert _config(compile_spec(spec))["nat_gateway"] == {"create": False}


def test_only_infiniband_queues_are_colocated_by_default(build, tmp_path):
    # A placement group matters for InfiniBand only; elsewhere it just caps the queue at one scale set.
    queues = {q["name"]: q for q in _config(build)["queues"]}
    assert queues["ndv4"]["ColocateNodes"] is True
    assert queues["nc48v4"]["ColocateNodes"] is False and queues["nc96v4"]["ColocateNodes"] is False
    spec = tmp_path / "explicit.yaml"
    spec.write_text(HEAD + "pools:\n  - {name: nc96, sku: Standard_NC96ads_A100_v4, count: 2, placement: {colocate: true}}\n"
                    "azhop: {}\n", encoding="utf-8")
    assert _config(compile_spec(spec))["queues"][0]["ColocateNodes"] is True


@pytest.mark.parametrize("sku", ["Standard_NC40ads_H100_v5", "Standard_NC80adis_H100_v5"])
def test_ncads_h100_v5_queues_use_accelerated_networking(sku, tmp_path):
    # ncadsh100v5-series.md (MicrosoftDocs/azure-compute-docs @05e75b14): "Accelerated Networking: Supported".
    spec = tmp_path / "nch100.yaml"
    spec.write_text(HEAD + f"pools:\n  - {{name: nch100, sku: {sku}, count: 2}}\nazhop: {{}}\n", encoding="utf-8")
    assert _config(compile_spec(spec))["queues"][0]["EnableAcceleratedNetworking"] is True
