"""`hpcconf review` on a scripted series of realistic changes in a temporary git repository.

Base (branch main): one AKS spec on network-operator 24.7.0, built and committed. The change
bumps network-operator across 24.10, adds a pool, changes a node count, sets an NCCL variable
and commits a hand edit in a generated file. The review must name, for each, the cause, the
impact and (for the chart bump) the migration note, in text, Markdown and JSON; the Markdown is
rendered with markdown-it-py and its structure asserted. `build --diff` is checked with
`git apply --check`.
"""

from __future__ import annotations

import json
import shutil
import subprocess
from pathlib import Path

import pytest
from typer.testing import CliRunner

from hpcconf.cli import app
from hpcconf.knowledge.impact import field_key, impact_of, impact_rows, migration_notes

GIT = shutil.which("git")
pytestmark = pytest.mark.skipif(GIT is None, reason="git is not on PATH")
runner = CliRunner()

BASE_SPEC = """\
apiVersion: hpcconf/v1
kind: Cluster
metadata: {name: demo, location: southcentralus}
platforms: [aks]
pools:
  - {name: gpu, sku: Standard_ND96amsr_A100_v4, count: 2}
network:
  infiniband: {resource_name: mlnxnics}
versions:
  network_operator: 24.7.0
test_image: {registry: demo.azurecr.io, tag: "25.10", base: "nvcr.io/nvidia/pytorch:25.10-py3"}
aks: {namespace: nccl-test}
"""


def hpcconf(*args: str):
    return runner.invoke(app, list(args))


def git(repo: Path, *args: str) -> str:
    done = subprocess.run([GIT, "-C", str(repo), *args], capture_output=True, text=True)
    assert done.returncode == 0, done.stderr
    return done.stdout


def edit(path: Path, old: str, new: str) -> None:
    text = path.read_text()
    assert old in text, old
    path.write_text(text.replace(old, new))


@pytest.fixture(scope="module")
def scenario(tmp_path_factory):
    """The repository after the scripted changes, committed on branch `change` (base: main)."""
    repo = tmp_path_factory.mktemp("review")
    git(repo, "init", "-q", "-b", "main")
    git(repo, "config", "user.email", "t@example.com")
    git(repo, "config", "user.name", "t")
    (repo / ".hpcconf.toml").write_text('out = "out"\n')
    (repo / "specs").mkdir()
    spec = repo / "specs" / "demo.yaml"
    spec.write_text(BASE_SPEC)
    with pytest.MonkeyPatch.context() as mp:
        mp.chdir(repo)
        assert hpcconf("build", "specs/demo.yaml", "-q").exit_code == 0
        git(repo, "add", "-A")
        git(repo, "commit", "-qm", "base")
        git(repo, "checkout", "-qb", "change")
        edit(spec, "network_operator: 24.7.0", "network_operator: 25.7.0")             # chart across 24.10
        edit(spec, "count: 2}", "count: 4}\n  - {name: small, sku: Standard_NC24ads_A100_v4, count: 1}")  # count, pool
        spec.write_text(spec.read_text() + 'nccl_env: {NCCL_IB_QPS_PER_CONNECTION: "2"}\n')  # an NCCL variable
        assert hpcconf("build", "specs/demo.yaml", "-q").exit_code == 0
        with (repo / "out/demo/aks/nfd-values.yaml").open("a") as handle:             # a hand edit
            handle.write("# tuned by hand\n")
        git(repo, "add", "-A")
        git(repo, "commit", "-qm", "change")
        reports = {}
        for fmt in ("text", "markdown", "json"):
            result = hpcconf("review", "--format", fmt)
            assert result.exit_code == 1, result.output  # the hand edit must be fixed
            reports[fmt] = result.output
    return repo, reports


# -- text --------------------------------------------------------------------------------------------

def test_text_names_cause_impact_and_migration_for_each_change(scenario):
    _repo, reports = scenario
    text = reports["text"]
    assert text.startswith("hpcconf review: merge-base of HEAD and main (")
    assert "specs/demo.yaml (changed) -> out/demo/" in text
    for field in ("pools[0].count: 2 -> 4", "pools[1] ('small' added): 1 x Standard_NC24ads_A100_v4",
                  "versions.network_operator: 24.7.0 -> 25.7.0", "nccl_env: (unset) ->"):
        assert field in text
    assert "migration (network-operator crosses 24.10.0)" in text
    assert "out/demo/aks/nicclusterpolicy.yaml (added)\n    <- versions.network_operator\n" \
           "    impact: kubectl apply -f aks/nicclusterpolicy.yaml [DISRUPTIVE: changes the InfiniBand network]" in text
    provision = text[text.index("out/demo/aks/provision.sh (changed)"):]
    assert "<- pools[0].count (lines" in provision and "impact: az aks nodepool scale --node-count N\n" in provision
    assert "impact: az aks nodepool add" in provision
    job = text[text.index("out/demo/aks/volcano-job.yaml (changed)"):]
    assert "<- nccl_env (line" in job and "impact: kubectl delete the previous NCCL test job" in job
    assert "out/demo/aks/nfd-values.yaml: edited by hand (its hash differs from the manifest)" in text
    assert "impact: helm upgrade node-feature-discovery" in text.split("nfd-values.yaml: edited by hand")[1]
    assert "summary: 1 spec(s) changed, 10 generated file(s) changed, 2 disruptive, 1 hand edit(s), 0 stale" in text


# -- JSON --------------------------------------------------------------------------------------------

def test_json_has_the_documented_shape_and_the_same_facts(scenario):
    _repo, reports = scenario
    data = json.loads(reports["json"])
    assert data["format"] == "hpcconf-review/1"
    assert data["summary"] == {"specs_changed": 1, "files_changed": 10, "disruptive": 2, "hand_edits": 1,
                               "stale": 0, "errors": 0}
    (spec,) = data["specs"]
    assert (spec["path"], spec["status"], spec["cluster"], spec["out_dir"]) == ("specs/demo.yaml", "changed", "demo", "out/demo")
    fields = {f["field"]: (f["old"], f["new"]) for f in spec["fields"]}
    assert fields["versions.network_operator"] == ("24.7.0", "25.7.0") and fields["pools[0].count"] == (2, 4)
    assert fields["nccl_env"] == (None, {"NCCL_IB_QPS_PER_CONNECTION": "2"})
    assert {n["title"] for n in spec["migrations"]} == {"network-operator crosses 24.10.0",
                                                        "network-operator values keys change"}
    files = {f["path"]: f for f in spec["files"]}
    ncp = files["out/demo/aks/nicclusterpolicy.yaml"]
    assert ncp["status"] == "added" and ncp["disruptive"] and ncp["impacts"][0]["disruptive"] == "ib-network"
    assert [c["field"] for c in ncp["causes"]] == ["versions.network_operator"]
    assert ncp["diff"].startswith("diff --git a/out/demo/aks/nicclusterpolicy.yaml b/out/demo/aks/nicclusterpolicy.yaml\n"
                                  "new file mode 100644\n--- /dev/null\n")
    provision = files["out/demo/aks/provision.sh"]
    assert {c["field"] for c in provision["causes"]} == {"pools[0].count", "pools[1] ('small' added)",
                                                         "versions.network_operator"}
    assert not provision["disruptive"]  # growing a pool and adding one touch no running node
    assert {c["field"] for c in files["out/demo/aks/volcano-job.yaml"]["causes"]} >= {"nccl_env"}
    (problem,) = spec["problems"]
    assert problem["path"] == "out/demo/aks/nfd-values.yaml" and problem["state"] == "edited"
    assert problem["lines"] and problem["impact"]["action"] == "helm upgrade node-feature-discovery"


# -- Markdown, rendered ------------------------------------------------------------------------------

def test_markdown_renders_with_collapsible_artifacts_tables_and_diffs(scenario):
    markdown_it = pytest.importorskip("markdown_it", reason="markdown-it-py renders the Markdown (pip install hpcconf[test])")
    _repo, reports = scenario
    text = reports["markdown"]
    md = markdown_it.MarkdownIt("gfm-like") if "gfm-like" in markdown_it.presets.__dict__ else \
        markdown_it.MarkdownIt("commonmark").enable("table")
    tokens = md.parse(text)
    kinds = [t.type for t in tokens]
    # One summary table and per spec a table of changed fields; one per changed file with its causes.
    assert kinds.count("table_open") >= 1 + 1 + 6
    html_blocks = [t.content for t in tokens if t.type == "html_block"]
    details = [b for b in html_blocks if b.startswith("<details>")]
    # under aks/: the changed values, NicClusterPolicy, provision.sh, job and health-check DaemonSet, and the
    # NFD rule the added pool (no InfiniBand) brings, its own job and health-check files; plus health/small/nhc.conf
    assert len(details) == 10 and all("<summary><code>out/demo/" in b for b in details)
    assert sum("<summary><code>out/demo/aks/" in b for b in details) == 9
    assert any("<summary><code>out/demo/health/small/nhc.conf</code> (added)" in b for b in details)
    assert sum(b.count("</details>") for b in html_blocks) == 10  # every block is closed
    fences = [t for t in tokens if t.type == "fence"]
    assert len(fences) == 10 and all(t.info == "diff" and t.content.startswith("diff --git a/out/demo/") for t in fences)
    rendered = md.render(text)
    assert "<th>spec field</th>" in rendered and "<code>versions.network_operator</code>" in rendered
    ncp = next(b for b in details if "nicclusterpolicy.yaml" in b)
    assert "⚠️ changes the InfiniBand network" in ncp
    assert "<strong>Migration (network-operator crosses 24.10.0):</strong>" in rendered
    assert kinds.count("blockquote_open") >= 2 * 2  # each migration note its own quote, at the spec and the file
    assert "<td><code>pools[1] ('small' added)</code></td>\n<td>(added)</td>\n<td>1 x Standard_NC24ads_A100_v4</td>" \
        in rendered
    assert "<strong>Impact:</strong> az aks nodepool scale --node-count N." in rendered
    assert "<li><code>out/demo/aks/nfd-values.yaml</code>: edited by hand" in rendered


def test_markdown_cells_escape_pipes_and_html(scenario):
    from hpcconf.review.render import _cell, _code

    assert _cell("a|b <x>") == "a\\|b &lt;x&gt;"
    assert _code("a|b") == "`a\\|b`" and _code("a`b") == "`` a`b ``"


# -- base and head, renames, errors ------------------------------------------------------------------

def test_explicit_revisions_and_a_renamed_spec(scenario, monkeypatch, tmp_path):
    repo, _ = scenario
    clone = tmp_path / "clone"
    git(tmp_path, "clone", "-q", str(repo), str(clone))
    git(clone, "checkout", "-q", "change")
    git(clone, "config", "user.email", "t@example.com")
    git(clone, "config", "user.name", "t")
    (clone / "clusters").mkdir()
    git(clone, "mv", "specs/demo.yaml", "clusters/demo.yaml")  # same file name: the headers do not change
    git(clone, "commit", "-qm", "rename")
    monkeypatch.chdir(clone)
    result = hpcconf("review", "--base", "HEAD~1", "--head", "HEAD", "--format", "json")
    data = json.loads(result.output)
    (spec,) = data["specs"]
    assert (spec["path"], spec["status"], spec["old_path"]) == ("clusters/demo.yaml", "renamed", "specs/demo.yaml")
    assert data["base"].startswith("HEAD~1 (")
    # Only the committed hand edit differs from what the (moved) spec builds, and it is said so.
    (changed,) = spec["files"]
    assert changed["path"] == "out/demo/aks/nfd-values.yaml" and changed["causes"] == []
    assert changed["note"].startswith("the file on disk is not what the earlier spec builds either")
    assert result.exit_code == 1  # the hand edit committed earlier is still there


def test_a_spec_renamed_to_another_file_name_is_a_rename_with_header_lines_only(scenario, monkeypatch, tmp_path):
    repo, _ = scenario
    clone = tmp_path / "clone"
    git(tmp_path, "clone", "-q", str(repo), str(clone))
    git(clone, "checkout", "-q", "change")
    git(clone, "config", "user.email", "t@example.com")
    git(clone, "config", "user.name", "t")
    (clone / "clusters").mkdir()
    git(clone, "mv", "specs/demo.yaml", "clusters/demo-east.yaml")  # every header names the spec file
    monkeypatch.chdir(clone)
    assert hpcconf("build", "clusters/demo-east.yaml", "-q", "--force").exit_code == 0
    git(clone, "add", "-A")
    git(clone, "commit", "-qm", "rename")
    result = hpcconf("review", "--base", "HEAD~1", "--head", "HEAD", "--format", "json")
    assert result.exit_code == 0, result.output
    (spec,) = json.loads(result.output)["specs"]
    assert (spec["status"], spec["old_path"]) == ("renamed", "specs/demo.yaml")
    assert spec["fields"] == [] and spec["problems"] == [] and spec["files"]
    files = {f["path"]: f for f in spec["files"]}
    # the base committed a hand edit in nfd-values.yaml, which this rebuild (--force) dropped: more than a header
    assert files.pop("out/demo/aks/nfd-values.yaml")["note"].startswith("the file on disk is not what the earlier")
    assert len(files) >= 8
    for changed in files.values():
        assert changed["causes"] == [] and not changed["disruptive"], changed
        assert changed["note"] == ("the spec was renamed (demo.yaml -> demo-east.yaml): only the generated-by "
                                   "header lines naming it changed"), changed
        assert [i["action"] for i in changed["impacts"]] == [
            "none: a comment changed (the generated-by header names the renamed spec file)"]
        # one header per file, or several where the file embeds another (health-checks.yaml's NHC confs)
        edits = [ln for ln in changed["diff"].splitlines() if ln[:1] in "+-" and ln[:3] not in ("+++", "---")]
        removed, added = [ln for ln in edits if ln[0] == "-"], [ln for ln in edits if ln[0] == "+"]
        assert removed and len(removed) == len(added), changed["diff"]
        assert all("Generated by hpcconf from demo.yaml." in ln for ln in removed), changed["diff"]
        assert all("Generated by hpcconf from demo-east.yaml." in ln for ln in added), changed["diff"]
    text = hpcconf("review", "--base", "HEAD~1", "--head", "HEAD").output
    assert "clusters/demo-east.yaml (renamed from specs/demo.yaml)" in text
    assert text.count("not what the earlier spec builds") == 1  # nfd-values.yaml only


def test_no_changes_reviews_clean(scenario, monkeypatch):
    repo, _ = scenario
    monkeypatch.chdir(repo)
    result = hpcconf("review", "--base", "main", "--head", "main")
    assert result.exit_code == 0, result.output
    assert "no spec or generated file changed" in result.output


def test_outside_git_and_unknown_revisions_exit_2(scenario, tmp_path, monkeypatch):
    repo, _ = scenario
    monkeypatch.chdir(tmp_path)
    result = hpcconf("review")
    assert result.exit_code == 2 and "not inside a git repository" in result.output
    monkeypatch.chdir(repo)
    result = hpcconf("review", "--base", "no-such-branch")
    assert result.exit_code == 2 and "unknown revision 'no-such-branch'" in result.output
    assert hpcconf("review", "--format", "yaml").exit_code == 2


# -- build --diff: exit code and git apply ------------------------------------------------------------

def test_build_diff_exit_code_and_patch_apply_with_git(scenario, tmp_path, monkeypatch):
    repo, _ = scenario
    clone = tmp_path / "apply"
    git(tmp_path, "clone", "-q", "--branch", "main", str(repo), str(clone))
    monkeypatch.chdir(clone)
    assert hpcconf("build", "specs/demo.yaml", "--diff").exit_code == 0  # no changes
    edit(clone / "specs/demo.yaml", "network_operator: 24.7.0", "network_operator: 25.7.0")
    result = hpcconf("build", "specs/demo.yaml", "--diff")
    assert result.exit_code == 1
    patch = "".join(line + "\n" for line in result.output.splitlines()
                    if not line.startswith(("specs/demo.yaml:", "fix:")))
    (tmp_path / "p.diff").write_text(patch)
    check = subprocess.run([GIT, "-C", str(clone), "apply", "--check", "-v", str(tmp_path / "p.diff")],
                           capture_output=True, text=True)
    assert check.returncode == 0, check.stderr
    assert "out/demo/aks/nicclusterpolicy.yaml" in check.stderr  # a new file applies too


# -- the impact table --------------------------------------------------------------------------------

def test_every_impact_row_has_a_public_source_and_a_known_disruption():
    for row in impact_rows():
        assert row.impact.source.startswith("https://"), row
        assert row.impact.action and row.impact.effect


@pytest.mark.parametrize("path, field, old, new, action, disruptive", [
    ("aks/gpu-operator-values.yaml", "versions.gpu_driver", "550.54.15", "570.86.15", "helm upgrade gpu-operator", "drains"),
    ("aks/gpu-operator-values.yaml", "nccl_env.NCCL_DEBUG", None, "INFO", "helm upgrade gpu-operator", "none"),
    ("aks/provision.sh", "pools[0].count", 4, 2, "az aks nodepool scale --node-count N", "deletes-nodes"),
    ("aks/provision.sh", "pools[3].sku", "a", "b", "create a new node pool, then cordon, drain and delete the old one",
     "replaces-nodes"),
    ("aks/provision.sh", "pools[1] ('cpu' removed)", None, None, "az aks nodepool delete --name POOL", "deletes-nodes"),
    ("azhop/cluster-init/scripts/zz-hpcconf-nccl.sh", None, None, None,
     "re-run cluster-init on every node of the queue (jetpack converge, or restart the nodes)", "none"),
    ("slurm/terraform.tfvars", "pools[0].count", 8, 4, "terraform plan, then terraform apply", "deletes-nodes"),
    ("image/Dockerfile", "versions.nccl", "2.21.5", "2.28.9", "rebuild and push", "none"),
])
def test_impact_rows_pick_the_action_for_the_field(path, field, old, new, action, disruptive):
    found = impact_of(path, field, old, new)
    assert found is not None and found.action.startswith(action) and found.disruptive == disruptive


def test_field_keys_and_migration_boundaries():
    assert field_key("pools[2].count") == "pools[].count" and field_key("pools[1] ('cpu' added)") == "pools[+]"
    assert migration_notes("versions.network_operator", "24.10.0", "25.7.0") == [] or \
        all("crosses" not in n.title for n in migration_notes("versions.network_operator", "24.10.0", "25.7.0"))
    down = migration_notes("versions.network_operator", "25.7.0", "24.7.0")
    assert any("renders the NicClusterPolicy from Helm values again" in n.text for n in down)
    (az,) = migration_notes("versions.az_cli", "2.60.0", "2.75.0")
    assert "--gpu-driver none" in az.text and az.source == "https://github.com/Azure/AKS/issues/4925"
    assert migration_notes("versions.az_cli", "2.73.0", "2.75.0") == []
