"""Platform ccws: the parameters file validates against the pinned release's schema for every catalog SKU CCWS can
run, the build refuses at the spec's line what the release would refuse, and mutated parameters files are refused
at their line by the CCWS lint rules."""

from __future__ import annotations

import json
import shutil
import subprocess
from pathlib import Path

import jsonschema
import pytest

from hpcconf.catalog import Catalog
from hpcconf.diagnostics import HpcconfError
from hpcconf.init_spec import _refusal, init_context, render_init_spec
from hpcconf.knowledge import ccws as kb_ccws
from hpcconf.lint.context import LintContext
from hpcconf.lint.engine import lint_paths
from hpcconf.pipeline import compile_spec

REPO = Path(__file__).resolve().parents[1]
SCHEMAS = REPO / "hpcconf" / "data" / "ccws"
CATALOG = Catalog.load()
SUPPORTED = [name for name in CATALOG.names() if _refusal(CATALOG.get(name), ["ccws"]) is None]
KEY = "ssh-ed25519 AAAAC3NzaC1lZDI1NTE5AAAAIExampleKeyOnly0000000000000000000000000000 admin@example"


def _spec(ccws_block: str, pools: str = "  - {name: gpu, sku: Standard_ND96isr_H100_v5, count: 4}\n", extra: str = "") -> str:
    return ("apiVersion: hpcconf/v1\nkind: Cluster\nmetadata: {name: demo, location: eastus}\nplatforms: [ccws]\n"
            f"pools:\n{pools}{extra}ccws:\n  ssh_public_key: {KEY}\n{ccws_block}")


def _build(text: str):
    return compile_spec("spec.yaml", text=text, display_name="spec.yaml")


def _artifact(build, path: str) -> str:
    return next(a.content for a in build.artifacts if a.path == path)


def _validate(parameters_text: str, tag: str) -> list[str]:
    """Errors of the file's values against hpcconf/data/ccws/mainTemplate-<tag>.json (secure parameters aside)."""
    schema = json.loads((SCHEMAS / f"mainTemplate-{tag}.json").read_text(encoding="utf-8"))
    schema["required"] = [n for n in schema["required"] if not schema["properties"][n].get("x-secure")]
    values = {name: entry["value"] for name, entry in json.loads(parameters_text)["parameters"].items()}
    return [e.message for e in jsonschema.Draft202012Validator(schema).iter_errors(values)]


def test_ccws_supports_the_x86_azure_nvidia_sizes():
    assert "Standard_ND96isr_H100_v5" in SUPPORTED and "Standard_ND96asr_v4" in SUPPORTED
    refused = {name: _refusal(CATALOG.get(name), ["ccws"]) for name in CATALOG.names() if name not in SUPPORTED}
    for name, reason in refused.items():
        sku = CATALOG.get(name)
        retired = sku.lifecycle_status() == "retired"
        assert retired or sku.provider != "azure" or sku.cpu.arch != "x86_64" or sku.gpu.vendor != "nvidia", (name, reason)


@pytest.mark.parametrize("sku_name", SUPPORTED)
def test_init_spec_builds_a_parameters_file_the_pinned_schema_accepts(sku_name):
    context = init_context(CATALOG.get(sku_name), 2, ["ccws"], "ccws-test", None, None, "spec.yaml", "test")
    build = _build(render_init_spec(context))
    assert build.cluster.ccws is not None
    tag = build.cluster.ccws.release
    text = _artifact(build, "ccws/parameters.json")
    assert _validate(text, tag) == []
    parameters = json.loads(text)["parameters"]
    assert parameters["gpu"]["value"]["sku"] == sku_name
    assert parameters["slurmSettings"]["value"]["version"] in build.cluster.ccws.slurm_version
    assert "adminPassword" not in parameters  # a secret: deploy.sh passes it from the environment


def test_slurm_version_is_what_the_release_ships_not_the_bicep_default():
    build = _build(_spec(""))
    version = json.loads(_artifact(build, "ccws/parameters.json"))["parameters"]["slurmSettings"]["value"]["version"]
    assert version == "25.11.5"  # createUiDefinition.json slurmVersion at 2026.07.02; mainTemplate says 23.11.7-1


def test_tags_are_keyed_by_resource_type_as_mainTemplate_reads_them():
    build = _build(_spec("  tags: {team: hpc}\n"))
    tags = json.loads(_artifact(build, "ccws/parameters.json"))["parameters"]["tags"]["value"]
    assert tags["Microsoft.Compute/virtualMachines"] == {"team": "hpc"} and tags["Node Array"] == {"team": "hpc"}


def _refused(text: str) -> list[tuple[str, int]]:
    with pytest.raises(HpcconfError) as caught:
        _build(text)
    return [(d.code, d.line) for d in caught.value.diagnostics]


def test_a_setting_the_release_does_not_take_is_refused_at_its_spec_line():
    # CCWS 2025.02.06 has no `ood` parameter (it came in 2025.03.12) nor the `key` type (2026.07.02).
    text = _spec('  release: "2025.02.06"\n  ood: {enabled: true, register_entra_app: true}\n')
    found = _refused(text)
    assert ("CCWS001", 8) in found  # ssh_public_key writes `key`
    assert ("CCWS001", 10) in found  # ood


def test_a_subnet_plan_that_does_not_fit_is_refused_at_the_address_space():
    found = _refused(_spec("  network: {address_space: 10.0.0.0/25}\n"))
    assert found == [("CCWS005", 9)]


def test_a_new_lustre_too_large_for_the_vnet_is_refused_at_the_address_space():
    storage = "  storage:\n    additional: {type: aml-new, capacity_tib: 300}\n"
    found = _refused(_spec("  network: {address_space: 10.0.0.0/23}\n" + storage))
    assert found == [("CCWS005", 9)]
    _build(_spec("  network: {address_space: 10.0.0.0/22}\n" + storage))  # /22 holds up to 512 TiB


def test_a_second_pool_and_a_stale_slurm_are_refused():
    pools = ("  - {name: gpu, sku: Standard_ND96isr_H100_v5, count: 4}\n"
             "  - {name: b, sku: Standard_ND96asr_v4, count: 2}\n")
    found = _refused(_spec("", pools=pools, extra="versions: {slurm: 23.11.7-1}\n"))
    assert ("SPEC090", 7) in found and ("SPEC090", 8) in found


def test_an_existing_vnet_and_existing_filers_validate():
    vnet_id = "/subscriptions/0000/resourceGroups/net/providers/Microsoft.Network/virtualNetworks/hub"
    block = (f"  network: {{type: existing, id: {vnet_id}, cyclecloud_subnet: cc, compute_subnet: compute}}\n"
             "  storage:\n    shared: {type: nfs-existing, ip_address: 10.1.0.4, export_path: /shared}\n"
             "    additional: {type: aml-existing, ip_address: 10.1.0.8, mount_path: /lustre}\n")
    build = _build(_spec(block))
    text = _artifact(build, "ccws/parameters.json")
    assert _validate(text, build.cluster.ccws.release) == []
    network = json.loads(text)["parameters"]["network"]["value"]
    assert network == {"type": "existing", "name": "hub", "id": vnet_id, "cyclecloudSubnet": "cc", "computeSubnet": "compute"}
    assert build.cluster.ccws.subnets == ()


def test_gres_conf_has_a_line_per_placement_group():
    build = _build(_spec("", pools="  - {name: gpu, sku: Standard_ND96isr_H100_v5, count: 150}\n"))
    gres = [line for line in _artifact(build, "ccws/slurm/gres.conf").splitlines() if not line.startswith("#")]
    assert gres == ["Nodename=demo-gpu-[1-100] Name=gpu Count=8 File=/dev/nvidia[0-7]",
                    "Nodename=demo-gpu-[101-150] Name=gpu Count=8 File=/dev/nvidia[0-7]"]


# -- mutated parameters files: the CCWS lint rules refuse them at their line ----------------------------------

@pytest.fixture(scope="module")
def generated() -> str:
    spec = _spec("  storage:\n    shared: {type: anf-new, capacity_tib: 4}\n")
    return _artifact(_build(spec), "ccws/parameters.json")


def _line_of(text: str, needle: str) -> int:
    return next(i for i, line in enumerate(text.splitlines(), 1) if needle in line)


def _findings(tmp_path: Path, text: str) -> list[tuple[str, int, str]]:
    path = tmp_path / "parameters.json"
    path.write_text(text, encoding="utf-8")
    return [(f.code, f.line, f.severity.value) for f in lint_paths([str(path)], LintContext()).findings]


def test_the_generated_file_lints_with_nothing_above_info(generated, tmp_path):
    assert [f for f in _findings(tmp_path, generated) if f[2] != "info"] == []


def test_a_missing_required_storage_field_is_refused_at_its_line(generated, tmp_path):
    data = json.loads(generated)
    del data["parameters"]["sharedFilesystem"]["value"]["anfCapacityInTiB"]
    text = json.dumps(data, indent=2) + "\n"
    assert ("CCWS003", _line_of(text, '"sharedFilesystem"') + 1, "error") in _findings(tmp_path, text)


def test_a_slurm_version_the_tag_does_not_ship_is_refused_at_its_line(generated, tmp_path):
    text = generated.replace('"version": "25.11.5"', '"version": "23.11.7-1"')
    assert ("CCWS004", _line_of(text, '"version": "23.11.7-1"'), "error") in _findings(tmp_path, text)


def test_a_subnet_that_does_not_fit_is_refused_at_its_line(generated, tmp_path):
    text = generated.replace('"addressSpace": "10.0.0.0/22"', '"addressSpace": "10.0.1.0/23"')
    assert ("CCWS005", _line_of(text, '"addressSpace"'), "error") in _findings(tmp_path, text)


@pytest.mark.skipif(shutil.which("shellcheck") is None, reason="shellcheck not installed")
def test_deploy_script_and_cluster_init_are_shellcheck_clean(tmp_path):
    build = _build(_spec("  cluster_init_url: https://github.com/example/ccws-init/releases/tag/v1\n"))
    scripts = [a for a in build.artifacts if a.path.startswith("ccws/") and a.path.endswith(".sh")]
    assert {a.path.rsplit("/", 1)[1] for a in scripts} >= {"deploy.sh", "10-hpcconf-nccl.sh", "20-hpcconf-health-checks.sh"}
    for artifact in scripts:
        path = tmp_path / artifact.path.replace("/", "_")
        path.write_text(artifact.content, encoding="utf-8")
        result = subprocess.run(["shellcheck", str(path)], capture_output=True, text=True, check=False)
        assert result.returncode == 0, artifact.path + "\n" + result.stdout


def test_deploy_script_pins_the_release_commit_and_the_az_cli():
    build = _build(_spec(""))
    text = _artifact(build, "ccws/deploy.sh")
    assert "set -euo pipefail" in text and "RELEASE=2026.07.02" in text
    assert f"RELEASE_COMMIT={build.cluster.ccws.commit}" in text and "AZ_CLI_VERSION=2.75.0" in text
    assert 'az deployment sub create --name "$DEPLOYMENT_NAME"' in text and '"@$HERE/parameters.json"' in text
    assert '"adminPassword": {"value": %s}' in text and '"$CCWS_ADMIN_PASSWORD"' in text


def test_open_ondemand_needs_an_existing_entra_app_where_the_release_registers_none():
    """From 2025.12.01 ccw.bicep sets registerOODApp = false: asking CCWS to register the app would deploy a portal
    with an empty client id (review26 B2). Refused at the ood line; an existing app builds."""
    found = _refused(_spec("  ood: {enabled: true, register_entra_app: true}\n"))
    assert [code for code, _ in found] == ["HPC005"] and found[0][1] == 8, found
    ids = "app_id: 00000000-0000-0000-0000-000000000001, app_tenant_id: 00000000-0000-0000-0000-000000000002"
    build = _build(_spec("  ood: {enabled: true, " + ids + "}\n"))
    assert '"registerEntraIDApp": false' in _artifact(build, "ccws/parameters.json")
    # an older release still registers it: not refused by this check (CCWS001 refuses ood there for other reasons)
    assert kb_ccws.registers_ood_app("2025.09.15") and not kb_ccws.registers_ood_app("2026.07.02")


# -- GB200/GB300 (arm64, NVL72) on CCWS: built with a custom image, refused with the portal's -----------------------

GB200_POOL = "  - {name: gpu, sku: Standard_ND128isr_NDR_GB200_v6, count: 36%s}\n"
GB200_IMAGE = ", image: 'microsoft-dsvm:ubuntu-hpc:2404-gb200:latest'"


def test_a_grace_size_with_a_portal_image_is_refused_at_its_sku_with_the_upstream_reason():
    text = _spec("", pools=GB200_POOL % "")
    with pytest.raises(HpcconfError) as caught:
        _build(text)
    found = [d for d in caught.value.diagnostics if d.code == "SPEC031"]
    assert found and found[0].line == text.splitlines().index(GB200_POOL.rstrip("\n") % "") + 1
    assert "arm64 Slurm packages for Ubuntu 24.04 only" in found[0].message
    assert "pool's image" in (found[0].hint or "")


def test_a_grace_size_gets_no_boot_health_check_that_would_fail_cluster_init():
    """review26b N1: the pinned azurehpc-health-checks builds its image for x86_64 only; its boot check under set -e
    would stop an arm64 node before slurmd, so a Grace pool gets no health-check files (NHC006 says so)."""
    build = _build(_spec("", pools=GB200_POOL % GB200_IMAGE))
    paths = [a.path for a in build.artifacts]
    assert not [p for p in paths if "health" in p], paths
    assert not any("aznhc" in a.content for a in build.artifacts)
    assert "health-check.conf" not in _artifact(build, "ccws/deploy.sh")


def test_a_grace_size_with_a_custom_image_builds_the_after_scaling_block_topology():
    build = _build(_spec("", pools=GB200_POOL % GB200_IMAGE))
    parameters = json.loads(_artifact(build, "ccws/parameters.json"))["parameters"]
    assert parameters["gpu"]["value"]["osImage"] == "microsoft-dsvm:ubuntu-hpc:2404-gb200:latest"
    assert _validate(_artifact(build, "ccws/parameters.json"), build.cluster.ccws.release) == []
    partition = _artifact(build, "ccws/slurm/gpu-partition.conf")
    # cyclecloud-slurm keeps SwitchType=switch/none and starts IMEX from its prolog; the block topology comes later
    assert "SwitchType" not in partition and "TopologyPlugin" not in partition
    site = [ln for ln in _artifact(build, "ccws/slurm/site_specific.conf").splitlines() if not ln.startswith("#")]
    # r26b N3: copied into place before scaling, a live TopologyPlugin line stops slurmctld: only the script adds it
    assert site == ["SuspendExcParts=gpu"]
    text = _artifact(build, "ccws/slurm/site_specific.conf")
    assert "# TopologyParam=BlockAsNodeRank\n" in text and "# TopologyPlugin=topology/block\n" in text
    script = _artifact(build, "ccws/slurm/nvl72-topology.sh")
    assert "azslurm topology -n --block --block_size \"$RACK_NODES\" -p \"$PARTITION\"" in script
    assert "RACKS=${RACKS:-2}" in script and "RACK_NODES=18" in script and "TOPOLOGY=/sched/$CLUSTER/topology.conf" in script
    assert script.index("add_line SuspendExcParts=gpu") < script.index("scale_m1 power_up --racks")
    assert script.index("grep -q '^BlockName='") < script.index("add_line TopologyPlugin=topology/block")


def test_an_x86_size_gets_no_after_scaling_files():
    paths = {a.path for a in _build(_spec("")).artifacts}
    assert "ccws/slurm/site_specific.conf" not in paths and "ccws/slurm/nvl72-topology.sh" not in paths


MI300X_POOL = "  - {name: gpu, sku: Standard_ND96isr_MI300X_v5, count: 4%s}\n"


def test_an_amd_size_with_a_portal_image_is_refused_at_its_sku_with_the_upstream_reason():
    text = _spec("", pools=MI300X_POOL % "")
    with pytest.raises(HpcconfError) as caught:
        _build(text)
    found = [d for d in caught.value.diagnostics if d.code == "SPEC030"]
    assert found and found[0].line == text.splitlines().index(MI300X_POOL.rstrip("\n") % "") + 1
    assert "ubuntu-hpc-mi300x-2404" in found[0].message and "pool's image" in (found[0].hint or "")


def test_an_amd_size_with_a_custom_rocm_image_builds_azslurms_amd_gres_and_no_nccl_conf():
    build = _build(_spec("", pools=MI300X_POOL % ", image: 'microsoft-dsvm:ubuntu-hpc:2404-rocm:latest'"))
    assert _validate(_artifact(build, "ccws/parameters.json"), build.cluster.ccws.release) == []
    gres = [ln for ln in _artifact(build, "ccws/slurm/gres.conf").splitlines() if not ln.startswith("#")]
    assert gres == ["Nodename=demo-gpu-[1-4] Name=gpu Count=8 File=/dev/dri/renderD[128,136,144,152,160,168,176,184]"]
    paths = {a.path for a in build.artifacts}
    assert not any(p.endswith("10-hpcconf-nccl.sh") for p in paths)  # RCCL reads /etc/rccl.conf, not nccl.conf
    assert "check_gpu_count 8 rocm" in _artifact(build, "health/gpu/nhc.conf")


def test_an_infiniband_partition_says_why_it_has_no_topology_plugin_or_which_to_add():
    one = _artifact(_build(_spec("")), "ccws/slurm/gpu-partition.conf")
    assert "# No TopologyPlugin: the partition is one placement group" in one
    pools = "  - {name: gpu, sku: Standard_ND96isr_H100_v5, count: 300}\n"
    three = _artifact(_build(_spec("", pools=pools)), "ccws/slurm/gpu-partition.conf")
    assert "spans 3 placement groups" in three and "azslurm topology -v -t -o /etc/slurm/topology.conf" in three
    gb200 = _artifact(_build(_spec("", pools=GB200_POOL % GB200_IMAGE)), "ccws/slurm/gpu-partition.conf")
    assert "placement group" not in gb200  # NVL72: block topology after scaling instead (site_specific.conf)
    nc = _artifact(_build(_spec("", pools="  - {name: gpu, sku: Standard_NC24ads_A100_v4, count: 2}\n")),
                   "ccws/slurm/gpu-partition.conf")
    assert "TopologyPlugin" not in nc  # no InfiniBand: nothing to choose


def test_a_lustre_capacity_off_its_tiers_step_is_refused_at_the_spec_line():
    """amlfs.bicep's capacity steps (48 TiB for AMLFS-Durable-Premium-40) are in the derived schema (review26 B3)."""
    storage = "  storage:\n    additional: {type: aml-new, tier: AMLFS-Durable-Premium-40, capacity_tib: 16}\n"
    found = _refused(_spec("  network: {address_space: 10.0.0.0/20}\n" + storage))
    assert found == [("CCWS003", 11)], found
    _build(_spec("  network: {address_space: 10.0.0.0/20}\n" + storage.replace("capacity_tib: 16", "capacity_tib: 48")))


def _aml_zone(location: str, zone: str = "") -> object:
    storage = "  storage:\n    additional: {type: aml-new, capacity_tib: 16" + (f", availability_zone: '{zone}'" if zone else "") + "}\n"
    text = _spec("  network: {address_space: 10.0.0.0/22}\n" + storage).replace("location: eastus", f"location: {location}")
    build = _build(text)
    return json.loads(_artifact(build, "ccws/parameters.json"))["parameters"]["additionalFilesystem"]["value"].get(
        "availabilityZone")


def test_a_new_lustre_gets_the_portals_zone_where_the_region_has_zones():
    """review26 B1: the portal passes ["1"] for aml-new where the region has availabilityZoneMappings (PR #288)."""
    assert _aml_zone("eastus") == ["1"]
    assert _aml_zone("westus") is None  # no availability zones there
    assert _aml_zone("eastus", "2") == ["2"] and _aml_zone("eastus", "none") is None
    assert _aml_zone("indonesiacentral", "1") == ["1"]  # a region hpcconf does not know: the spec's zone
    # A region hpcconf does not know the zones of is context, not a refusal: the build writes no zone and the
    # spec's lint says so as information (CCWS008's page: warning only where the region is known to have zones).
    assert _aml_zone("indonesiacentral") is None


def test_an_unknown_regions_lustre_zone_is_information_in_the_specs_lint(tmp_path):
    from hpcconf.lint.context import LintContext
    from hpcconf.lint.engine import lint_paths

    storage = "  storage:\n    additional: {type: aml-new, capacity_tib: 16}\n"
    text = _spec("  network: {address_space: 10.0.0.0/22}\n" + storage).replace("location: eastus",
                                                                               "location: indonesiacentral")
    spec = tmp_path / "ccws.yaml"
    spec.write_text(text, encoding="utf-8")
    found = [(Path(d.file).name, d.severity.value, d.line) for d in lint_paths([str(spec)], LintContext()).findings
             if d.code == "CCWS008"]
    assert ("ccws.yaml", "info", 11) in found and {severity for _, severity, _ in found} == {"info"}


def test_the_builds_ccws_refusals_are_registered_rules_of_their_codes_severity():
    """The codes resolve refuses after resolving are REFUSE_RESOLVED spec sides of their file rules (one page, one
    severity); the pipeline runs those, not a platform's problem list."""
    from hpcconf import pipeline
    from hpcconf.lint.rule_loading import load_rules
    from hpcconf.rules_registry import Moment, spec_checks

    rules = load_rules()
    refusing = {code for code, *_ in spec_checks(Moment.REFUSE_RESOLVED)}
    assert refusing == {"CCWS001", "CCWS002", "CCWS003", "CCWS005"}
    for code in refusing:
        assert rules[code].moment is Moment.REFUSE_RESOLVED and rules[code].severity.value == "error"
        assert "hpcconf spec" in rules[code].applies_to
    assert rules["CCWS008"].moment is Moment.JUDGE  # information or a warning in lint, never a refusal
    assert "ccws" not in Path(pipeline.__file__).read_text(encoding="utf-8").lower()


def test_deploy_script_keeps_secrets_off_the_az_command_line(tmp_path):
    """review26 C4: `ps` shows a command line; the secrets go through a mode-0600 parameters file instead."""
    text = _artifact(_build(_spec("")), "ccws/deploy.sh")
    az = text[text.index("\naz deployment sub create"):].split("\n\n", 1)[0]
    assert "CCWS_ADMIN_PASSWORD" not in az and '"@$secrets"' in az
    block = text[text.index("json_string() {"):text.index("\n)\n", text.index("secrets=")) + 3]
    script = tmp_path / "secrets.sh"
    script.write_text(f"set -euo pipefail\ncheckout={tmp_path}\n{block}\nstat -c %a \"$secrets\"\n", encoding="utf-8")
    password = 'p"a\\ss$w`d'
    run = subprocess.run(["bash", str(script)], capture_output=True, text=True, check=True,
                         env={"PATH": "/usr/bin:/bin", "CCWS_ADMIN_PASSWORD": password})
    assert run.stdout.strip() == "600"
    written = json.loads((tmp_path / "secure.parameters.json").read_text(encoding="utf-8"))
    assert written["parameters"] == {"adminPassword": {"value": password}}


def test_deploy_script_says_how_to_deliver_cluster_init_and_wire_health_checks():
    """review26 D1/D2: without cluster_init_url the script says exactly how the project reaches CycleCloud (a
    release's repository must hold project.ini at its root); the periodic check goes to site_specific.conf."""
    build = _build(_spec(""))
    text = _artifact(build, "ccws/deploy.sh")
    assert "ROOT of a GitHub repository (project.ini at its top level" in text
    assert "cyclecloud project upload" in text and "hpcconf-demo:default:1.0.0" in text
    assert "add slurm/health-check.conf to\n# /etc/slurm/site_specific.conf" in text
    conf = _artifact(build, "ccws/slurm/health-check.conf")
    assert "HealthCheckProgram=/usr/local/sbin/hpcconf-health-check-slurm\nHealthCheckInterval=3600\n" in conf
    assert 'HealthCheckInterval=0 and HealthCheckProgram=""' in conf  # what azslurm writes with healthCheckEnabled off
    boot = _artifact(build, "ccws/cluster-init/specs/default/cluster-init/scripts/20-hpcconf-health-checks.sh")
    assert "up to 500 s" in boot and "ResumeTimeout (1800 s" in boot
    with_url = _artifact(_build(_spec("  cluster_init_url: https://github.com/o/r/releases/tag/v1\n")), "ccws/deploy.sh")
    assert "must hold cluster-init/ at its ROOT" in with_url


def test_a_pinned_health_check_image_is_the_one_the_nodes_run():
    """review26 D4: run-health-checks.sh runs the bare image name, so the installer gives a pinned image that name;
    the default (:latest, the only tag Azure publishes) is logged by digest."""
    installer = "ccws/cluster-init/specs/default/cluster-init/files/install-health-checks.sh"
    default = _artifact(_build(_spec("")), installer)
    assert "docker pull mcr.microsoft.com/aznhc/aznhc-nv:latest\n" in default and "docker tag" not in default
    assert "index .RepoDigests 0" in default
    pinned = "mcr.microsoft.com/aznhc/aznhc-nv@sha256:" + "0" * 64
    text = _artifact(_build(_spec("", extra=f"health_checks: {{image: '{pinned}'}}\n")), installer)
    assert f"docker pull {pinned}\n" in text
    assert f"docker tag {pinned} mcr.microsoft.com/aznhc/aznhc-nv:latest\n" in text


def test_an_amd_size_refused_on_ccws_names_fixes_for_ccws():
    """review26 C2: the MI300X refusal on ccws ended with "or an NVIDIA SKU on AzHOP"."""
    reason = _refusal(CATALOG.get("Standard_ND96isr_MI300X_v5"), ["ccws"])
    assert reason is not None and reason.endswith("or an NVIDIA SKU") and "AzHOP" not in reason


def test_ccws_builds_the_slurm_nccl_test_job_for_its_gpu_partition():
    """r25c C6: CCWS is Slurm, so its gpu partition gets the Slurm target's sbatch (partition "gpu", whatever the
    pool is called), judging every pass; no node-setup script, since the cluster-init project installs the files."""
    build = _build(_spec("", pools="  - {name: h100, sku: Standard_ND96isr_H100_v5, count: 4}\n"))
    paths = {a.path for a in build.artifacts}
    job = _artifact(build, "slurm/h100/all_reduce_perf.sbatch")
    assert "#SBATCH -p gpu\n" in job and "#SBATCH --nodes=4\n" in job
    for label in ("all_reduce_perf", "sendrecv_perf", "ring.all_reduce", "single-node.all_reduce"):
        assert f" {label} " in job, label
    assert "single-node.all_reduce 460 at 17179869184" in job
    assert not {p for p in paths if p.startswith("slurm/") and p.endswith((".sh", ".conf"))}
