"""`hpcconf review` of a CCWS parameters.json: what a re-run of the deployment does with each class of changed
parameter (hpcconf.knowledge.ccws_updates, read at cyclecloud-slurm-workspace 2026.07.02)."""

from __future__ import annotations

import copy
import json
import shutil
import subprocess
from pathlib import Path

import pytest
from typer.testing import CliRunner

from hpcconf.cli import app
from hpcconf.knowledge import ccws, ccws_updates
from hpcconf.review.model import _ccws_parameter_impacts

ROOT = Path(__file__).resolve().parents[1]
EXAMPLE = ROOT / "examples" / "ccws-ndv5.yaml"
PATH = "ccws/parameters.json"


@pytest.fixture(scope="module")
def parameters(tmp_path_factory):
    out = tmp_path_factory.mktemp("ccws")
    result = CliRunner().invoke(app, ["build", str(EXAMPLE), "-o", str(out), "-q"])
    assert result.exit_code == 0, result.output
    return json.loads(next(out.rglob("ccws/parameters.json")).read_text(encoding="utf-8"))


def _changed(parameters, edit):
    after = copy.deepcopy(parameters)
    edit(after["parameters"])
    return _ccws_parameter_impacts(PATH, json.dumps(parameters), json.dumps(after))


def test_a_partition_change_is_made_in_cyclecloud_not_by_a_rerun(parameters):
    impacts = _changed(parameters, lambda p: p["gpu"]["value"].update(maxNodes=32))
    assert len(impacts) == 1
    assert impacts[0].action.startswith("gpu: change it in CycleCloud")
    assert "azslurm scale" in impacts[0].action and "install.sh created it once" in impacts[0].effect
    assert impacts[0].source.endswith("2026.07.02/bicep/install.sh")


def test_a_slurm_version_change_is_a_cluster_change_too(parameters):
    impacts = _changed(parameters, lambda p: p["slurmSettings"]["value"].update(version="25.05.0"))
    assert [i.action.split(":")[0] for i in impacts] == ["slurmSettings"]


def test_a_filer_change_is_applied_by_arm(parameters):
    impacts = _changed(parameters, lambda p: p["tags"]["value"].setdefault("Virtual machine", {}).update(a="b"))
    assert len(impacts) == 1 and impacts[0].action.startswith("tags: re-run deploy.sh")
    assert "deletes nothing" in impacts[0].effect


def test_a_new_address_space_is_disruptive_not_a_rerun(parameters):
    """r26b N2: a changed address space of a new VNet moves every subnet under the VMs and filers; Azure refuses to
    change an in-use subnet's range, so a re-run fails: disruptive, never a plain re-run."""
    impacts = _changed(parameters, lambda p: p["network"]["value"].update(addressSpace="10.9.0.0/22"))
    assert len(impacts) == 1 and impacts[0].action.startswith("network: not in place"), impacts
    assert impacts[0].is_disruptive and impacts[0].disruptive == "network"
    assert "InUseSubnetCannotBeUpdated" not in impacts[0].action and "virtual-network-manage-subnet" in impacts[0].source


def test_the_cyclecloud_vm_size_resizes_it(parameters):
    impacts = _changed(parameters, lambda p: p["ccVMSize"].update(value="Standard_D8as_v5"))
    assert impacts[0].action.startswith("ccVMSize: re-run deploy.sh: ARM resizes")


def test_a_new_resource_group_is_a_second_workspace(parameters):
    impacts = _changed(parameters, lambda p: p["resourceGroup"].update(value="other-rg"))
    assert "second Slurm cluster" in impacts[0].effect


def test_the_vm_image_is_fixed_at_creation(parameters):
    impacts = _changed(parameters, lambda p: p.update(cyclecloudBaseImage={"value": "a:b:c:1"}))
    assert impacts[0].action.startswith("cyclecloudBaseImage: none through deploy.sh")


def test_classes_of_several_parameters_come_in_order_one_impact_each(parameters):
    def edit(p):
        p["gpu"]["value"].update(maxNodes=8)
        p["hpc"]["value"].update(maxNodes=8)
        p["tags"]["value"]["x"] = {}
    impacts = _changed(parameters, edit)
    assert [i.action.split(":")[0] for i in impacts] == ["gpu, hpc", "tags"]


def test_no_change_and_other_files_have_no_parameter_impact(parameters):
    text = json.dumps(parameters)
    assert _ccws_parameter_impacts(PATH, text, text) == []
    assert _ccws_parameter_impacts("ccws/deploy.sh", text, text.replace("eastus", "westus")) == []
    assert _ccws_parameter_impacts(PATH, "{not json", text) == []


def test_every_parameter_of_the_pinned_release_has_a_class():
    """A release that adds a parameter must say what a re-run does with it (the secrets are never in the file)."""
    known = set(ccws.newest().parameters)
    secrets = {"adminPassword", "databaseAdminPassword"}
    assert set(ccws_updates.PARAMETER_CLASS) <= known
    assert known - secrets - set(ccws_updates.PARAMETER_CLASS) == {"infrastructureOnly"}


GIT = shutil.which("git")


@pytest.mark.skipif(GIT is None, reason="git is not on PATH")
def test_review_of_a_ccws_repository_names_the_parameter_and_where_to_change_it(tmp_path, monkeypatch):
    def git(*args):
        done = subprocess.run([GIT, "-C", str(tmp_path), *args], capture_output=True, text=True)
        assert done.returncode == 0, done.stderr

    git("init", "-q", "-b", "main")
    git("config", "user.email", "t@example.com")
    git("config", "user.name", "t")
    (tmp_path / ".hpcconf.toml").write_text('out = "out"\n')
    spec = tmp_path / "ccws.yaml"
    spec.write_text(EXAMPLE.read_text(encoding="utf-8"), encoding="utf-8")
    monkeypatch.chdir(tmp_path)
    runner = CliRunner()
    assert runner.invoke(app, ["build", "ccws.yaml", "-q"]).exit_code == 0
    git("add", "-A")
    git("commit", "-qm", "base")
    git("checkout", "-qb", "change")
    spec.write_text(spec.read_text().replace("    count: 16\n", "    count: 32\n"), encoding="utf-8")
    assert runner.invoke(app, ["build", "ccws.yaml", "-q"]).exit_code == 0
    git("add", "-A")
    git("commit", "-qm", "change")
    result = runner.invoke(app, ["review"])
    text = result.output
    parameters = text[text.index("ccws/parameters.json (changed)"):]
    assert "<- pools[0].count" in parameters
    assert "impact: gpu: change it in CycleCloud" in parameters
    assert "impact: re-run deploy.sh for the Azure resources" not in parameters.split("ccws/slurm/")[0]


def test_every_ccws_output_has_an_impact_row():
    from hpcconf.knowledge.impact import impact_of
    for path in ("ccws/parameters.json", "ccws/deploy.sh", "ccws/cluster-init/project.ini", "ccws/slurm/gres.conf",
                 "ccws/slurm/site_specific.conf"):
        assert impact_of(path) is not None, path
    assert impact_of("ccws/slurm/nvl72-topology.sh").action.startswith("copy it to the scheduler")


def test_a_gres_conf_change_is_made_through_azslurm_not_site_specific():
    """r26b N2: azslurm writes gres.conf itself, so a hand edit or a site_specific.conf line is not how it changes."""
    from hpcconf.knowledge.impact import impact_of

    impact = impact_of("ccws/slurm/gres.conf")
    assert impact is not None and "azslurm scale" in impact.action and "site_specific" not in impact.action
    other = impact_of("ccws/slurm/cgroup.conf")
    assert other is not None and "site_specific.conf" in other.action
