"""A file from a pull request never makes `hpcconf build` delete, overwrite or read outside its directory.

The output directory (its manifest, its links, its files' bytes) is as untrusted as the spec:
these tests plant what a hostile or careless change could commit and check the build refuses,
located, with nothing touched outside (and nothing changed inside).
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
from typer.testing import CliRunner

from hpcconf.cli import app

runner = CliRunner()
SPEC = "specs/aks.yaml"


def hpcconf(*args: str):
    return runner.invoke(app, list(args))


def snapshot(root: Path) -> dict[str, bytes]:
    return {p.relative_to(root).as_posix(): p.read_bytes() for p in sorted(root.rglob("*"))
            if p.is_file() and not p.is_symlink()}


@pytest.fixture
def repo(tmp_path, monkeypatch):
    result = hpcconf("init", "--sku", "Standard_ND96amsr_A100_v4", "--nodes", "2", "--platform", "aks,slurm",
                     "--name", "demo", "-o", str(tmp_path / SPEC))
    assert result.exit_code == 0, result.output
    (tmp_path / ".hpcconf.toml").write_text('out = "out"\n')  # the repository keeps out/ at its root
    monkeypatch.chdir(tmp_path)
    result = hpcconf("build", SPEC, "-q")
    assert result.exit_code == 0, result.output
    return tmp_path


def manifest_of(repo: Path) -> Path:
    return repo / "out" / "demo" / ".hpcconf-manifest.json"


@pytest.mark.parametrize("planted", ["../../victim.txt", "../victim.txt", "/ABS/victim.txt", "a/../../victim.txt",
                                     "./x", "a//b", "a\\..\\..\\victim.txt", "x\u0000y"])
def test_a_manifest_path_outside_the_directory_is_refused_and_nothing_is_deleted(repo, planted):
    victim = repo / "victim.txt"
    victim.write_text("keep me")
    planted = planted.replace("/ABS", str(repo))
    data = json.loads(manifest_of(repo).read_text())
    data["files"][planted] = {"sha256": "0" * 64, "kind": "x", "target": "aks"}
    manifest_of(repo).write_text(json.dumps(data))
    before = snapshot(repo)
    for args in ([], ["--force"], ["--check"]):
        result = hpcconf("build", SPEC, *args)
        assert result.exit_code == 2, result.output
        assert ".hpcconf-manifest.json" in result.output and "Traceback" not in result.output
    assert victim.read_text() == "keep me"
    assert snapshot(repo) == before


@pytest.mark.parametrize("content, where", [
    ("[1, 2]", "(top level)"), ('{"files": []}', "format"), ('{"generator": "hpcconf", "spec": "s", "files": {"a": 1}}', '["files"]["a"]'),
    ('{"generator": "hpcconf", "spec": "s", "files": {"a": {"sha256": "x", "kind": "k", "target": "t"}}}', "sha256"),
    ("{not json", ":1:2:"), ("[" * 100000, "manifest"), (b"\xff\xfe{}", ":1:1:")])
def test_a_manifest_of_the_wrong_shape_is_a_located_error_not_a_crash(repo, content, where):
    path = manifest_of(repo)
    path.write_bytes(content if isinstance(content, bytes) else content.encode())
    result = hpcconf("build", SPEC)
    assert result.exit_code == 2, result.output
    assert str(path.relative_to(repo)) in result.output and where in result.output, result.output


def test_a_symlinked_cluster_directory_is_refused(repo, tmp_path_factory):
    elsewhere = tmp_path_factory.mktemp("elsewhere")
    out = repo / "out" / "demo"
    os.rename(out, elsewhere / "demo")
    out.symlink_to(elsewhere / "demo")
    (elsewhere / "demo" / "aks" / "volcano-job.yaml").write_text("changed\n")
    before = snapshot(elsewhere)
    for args in (["--force"], ["--check"]):
        result = hpcconf("build", SPEC, *args)
        assert result.exit_code == 2 and "symbolic link" in result.output and "out/demo" in result.output, result.output
    assert snapshot(elsewhere) == before


def test_a_symlinked_subdirectory_is_refused(repo, tmp_path_factory):
    elsewhere = tmp_path_factory.mktemp("elsewhere")
    aks = repo / "out" / "demo" / "aks"
    for file in aks.iterdir():
        file.unlink()
    aks.rmdir()
    aks.symlink_to(elsewhere)
    result = hpcconf("build", SPEC, "--force")
    assert result.exit_code == 2 and "out/demo/aks: is a symbolic link" in result.output, result.output
    assert list(elsewhere.iterdir()) == []


def test_a_symlinked_file_is_refused_and_its_target_untouched(repo, tmp_path):
    victim = tmp_path / "victim.txt"
    victim.write_text("keep me")
    conf = repo / "out" / "demo" / "nccl" / "gpu" / "nccl.conf"
    conf.unlink()
    conf.symlink_to(victim)
    result = hpcconf("build", SPEC, "--force")
    assert result.exit_code == 2 and "nccl.conf: is a symbolic link" in result.output, result.output
    assert victim.read_text() == "keep me"


def test_a_latin1_hand_edit_is_protected_like_a_utf8_one(repo):
    conf = repo / "out" / "demo" / "nccl" / "gpu" / "nccl.conf"
    conf.write_bytes(conf.read_bytes() + "# réglé à la main\n".encode("latin-1"))
    edited = conf.read_bytes()
    result = hpcconf("build", SPEC)
    assert result.exit_code == 1 and "not UTF-8" in result.output and "refusing to overwrite" in result.output, result.output
    assert conf.read_bytes() == edited
    assert hpcconf("build", SPEC, "--check").exit_code == 1
    assert hpcconf("build", SPEC, "--force").exit_code == 0
    assert "réglé".encode("latin-1") not in conf.read_bytes()


@pytest.mark.parametrize("rel", ["nccl/gpu/nccl.conf", "slurm/gpu/nccl-all_reduce.sbatch", "aks/provision.sh"])
def test_check_compares_bytes_so_a_crlf_conversion_is_not_up_to_date(repo, rel):
    path = repo / "out" / "demo" / rel
    if not path.exists():  # the sbatch's name follows the collective; find it
        path = next((repo / "out" / "demo").glob(rel.rsplit("/", 1)[0] + "/*.sbatch"))
    path.write_bytes(path.read_bytes().replace(b"\n", b"\r\n"))
    result = hpcconf("build", SPEC, "--check")
    assert result.exit_code == 1 and "CRLF" in result.output, result.output


def test_an_unreadable_output_file_stops_the_build_naming_it(repo, monkeypatch):
    """cli.main turns the OSError into exit 2 with the path (tested for lint's HPC000 in the lint tests)."""
    from hpcconf import output_dir

    real_open = os.open

    def denied(path, flags, *args):
        if str(path).endswith("nccl.conf"):
            raise PermissionError(13, "Permission denied", str(path))
        return real_open(path, flags, *args)

    monkeypatch.setattr(output_dir.os, "open", denied)
    result = hpcconf("build", SPEC, "--check")
    assert isinstance(result.exception, PermissionError) and result.exception.filename.endswith("nccl.conf")


def _cli(repo: Path, *args: str, env: dict | None = None, **kw) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "hpcconf.cli", *args], cwd=repo, capture_output=True, text=True,
                          env={**os.environ, **(env or {})}, **kw)


@pytest.mark.parametrize("step", ["copied", "staged", "exchanged", "done"])
def test_a_build_killed_at_any_step_leaves_the_previous_or_the_new_output(repo, step):
    out = repo / "out" / "demo"
    before = snapshot(out)
    spec = repo / SPEC
    spec.write_text(spec.read_text().replace("count: 2", "count: 3"))
    killed = _cli(repo, "build", SPEC, "-q", env={"HPCCONF_TEST_CRASH_AT": step})
    assert killed.returncode == -9, killed.stderr
    after = snapshot(out)
    finished = _cli(repo, "build", SPEC, "-q")
    assert finished.returncode == 0, finished.stderr
    assert after in (before, snapshot(out)), "a mix of the previous and the new output"
    assert sorted(p.name for p in (repo / "out").iterdir()) == ["demo"]  # staging leftovers cleaned up


@pytest.mark.parametrize("step", ["moved-old", "moved-new"])
def test_without_renameat2_a_kill_between_the_renames_is_recovered(repo, step, monkeypatch):
    from hpcconf import output_dir
    from hpcconf.artifacts import Artifact

    monkeypatch.setattr(output_dir, "_rename_exchange", lambda a, b: False)
    out = repo / "out" / "demo"
    before = snapshot(out)
    monkeypatch.setattr(output_dir, "_crash_point", lambda at: (_ for _ in ()).throw(KeyboardInterrupt) if at == step else None)
    arts = [Artifact("x.txt", "x\n", "k", "t")]
    with pytest.raises(KeyboardInterrupt):
        output_dir.write_artifacts(out, arts, output_dir.manifest_text(arts, "s", "hpcconf"))
    monkeypatch.setattr(output_dir, "_crash_point", lambda at: None)
    output_dir.recover(out)
    new = {"x.txt": b"x\n", ".hpcconf-manifest.json": output_dir.manifest_text(arts, "s", "hpcconf").encode()}
    assert snapshot(out) == (before if step == "moved-old" else new)
    assert sorted(p.name for p in (repo / "out").iterdir()) == ["demo"]


def test_concurrent_builds_into_one_directory_never_interleave(repo):
    spec = repo / SPEC
    other = repo / "specs" / "three.yaml"
    other.write_text(spec.read_text().replace("count: 2", "count: 3"))
    procs = [subprocess.Popen([sys.executable, "-m", "hpcconf.cli", "build", str(s), "-q", "--force"], cwd=repo,
                              stdout=subprocess.PIPE, stderr=subprocess.PIPE)
             for s in (SPEC, "specs/three.yaml") * 3]
    # Two specs with one metadata.name: whichever builds first owns out/demo/ (its manifest names it); every
    # build of the other spec refuses (exit 2) under the same lock, so the tree is one whole build, never a mix.
    winners = set()
    for proc, spec_arg in zip(procs, (SPEC, "specs/three.yaml") * 3):
        code = proc.wait(timeout=120)
        stderr = proc.stderr.read().decode() if proc.stderr else ""
        assert code in (0, 2), stderr
        if code == 0:
            winners.add(spec_arg)
        else:
            assert "has the same metadata.name 'demo'" in stderr, stderr
    assert len(winners) == 1, winners
    checks = [_cli(repo, "build", s, "--check") for s in (SPEC, "specs/three.yaml")]
    assert sorted(c.returncode for c in checks) == [0, 1], [c.stdout for c in checks]  # one whole build, not a mix
