"""CCWS parameters files and Slurm gres/cgroup fragments as lint kinds: what is detected as one (and what is not),
JSON read with positions (tabs included), and the release a file is judged against."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from hpcconf.artifacts import Kind
from hpcconf.lint.context import LintContext
from hpcconf.lint.detect import detect_documents, json_kind
from hpcconf.lint.engine import lint_paths

ROOT = Path(__file__).resolve().parents[1]
GOOD = ROOT / "tests" / "rules" / "CCWS003" / "good.json"
SCHEMA = "https://schema.management.azure.com/schemas/2019-04-01/deploymentParameters.json#"


def _codes(tmp_path: Path, name: str, text: str) -> list[tuple[str, int, str]]:
    path = tmp_path / name
    path.write_text(text, encoding="utf-8")
    result = lint_paths([str(path)], LintContext())
    return [(f.code, f.line, getattr(f.severity, "value", str(f.severity))) for f in result.findings]


def test_the_good_fixture_is_clean_of_every_ccws_rule(tmp_path):
    assert [c for c in _codes(tmp_path, "ccw.parameters.json", GOOD.read_text()) if c[0].startswith("CCWS")] == []


def test_an_arm_parameters_file_of_another_template_is_not_ccws():
    other = json.dumps({"$schema": SCHEMA, "parameters": {"vmName": {"value": "a"}, "location": {"value": "b"}}})
    assert json_kind(other) is None
    assert json_kind(json.dumps({"name": "pkg", "version": "1.0.0", "dependencies": {}})) is None
    assert json_kind(GOOD.read_text()) == Kind.CCWS_PARAMETERS


def test_tab_indented_json_is_read_with_its_positions(tmp_path):
    data = json.loads(GOOD.read_text())
    data["parameters"]["slurmSettings"]["value"]["version"] = "24.05.4-2"
    text = json.dumps(data, indent="\t")
    line = next(i for i, ln in enumerate(text.splitlines(), 1) if "24.05.4-2" in ln)
    assert ("CCWS004", line, "error") in _codes(tmp_path, "ccw.json", text)


def test_commented_json_is_read_with_its_positions(tmp_path):
    text = GOOD.read_text().replace('"contentVersion"', '// written by hand\n  /* ccw */ "contentVersion"', 1)
    text = text.replace('"25.11.5",', '"23.11.7-1", // stale')
    line = next(i for i, ln in enumerate(text.splitlines(), 1) if "23.11.7-1" in ln)
    assert ("CCWS004", line, "error") in _codes(tmp_path, "ccw.json", text)


def test_project_version_chooses_the_release(tmp_path):
    data = json.loads(GOOD.read_text())
    data["parameters"]["slurmSettings"]["value"]["version"] = "25.11.4"
    assert any(c[0] == "CCWS004" for c in _codes(tmp_path, "a.json", json.dumps(data, indent=2)))
    data["parameters"]["projectVersion"] = {"value": "2026.06.18"}  # that release's portal offers 25.11.4
    text = json.dumps(data, indent=2)
    codes = _codes(tmp_path, "b.json", text)
    assert not any(c[0] == "CCWS004" for c in codes)
    key_line = next(i for i, ln in enumerate(text.splitlines(), 1) if ln.strip().startswith('"key"'))
    assert ("CCWS001", key_line, "error") in codes  # `key` replaced adminSshPublicKey/storedKey at 2026.07.02


def test_a_mutated_storage_variant_is_refused_at_its_line(tmp_path):
    data = json.loads(GOOD.read_text())
    data["parameters"]["schedFilesystem"]["value"] = {"type": "nfs-existing", "ipAddress": "10.0.0.4"}
    text = json.dumps(data, indent=2)
    line = next(i for i, ln in enumerate(text.splitlines(), 1) if '"schedFilesystem"' in ln) + 1
    assert ("CCWS003", line, "error") in _codes(tmp_path, "c.json", text)  # exportPath missing


@pytest.mark.parametrize("name,kind", [("gres.conf", Kind.GRES_CONF), ("ndv5.gres.conf", Kind.GRES_CONF),
                                       ("cgroup.conf", Kind.CGROUP_CONF), ("my-cgroup.conf", Kind.CGROUP_CONF),
                                       ("topology.conf", Kind.SLURM_TOPOLOGY)])
def test_slurm_fragments_by_name(name, kind):
    assert [d.kind for d in detect_documents(name, "Name=gpu File=/dev/nvidia0\n")] == [kind]


def test_gres_conf_with_sku_option_is_judged(tmp_path):
    from hpcconf.lint.context import lookup_sku
    path = tmp_path / "gres.conf"
    path.write_text("Nodename=n[1-2] Name=gpu Count=8 File=/dev/nvidia[0-7]\n", encoding="utf-8")
    ctx = LintContext()
    ctx.sku = lookup_sku("Standard_NC24rs_v3")  # 4 GPUs
    codes = [(f.code, f.line) for f in lint_paths([str(path)], ctx).findings]
    assert ("SLURM101", 1) in codes


def _older_release_file() -> dict:
    """A parameters file in the shape of releases 2025.04.07-2025.09.15 (adminSshPublicKey, no schedFilesystem,
    ANF's anfServiceTier, Slurm 24.05.4-2), as scripts written for them generate it."""
    image = "cycle.image.ubuntu22"
    values = {
        "location": "eastus", "adminUsername": "hpcadmin", "adminSshPublicKey": "ssh-rsa AAAAB3NzaC1yc2E hpcadmin",
        "ccVMName": "ccw-cyclecloud-vm", "ccVMSize": "Standard_D4as_v5", "resourceGroup": "ccw-rg",
        "sharedFilesystem": {"type": "anf-new", "anfServiceTier": "Premium", "anfCapacityInTiB": 2},
        "network": {"type": "new", "addressSpace": "10.0.0.0/24", "bastion": False, "createNatGateway": True},
        "storagePrivateDnsZone": {"type": "new"},
        "slurmSettings": {"startCluster": True, "version": "24.05.4-2", "healthCheckEnabled": False},
        "schedulerNode": {"sku": "Standard_D4as_v5", "osImage": image},
        "loginNodes": {"sku": "Standard_D2as_v5", "osImage": image, "initialNodes": 0, "maxNodes": 1},
        "htc": {"sku": "Standard_F2s_v2", "maxNodes": 1, "osImage": image, "useSpot": True},
        "hpc": {"sku": "Standard_HB176rs_v4", "maxNodes": 1, "osImage": image},
        "gpu": {"sku": "Standard_ND96isr_H100_v5", "maxNodes": 1, "osImage": image}, "tags": {},
    }
    return {"$schema": SCHEMA, "contentVersion": "1.0.0.0", "parameters": {k: {"value": v} for k, v in values.items()}}


def test_a_file_of_an_older_release_is_judged_as_that_release(tmp_path):
    data = _older_release_file()
    assert [c for c in _codes(tmp_path, "old.json", json.dumps(data, indent=2)) if c[0] != "CCWS002"] == []
    del data["parameters"]["sharedFilesystem"]["value"]["anfServiceTier"]
    data["parameters"]["sharedFilesystem"]["value"]["anfServiceLevel"] = "Premium"  # 2026.07.02's name
    result = lint_paths([str(_write(tmp_path, "mixed.json", json.dumps(data, indent=2)))], LintContext())
    messages = [f.message for f in result.findings if f.code == "CCWS003"]
    assert len(messages) == 1 and "'anfServiceTier' is a required property" in messages[0]
    assert "CCWS 2025.09.15" in messages[0]  # the newest release of those names that ships Slurm 24.05.4-2


def _write(tmp_path: Path, name: str, text: str) -> Path:
    path = tmp_path / name
    path.write_text(text, encoding="utf-8")
    return path


CLUSTER_TEMPLATE = "[cluster Slurm]\n    [[node scheduler]]\n    [[nodearray gpu]]\n        [[[configuration]]]\n" \
                   "        slurm.user.uid = 11100\n"


def test_a_cyclecloud_cluster_template_is_read_by_its_content():
    from hpcconf.lint.walker import name_skip_reason
    assert name_skip_reason("slurm.txt") is None and name_skip_reason("slurm-ha.txt") is None
    assert name_skip_reason("notes.txt") == "documentation"
    assert [d.kind for d in detect_documents("slurm.txt", CLUSTER_TEMPLATE)] == [Kind.CYCLECLOUD_TEMPLATE]
    assert detect_documents("slurm.txt", "slurm notes: nothing here\n") == []
    # a linter module or document quoting a template is not one ("hpcconf lint ." on hpcconf itself: SLURM105 on the
    # docstring of hpcconf/lint/rules/cyclecloud_template.py)
    quoted = '"""Example:\n\n' + CLUSTER_TEMPLATE + '"""\n'
    assert all(d.kind != Kind.CYCLECLOUD_TEMPLATE for name in ("cyclecloud_template.py", "README.md")
               for d in detect_documents(name, quoted))


def test_slurm_ids_that_differ_in_a_walked_template_are_found(tmp_path):
    (tmp_path / "templates").mkdir()
    (tmp_path / "templates" / "slurm.txt").write_text(CLUSTER_TEMPLATE.replace("11100", "20000"), encoding="utf-8")
    assert [c for c, _line, _sev in _codes_in_dir(tmp_path)] == ["SLURM105"]


def _codes_in_dir(path):
    return [(f.code, f.line, f.severity.value) for f in lint_paths([str(path)], LintContext()).findings
            if f.code.startswith("SLURM")]


def _slurm_context(version: str) -> LintContext:
    import dataclasses

    from hpcconf.pipeline import compile_spec
    text = ("apiVersion: hpcconf/v1\nkind: Cluster\nmetadata: {name: demo, location: eastus}\nplatforms: [slurm]\n"
            f"pools:\n  - {{name: gpu, sku: Standard_ND96isr_H100_v5, count: 2}}\nversions: {{slurm: {version}}}\n")
    build = compile_spec("spec.yaml", text=text, display_name="spec.yaml")
    return dataclasses.replace(LintContext(), cluster=build.cluster)


@pytest.mark.parametrize("version,expected", [("23.02.5", [("SLURM106", 2, "error"), ("SLURM106", 3, "error")]),
                                              ("23.11.7", [("SLURM106", 2, "warning"), ("SLURM106", 3, "error")]),
                                              ("25.11.5", [])])
def test_nvl72_slurm_lines_are_judged_against_the_pinned_slurm(tmp_path, version, expected):
    path = tmp_path / "site_specific.conf"
    path.write_text("TopologyParam=BlockAsNodeRank\nTopologyPlugin=topology/block\nSwitchType=switch/nvidia_imex\n",
                    encoding="utf-8")
    found = [(f.code, f.line, f.severity.value) for f in lint_paths([str(path)], _slurm_context(version)).findings
             if f.code == "SLURM106"]
    assert found == expected
