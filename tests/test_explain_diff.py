"""`hpcconf explain-diff` and `build --diff/--check --explain`: which spec field changed which lines.

The attribution is checked against independent facts: the lines each field is blamed for
must together be exactly the lines that differ between the old and new build, and fields
that cannot touch a file (the IB resource name and the Slurm sbatch script, say) must not
be blamed for it.
"""

from __future__ import annotations

import os
import shutil
import subprocess
from pathlib import Path

import pytest
from typer.testing import CliRunner

from hpcconf.cli import app
from hpcconf.explain_diff import MISSING, changed_lines, explain_specs, spec_changes
from hpcconf.pipeline import compile_spec
from hpcconf.yamlpos import load_document

runner = CliRunner()
GIT = shutil.which("git")


def hpcconf(*args: str):
    return runner.invoke(app, list(args))


@pytest.fixture(scope="module")
def base_text(tmp_path_factory) -> str:
    path = tmp_path_factory.mktemp("explain") / "base.yaml"
    result = hpcconf("init", "--sku", "Standard_ND96amsr_A100_v4", "--nodes", "4", "--platform", "aks,azhop,slurm",
                     "--name", "review", "-o", str(path))
    assert result.exit_code == 0, result.output
    return path.read_text()


def edited(text: str, *pairs: tuple[str, str]) -> str:
    for old, new in pairs:
        assert text.count(old) == 1, old
        text = text.replace(old, new)
    return text


def explain(tmp_path: Path, old_text: str, new_text: str):
    (tmp_path / "new").mkdir(exist_ok=True)
    spec = tmp_path / "new" / "cluster.yaml"
    spec.write_text(new_text)
    build = compile_spec(spec)
    old_data = load_document(old_text, "old.yaml").data
    return build, explain_specs(build, old_data, "old.yaml")


def old_build_files(tmp_path: Path, old_text: str) -> dict[str, str]:
    (tmp_path / "old").mkdir(exist_ok=True)
    spec = tmp_path / "old" / "cluster.yaml"
    spec.write_text(old_text)
    return {a.path: a.content for a in compile_spec(spec).artifacts}


# -- spec field differences -----------------------------------------------------------------------

def test_spec_changes_lists_leaf_fields_in_spec_order():
    old = {"metadata": {"name": "a"}, "pools": [{"name": "gpu", "count": 2}], "nccl_env": {"NCCL_DEBUG": "INFO"}}
    new = {"metadata": {"name": "a", "description": "x"}, "pools": [{"name": "gpu", "count": 4}],
           "nccl_env": {}}
    changes = [(c.label, c.old, c.new) for c in spec_changes(old, new)]
    assert changes == [("metadata.description", MISSING, "x"), ("pools[0].count", 2, 4),
                       ("nccl_env.NCCL_DEBUG", "INFO", MISSING)]


def test_spec_changes_match_grown_lists_by_name():
    old = {"pools": [{"name": "a", "count": 1}, {"name": "b", "count": 1}]}
    new = {"pools": [{"name": "b", "count": 3}, {"name": "c", "count": 1}, {"name": "d", "count": 1}]}
    labels = [c.label for c in spec_changes(old, new)]
    assert labels == ["pools[0].count", "pools[1] ('c' added)", "pools[2] ('d' added)", "pools[0] ('a' removed)"]
    # Each change reverts on its own: applying all reverts gives back the old pools (as a set).
    data = {"pools": [dict(p) for p in new["pools"]]}
    for change in spec_changes(old, new):
        change.revert(data)
    assert sorted(p["name"] for p in data["pools"]) == ["a", "b"]
    assert next(p for p in data["pools"] if p["name"] == "b")["count"] == 1


# -- attribution ------------------------------------------------------------------------------

def test_each_artifact_is_blamed_on_the_fields_that_change_it(base_text, tmp_path):
    new_text = edited(base_text, ("count: 4 ", "count: 5 "), ("resource_name: infiniband", "resource_name: mlnxnics"),
                      ("collective: all_reduce", "collective: all_gather"))
    build, explanation = explain(tmp_path, base_text, new_text)
    assert [c.describe() for c in explanation.changes] == [
        "pools[0].count: 4 -> 5", "network.infiniband.resource_name: infiniband -> mlnxnics",
        "nccl_test.collective: all_reduce -> all_gather"]
    blamed = {a.path: {c.change.label for c in a.causes} for a in explanation.artifacts}
    assert blamed["aks/hostdevicenetwork.yaml"] == {"network.infiniband.resource_name"}
    assert blamed["aks/volcano-job.yaml"] == {"pools[0].count", "network.infiniband.resource_name",
                                              "nccl_test.collective"}
    assert blamed["slurm/gpu/all_gather_perf.sbatch"] == {"nccl_test.collective"}  # added by the collective
    assert blamed["slurm/gpu/all_reduce_perf.sbatch"] == {"nccl_test.collective"}  # removed by it
    assert "network.infiniband.resource_name" not in blamed.get("azhop/config.yml", set())
    statuses = {a.path: a.status for a in explanation.artifacts}
    assert statuses["slurm/gpu/all_gather_perf.sbatch"] == "added"
    assert statuses["slurm/gpu/all_reduce_perf.sbatch"] == "removed"

    # The blamed lines are exactly the lines that differ from the old build.
    old_files = old_build_files(tmp_path, base_text)
    new_files = {a.path: a.content for a in build.artifacts}
    for artifact in explanation.artifacts:
        if artifact.status != "changed":
            continue
        blamed_lines = set().union(*(c.lines for c in artifact.causes))
        assert blamed_lines == set(changed_lines(new_files[artifact.path], old_files[artifact.path])), artifact.path
    assert {a.path for a in explanation.artifacts} == {p for p in set(old_files) | set(new_files)
                                                       if old_files.get(p) != new_files.get(p)}


def test_resource_name_lines_are_named(base_text, tmp_path):
    new_text = edited(base_text, ("resource_name: infiniband", "resource_name: mlnxnics"))
    build, explanation = explain(tmp_path, base_text, new_text)
    hdn = next(a for a in explanation.artifacts if a.path == "aks/hostdevicenetwork.yaml")
    content = next(a.content for a in build.artifacts if a.path == hdn.path).splitlines()
    assert hdn.causes[0].lines and all("mlnxnics" in content[n - 1] for n in hdn.causes[0].lines)


def test_a_field_no_file_depends_on_is_reported(base_text, tmp_path):
    new_text = edited(base_text, ("  location: southcentralus", "  description: lab cluster\n  location: southcentralus"))
    _, explanation = explain(tmp_path, base_text, new_text)
    text = explanation.render()
    assert "metadata.description: (unset) -> lab cluster" in text
    assert "no artifact changes" in text and "changed fields no listed file depends on: metadata.description" in text


def test_fields_that_only_validate_together_are_said_to(base_text, tmp_path):
    old_text = edited(base_text, ("nccl_test:", "nccl_test:\n  pool: gpu"))
    new_text = edited(old_text, ("  - name: gpu ", "  - name: a100 "), ("  pool: gpu", "  pool: a100"))
    _, explanation = explain(tmp_path, old_text, new_text)
    assert {c.label for c in explanation.not_isolated} == {"pools[0].name", "nccl_test.pool"}
    text = explanation.render()
    assert "pools[0].name cannot be reverted alone" in text
    assert "changed by fields that only validate together: pools[0].name, nccl_test.pool" in text
    assert any(a.path == "nccl/a100/nccl.conf" and a.status == "added" for a in explanation.artifacts)


def test_a_pool_added(tmp_path):
    result = hpcconf("init", "--sku", "Standard_ND96amsr_A100_v4", "-n", "2", "-p", "slurm", "-o", str(tmp_path / "s.yaml"))
    assert result.exit_code == 0
    old_text = (tmp_path / "s.yaml").read_text()
    new_text = edited(old_text, ("    count: 2 ", "    count: 2 \n  - name: h100\n    sku: Standard_ND96isr_H100_v5\n    count: 2\n"))
    _, explanation = explain(tmp_path, old_text, new_text)
    assert [c.describe() for c in explanation.changes] == ["pools[1] ('h100' added): 2 x Standard_ND96isr_H100_v5"]
    added = {a.path for a in explanation.artifacts if a.status == "added"}
    assert "nccl/h100/nccl.conf" in added
    assert all(a.causes[0].change.label == "pools[1] ('h100' added)" for a in explanation.artifacts)


# -- CLI --------------------------------------------------------------------------------------

def test_explain_diff_against_a_file(base_text, tmp_path):
    (tmp_path / "old.yaml").write_text(base_text)
    (tmp_path / "new.yaml").write_text(edited(base_text, ("gpu_operator: 26.7.0", "gpu_operator: 25.3.0")))
    result = hpcconf("explain-diff", str(tmp_path / "new.yaml"), "--against", str(tmp_path / "old.yaml"), "--diff")
    assert result.exit_code == 0, result.output
    assert "versions.gpu_operator: 26.7.0 -> 25.3.0" in result.output
    assert "aks/gpu-operator-values.yaml (changed)\n  <- versions.gpu_operator (line" in result.output
    assert "-  --version 'v26.7.0' \\" in result.output and "+  --version 'v25.3.0' \\" in result.output


def test_explain_diff_without_git_or_against_is_a_usage_error(base_text, tmp_path, monkeypatch):
    monkeypatch.setenv("GIT_CEILING_DIRECTORIES", str(tmp_path))
    (tmp_path / "new.yaml").write_text(base_text)
    result = hpcconf("explain-diff", str(tmp_path / "new.yaml"))
    assert result.exit_code == 2 and "pass --against OLD_SPEC" in result.output


@pytest.fixture
def git_repo(base_text, tmp_path, monkeypatch):
    if GIT is None:
        pytest.skip("git is not on PATH")
    env = {"GIT_CONFIG_GLOBAL": os.devnull, "GIT_CONFIG_NOSYSTEM": "1", "GIT_AUTHOR_NAME": "t",
           "GIT_AUTHOR_EMAIL": "t@example.com", "GIT_COMMITTER_NAME": "t", "GIT_COMMITTER_EMAIL": "t@example.com"}
    for key, value in env.items():
        monkeypatch.setenv(key, value)
    monkeypatch.chdir(tmp_path)
    (tmp_path / "cluster.yaml").write_text(base_text)
    assert hpcconf("build", "cluster.yaml", "-q").exit_code == 0
    for args in (["init", "-q", "."], ["add", "-A"], ["commit", "-q", "-m", "initial"]):
        assert subprocess.run([GIT, *args], capture_output=True).returncode == 0
    return tmp_path


def test_build_diff_explain_uses_the_committed_spec(git_repo):
    spec = git_repo / "cluster.yaml"
    spec.write_text(edited(spec.read_text(), ("count: 4 ", "count: 5 ")))
    result = hpcconf("build", "cluster.yaml", "--diff", "--explain")
    assert result.exit_code == 1  # there are changes
    out = result.output[result.output.index("explain:"):]
    assert out.startswith("explain: cluster.yaml compared with HEAD:cluster.yaml\nspec changes:\n  pools[0].count: 4 -> 5\n")
    assert "out/review/slurm/gpu/all_reduce_perf.sbatch (changed)\n  <- pools[0].count (lines" in out
    assert "resource_name" not in out


def test_explain_notes_a_file_the_spec_change_does_not_explain(git_repo):
    spec = git_repo / "cluster.yaml"
    spec.write_text(edited(spec.read_text(), ("count: 4 ", "count: 5 ")))
    conf = git_repo / "out/review/nccl/gpu/nccl.conf"
    conf.write_text(conf.read_text() + "NCCL_DEBUG=INFO\n")
    result = hpcconf("build", "cluster.yaml", "--check", "--explain")
    assert result.exit_code == 1
    assert "edited by hand: out/review/nccl/gpu/nccl.conf" in result.output
    assert ("out/review/nccl/gpu/nccl.conf (changed)\n  the file on disk is not what the earlier spec builds either"
            in result.output)


def test_explain_diff_defaults_to_head(git_repo):
    spec = git_repo / "cluster.yaml"
    spec.write_text(edited(spec.read_text(), ("resource_name: infiniband", "resource_name: ib")))
    result = hpcconf("explain-diff", "cluster.yaml")
    assert result.exit_code == 0, result.output
    assert "compared with HEAD:cluster.yaml" in result.output
    assert "aks/hostdevicenetwork.yaml (changed)\n  <- network.infiniband.resource_name" in result.output


def test_an_earlier_spec_that_does_not_build_is_refused_at_its_own_line(tmp_path):
    from typer.testing import CliRunner

    from hpcconf.cli import app

    body = ("apiVersion: hpcconf/v1\nkind: Cluster\nmetadata: {name: demo, location: eastus}\nplatforms: [slurm]\n"
            "pools:\n  - {name: gpu, sku: SKU, count: 2}\n")
    new, old = tmp_path / "new.yaml", tmp_path / "old.yaml"
    new.write_text(body.replace("SKU", "Standard_ND96asr_v4"))
    old.write_text(body.replace("SKU", "Standard_ND96asr_v9"))
    result = CliRunner().invoke(app, ["explain-diff", str(new), "--against", str(old)])
    assert result.exit_code == 2
    assert "does not build, so there is nothing to compare against" in result.stderr
    assert f"{old.as_posix()}:6:22: error[HPC006]" in result.stderr
