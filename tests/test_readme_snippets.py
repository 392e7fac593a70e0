"""The README's pre-commit and CI snippets, run as written with the real `pre-commit` and `pip`.

The snippets install hpcconf from its git repository. The tests point them at a local clone of
this checkout (the working tree committed on a `main` branch, so what is tested is what is here)
and change nothing else: the `rev`, the hook ids, the pip requirement and the CI commands are the
README's. Offline: the clone is a local path, and pip installs from a wheelhouse of hpcconf's
dependencies built once per session (`PIP_NO_INDEX`), so only building that wheelhouse needs the
package index pip is configured with; without one the tests skip and say so.
"""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
from ruamel.yaml import YAML

REPO = Path(__file__).resolve().parents[1]
README = REPO / "README.md"
URL = "https://github.com/hpcconf/hpcconf"
BIN = Path(sys.executable).parent
GIT = shutil.which("git")
PRE_COMMIT = str(BIN / "pre-commit") if (BIN / "pre-commit").exists() else shutil.which("pre-commit")
HPCCONF = str(BIN / "hpcconf") if (BIN / "hpcconf").exists() else shutil.which("hpcconf")
pytestmark = [
    pytest.mark.skipif(GIT is None, reason="git is not on PATH"),
    pytest.mark.skipif(PRE_COMMIT is None, reason="pre-commit is not installed (pip install hpcconf[test])"),
    pytest.mark.skipif(HPCCONF is None, reason="the hpcconf command is not installed (pip install -e .)"),
]
GIT_ENV = {"GIT_CONFIG_GLOBAL": os.devnull, "GIT_CONFIG_NOSYSTEM": "1", "GIT_AUTHOR_NAME": "t",
           "GIT_AUTHOR_EMAIL": "t@example.com", "GIT_COMMITTER_NAME": "t", "GIT_COMMITTER_EMAIL": "t@example.com"}


def _run(args: list[str], cwd: Path, env: dict | None = None, shell: bool = False) -> subprocess.CompletedProcess:
    full_env = {**os.environ, "PATH": f"{BIN}{os.pathsep}{os.environ.get('PATH', '')}", **GIT_ENV, **(env or {})}
    return subprocess.run(args if not shell else args[0], cwd=cwd, env=full_env, capture_output=True, text=True,
                          shell=shell, executable="/bin/bash" if shell else None)


def _ok(done: subprocess.CompletedProcess) -> str:
    assert done.returncode == 0, f"{done.args}\n{done.stdout}\n{done.stderr}"
    return done.stdout


def readme_blocks(marker: str) -> list[str]:
    blocks = [b.split("```", 1)[0] for b in README.read_text(encoding="utf-8").split("```yaml\n")[1:]]
    return [b for b in blocks if marker in b]


def pre_commit_snippet() -> str:
    (block,) = readme_blocks(".pre-commit-config.yaml")
    return block


def ci_snippet() -> str:
    (block,) = readme_blocks(".github/workflows/")
    return block


@pytest.fixture(scope="module")
def clone(tmp_path_factory) -> Path:
    """A local clone whose `main` is this working tree (tracked and untracked, not ignored, files)."""
    root = tmp_path_factory.mktemp("hpcconf-clone") / "hpcconf"
    _ok(_run([GIT, "init", "-q", "-b", "main", str(root)], REPO))
    listed = _ok(_run([GIT, "ls-files", "-z", "--cached", "--others", "--exclude-standard"], REPO)).split("\0")
    for name in filter(None, listed):
        source = REPO / name
        if source.is_file():
            (root / name).parent.mkdir(parents=True, exist_ok=True)
            shutil.copy2(source, root / name)
    _ok(_run([GIT, "add", "-A"], root))
    _ok(_run([GIT, "commit", "-qm", "snapshot"], root))
    return root


@pytest.fixture(scope="module")
def wheelhouse(clone, tmp_path_factory) -> Path:
    """hpcconf's dependencies and build backends (setuptools: pre-commit's placeholder package for `repo: local`)."""
    house = tmp_path_factory.mktemp("wheelhouse")
    done = _run([sys.executable, "-m", "pip", "wheel", "-q", "-w", str(house), str(clone), "hatchling", "setuptools"], clone)
    if done.returncode != 0:
        pytest.skip(f"cannot build the wheelhouse (no package index?): {done.stderr.strip().splitlines()[-1:]}")
    return house


def _offline(wheelhouse: Path, home: Path) -> dict:
    return {"PIP_NO_INDEX": "1", "PIP_FIND_LINKS": str(wheelhouse), "PRE_COMMIT_HOME": str(home)}


@pytest.fixture
def infra(tmp_path) -> Path:
    """An infra repository with a scaffolded spec and its built outputs, committed on main."""
    root = tmp_path / "infra"
    _ok(_run([GIT, "init", "-q", "-b", "main", str(root)], tmp_path))
    _ok(_run([HPCCONF, "init", "--sku", "Standard_ND96amsr_A100_v4", "-o", "specs/cluster.yaml"], root))
    _ok(_run([HPCCONF, "build", "specs/cluster.yaml", "-q"], root))
    return root


def test_the_snippets_name_no_tag_the_repository_lacks():
    """`rev: v0.2.0` failed for every user (`pathspec 'v0.2.0' did not match`): a rev is a branch of
    this repository, a commit hash, or a tag that exists."""
    tags = set(_ok(_run([GIT, "tag"], REPO)).split())
    config = YAML(typ="safe").load(pre_commit_snippet())
    commented = re.findall(r"hpcconf/hpcconf@([\w.\-]+)", pre_commit_snippet() + ci_snippet())
    for rev in [repo["rev"] for repo in config["repos"]] + commented:
        assert rev == "main" or re.fullmatch(r"[0-9a-f]{40}", rev) or rev in tags, rev
    assert "autoupdate --freeze" in pre_commit_snippet()  # how to turn `main` into a pin


def test_the_pre_commit_snippet_runs_as_written_and_freezes_to_a_commit(clone, wheelhouse, infra, tmp_path):
    config = infra / ".pre-commit-config.yaml"
    config.write_text(pre_commit_snippet().replace(URL, str(clone)))
    env = _offline(wheelhouse, tmp_path / "pre-commit-home")
    _ok(_run([GIT, "add", "-A"], infra))
    done = _run([PRE_COMMIT, "run", "--all-files"], infra, env)
    assert done.returncode == 0, done.stdout + done.stderr
    assert re.search(r"hpcconf lint\.+Passed", done.stdout) and re.search(r"hpcconf build --check\.+Passed", done.stdout)
    # What the README says turns `main` into a pin: a commit hash, the clone's newest.
    _ok(_run([PRE_COMMIT, "autoupdate", "--freeze"], infra, env))
    (repo,) = YAML(typ="safe").load(config.read_text())["repos"]
    assert repo["rev"] == _ok(_run([GIT, "rev-parse", "main"], clone)).strip()
    frozen = _run([PRE_COMMIT, "run", "--all-files"], infra, env)
    assert frozen.returncode == 0 and "mutable reference" not in frozen.stdout + frozen.stderr, frozen.stdout


def test_the_commented_repo_local_alternative_runs(clone, wheelhouse, infra, tmp_path):
    commented = [line[1:] for line in pre_commit_snippet().splitlines() if line.startswith("#  ")]
    assert commented and commented[0].strip() == "- repo: local"
    config = "repos:\n" + "\n".join(commented).replace(f"git+{URL}", f"git+file://{clone}") + "\n"
    (infra / ".pre-commit-config.yaml").write_text(config)
    _ok(_run([GIT, "add", "-A"], infra))
    done = _run([PRE_COMMIT, "run", "--all-files"], infra, _offline(wheelhouse, tmp_path / "pre-commit-home"))
    assert done.returncode == 0 and re.search(r"hpcconf build --check\.+Passed", done.stdout), done.stdout + done.stderr


def test_the_ci_snippet_steps_run_as_written(clone, wheelhouse, infra, tmp_path):
    """Each `run:` of the workflow, in order, as the job would on a pull request: the install resolves
    (pip, a dry run from the clone), and the hpcconf steps pass on a clean repository."""
    steps = YAML(typ="safe").load(ci_snippet())["jobs"]["hpcconf"]["steps"]
    runs = [step["run"] for step in steps if "run" in step]
    assert runs[0].startswith("pip install ") and len(runs) >= 4
    _ok(_run([GIT, "add", "-A"], infra))
    _ok(_run([GIT, "commit", "-qm", "cluster"], infra))
    _ok(_run([GIT, "remote", "add", "origin", str(infra)], infra))
    _ok(_run([GIT, "fetch", "-q", "origin"], infra))  # what checkout's fetch-depth: 0 leaves: origin/main
    env = {"GITHUB_STEP_SUMMARY": str(tmp_path / "summary.md"), **_offline(wheelhouse, tmp_path / "home")}
    # A fresh environment's pip, as setup-python gives (virtualenv, which pre-commit brings, bundles a current one).
    _ok(_run([sys.executable, "-m", "virtualenv", "-q", str(tmp_path / "venv")], tmp_path))
    install = runs[0].replace(f"git+{URL}", f"git+file://{clone}").replace("pip install", "pip install --dry-run", 1)
    done = _run([f"{tmp_path / 'venv' / 'bin' / 'python'} -m {install}"], infra, env, shell=True)
    assert done.returncode == 0 and "Would install" in done.stdout and "hpcconf-" in done.stdout, done.stdout + done.stderr
    for command in runs[1:]:
        command = command.replace("${{ github.base_ref }}", "main")  # what Actions substitutes on a pull request
        done = _run([command], infra, env, shell=True)
        assert done.returncode == 0, command + "\n" + done.stdout + done.stderr
    assert "hpcconf review" in (tmp_path / "summary.md").read_text()
    assert (infra / "hpcconf.sarif").is_file()
