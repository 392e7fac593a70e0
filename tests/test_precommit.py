"""The pre-commit hooks, run by the real `pre-commit` tool in a temporary git repository.

The repository's `.pre-commit-hooks.yaml` declares `language: python` (pre-commit installs
hpcconf from the hook repository). That install needs a package index, so the commit test
uses the same hooks as `repo: local` / `language: system` entries that call the hpcconf
already installed next to this Python: the ids, entries, file patterns and flags are read
from `.pre-commit-hooks.yaml`, so the test runs exactly what users get.
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
HOOKS_FILE = REPO / ".pre-commit-hooks.yaml"
BIN = Path(sys.executable).parent


def _tool(name: str) -> str | None:
    found = BIN / name
    return str(found) if found.exists() else shutil.which(name)


PRE_COMMIT, GIT, HPCCONF = _tool("pre-commit"), shutil.which("git"), _tool("hpcconf")
pytestmark = [
    pytest.mark.skipif(PRE_COMMIT is None, reason="pre-commit is not installed (pip install hpcconf[test])"),
    pytest.mark.skipif(GIT is None, reason="git is not on PATH"),
    pytest.mark.skipif(HPCCONF is None, reason="the hpcconf command is not installed (pip install -e .)"),
]
# Keys of a hook definition that describe what runs and on which files; copied verbatim.
COPIED_KEYS = ("id", "name", "entry", "files", "exclude", "types", "pass_filenames", "always_run", "require_serial", "args")


def manifest_hooks() -> list[dict]:
    return list(YAML(typ="safe").load(HOOKS_FILE.read_text()))


def local_config() -> str:
    hooks = []
    for hook in manifest_hooks():
        local = {k: hook[k] for k in COPIED_KEYS if k in hook}
        local["language"] = "system"
        hooks.append(local)
    import io

    out = io.StringIO()
    YAML(typ="safe", pure=True).dump({"repos": [{"repo": "local", "hooks": hooks}]}, out)
    return out.getvalue()


def test_hooks_manifest_is_valid_for_pre_commit():
    done = subprocess.run([PRE_COMMIT, "validate-manifest", str(HOOKS_FILE)], capture_output=True, text=True)
    assert done.returncode == 0, done.stdout + done.stderr
    hooks = {h["id"]: h for h in manifest_hooks()}
    assert set(hooks) == {"hpcconf-lint", "hpcconf-check"}
    assert hooks["hpcconf-lint"]["entry"] == "hpcconf lint"
    assert hooks["hpcconf-check"]["entry"].startswith("hpcconf build --check")
    assert hooks["hpcconf-check"]["pass_filenames"] is False
    assert all(h["language"] == "python" for h in hooks.values())  # installable from the hook repo


class GitRepo:
    def __init__(self, root: Path):
        self.root = root
        self.env = {**os.environ,
                    "PATH": f"{BIN}{os.pathsep}{os.environ.get('PATH', '')}",
                    "PRE_COMMIT_HOME": str(root.parent / "pre-commit-cache"),
                    "GIT_CONFIG_GLOBAL": os.devnull, "GIT_CONFIG_NOSYSTEM": "1",
                    "GIT_AUTHOR_NAME": "t", "GIT_AUTHOR_EMAIL": "t@example.com",
                    "GIT_COMMITTER_NAME": "t", "GIT_COMMITTER_EMAIL": "t@example.com"}

    def run(self, *args: str) -> subprocess.CompletedProcess:
        return subprocess.run(list(args), cwd=self.root, env=self.env, capture_output=True, text=True)

    def commit(self, message: str) -> subprocess.CompletedProcess:
        assert self.run(GIT, "add", "-A").returncode == 0
        return self.run(GIT, "commit", "-m", message)

    def commits(self) -> int:
        done = self.run(GIT, "rev-list", "--count", "HEAD")
        return int(done.stdout.strip()) if done.returncode == 0 else 0


@pytest.fixture
def infra_repo(tmp_path):
    root = tmp_path / "infra"
    (root / "specs").mkdir(parents=True)
    repo = GitRepo(root)
    assert repo.run(GIT, "init", "-q", ".").returncode == 0
    # The spec `hpcconf init` writes builds and lints clean, so the first commit must pass.
    scaffolded = repo.run(HPCCONF, "init", "--sku", "Standard_ND96amsr_A100_v4", "--nodes", "2",
                          "--platform", "aks,slurm", "--name", "infra", "-o", "specs/cluster.yaml")
    assert scaffolded.returncode == 0, scaffolded.stdout + scaffolded.stderr
    (root / ".pre-commit-config.yaml").write_text(local_config())
    validated = repo.run(PRE_COMMIT, "validate-config", ".pre-commit-config.yaml")
    assert validated.returncode == 0, validated.stdout + validated.stderr
    built = repo.run(HPCCONF, "build", "specs/cluster.yaml")
    assert built.returncode == 0, built.stdout + built.stderr
    installed = repo.run(PRE_COMMIT, "install")
    assert installed.returncode == 0, installed.stdout + installed.stderr
    return repo


def test_a_clean_repo_commits(infra_repo):
    done = infra_repo.commit("cluster spec and generated files")
    output = done.stdout + done.stderr
    assert done.returncode == 0, output
    assert "hpcconf lint" in output and "hpcconf build --check" in output  # both hooks ran ...
    assert output.count("Passed") == 2 and infra_repo.commits() == 1      # ... and passed


def test_a_stale_artifact_fails_the_commit_with_the_fix(infra_repo):
    assert infra_repo.commit("initial").returncode == 0
    spec = infra_repo.root / "specs" / "cluster.yaml"
    spec.write_text(spec.read_text().replace("count: 2 ", "count: 3 ", 1))
    done = infra_repo.commit("more nodes, forgot to rebuild")
    output = done.stdout + done.stderr
    assert done.returncode != 0, output
    assert "hpcconf build --check" in output and "Failed" in output
    assert "specs/cluster.yaml: stale: specs/out/" in output
    assert "fix: hpcconf build specs/cluster.yaml\n" in output  # its default output root: no --out
    assert infra_repo.commits() == 1  # nothing was committed
    # Following the printed fix makes the commit pass.
    assert infra_repo.run(HPCCONF, "build", "specs/cluster.yaml").returncode == 0
    again = infra_repo.commit("more nodes")
    assert again.returncode == 0, again.stdout + again.stderr
    assert infra_repo.commits() == 2


def test_a_hand_edited_artifact_fails_the_commit(infra_repo):
    assert infra_repo.commit("initial").returncode == 0
    conf = sorted((infra_repo.root / "specs" / "out").rglob("nccl.conf"))[0]
    conf.write_text(conf.read_text() + "NCCL_DEBUG=INFO\n")
    done = infra_repo.commit("tweak nccl.conf by hand")
    output = done.stdout + done.stderr
    assert done.returncode != 0
    assert "edited by hand:" in output and "nccl.conf" in output


def test_a_lint_error_fails_the_commit_with_a_readable_message(infra_repo):
    (infra_repo.root / "tuning").mkdir()
    (infra_repo.root / "tuning" / "nccl.conf").write_text("NCCL_ALGO=Foo\n")
    done = infra_repo.commit("hand-written tuning")
    output = done.stdout + done.stderr
    assert done.returncode != 0, output
    assert "hpcconf lint" in output and "Failed" in output
    assert "tuning/nccl.conf:1:11: error[NCCL011]" in output
    assert infra_repo.commits() == 0


def test_config_excludes_apply_to_files_pre_commit_passes(infra_repo):
    (infra_repo.root / "tuning").mkdir()
    (infra_repo.root / "tuning" / "nccl.conf").write_text("NCCL_ALGO=Foo\n")
    (infra_repo.root / ".hpcconf.toml").write_text('exclude = ["tuning/**"]\n')
    done = infra_repo.commit("vendored tuning file, excluded from lint")
    assert done.returncode == 0, done.stdout + done.stderr


def hook_files(hook: dict, root: Path, names: list[str]) -> list[str]:
    """The file names pre-commit passes the hook: its `files`/`exclude` patterns and `types` tags
    (identify, the library pre-commit tags files with)."""
    import re

    from identify.identify import tags_from_path

    files, exclude = re.compile(hook.get("files", "")), re.compile(hook.get("exclude", "^$"))
    types = set(hook.get("types", []))
    return [n for n in names if files.search(n) and not exclude.search(n) and types <= tags_from_path(str(root / n))]


def test_the_lint_hook_passes_every_generated_text_file_and_lint_decides(tmp_path):
    """pre-commit passes every text file; lint reads the kinds it knows and passes over the rest with a
    reason (--verbose), never with an unrecognised-file warning in a commit."""
    import json

    hook = next(h for h in manifest_hooks() if h["id"] == "hpcconf-lint")
    specs = []
    for sku, platforms in (("Standard_ND96amsr_A100_v4", "aks,azhop,slurm"), ("h100-80gb-sxm-ib.8x", "slurm")):
        spec = tmp_path / f"{len(specs)}.yaml"
        done = subprocess.run([HPCCONF, "init", "--sku", sku, "--platform", platforms, "-o", str(spec)], capture_output=True)
        assert done.returncode == 0
        specs.append(str(spec))
    assert subprocess.run([HPCCONF, "build", *specs, "--out", str(tmp_path / "out"), "-q"], capture_output=True).returncode == 0
    generated = [p.relative_to(tmp_path).as_posix() for p in sorted((tmp_path / "out").rglob("*")) if p.is_file()]
    passed = hook_files(hook, tmp_path, generated)
    assert passed == generated  # all text
    done = subprocess.run([HPCCONF, "lint", *passed, "--format", "json", "--verbose"], cwd=tmp_path,
                          capture_output=True, text=True)
    findings = json.loads(done.stdout)["findings"]
    assert [f for f in findings if f["name"] == "unrecognised-file"] == []
    skipped = sorted({Path(line.split("debug: skipped ", 1)[1].split(": ", 1)[0]).suffix
                      for line in done.stderr.splitlines() if "debug: skipped " in line})
    # The manifest, which no lint rule reads (NHC confs, Crusoe's tfvars and slurm.conf lines are linted).
    assert skipped == [".json"], done.stderr
    assert json.loads(done.stdout)["summary"]["files"] >= 15


def _yaml_blocks(path: Path, marker: str) -> list[str]:
    text = path.read_text(encoding="utf-8")
    blocks = text.split("```yaml\n")[1:]
    return [b.split("```", 1)[0] for b in blocks if marker in b.split("```", 1)[0]]


def _resolves(rev: str) -> bool:
    """A rev users can fetch from this repository: its branch, a commit hash, or one of its tags
    (it has none yet, so `v0.2.0` failed: `pathspec 'v0.2.0' did not match`)."""
    tags = subprocess.run([GIT, "tag"], cwd=REPO, capture_output=True, text=True).stdout.split()
    return rev == "main" or bool(re.fullmatch(r"[0-9a-f]{40}", rev)) or rev in tags


@pytest.mark.parametrize("doc", ["README.md", "docs/workflow.md"])
def test_documented_hook_configs_validate_and_install_without_a_package_index_entry(doc, tmp_path):
    """Every pre-commit snippet in the docs is a valid config; the ones that install hpcconf get it
    from git (the hook repository, or `additional_dependencies` with a git URL), at a rev that resolves.
    tests/test_readme_snippets.py runs the README's with pre-commit against a clone."""
    from packaging.requirements import Requirement

    configs = _yaml_blocks(REPO / doc, "repos:")
    assert configs, f"no pre-commit snippet in {doc}"
    for index, block in enumerate(configs):
        config = tmp_path / f"config{index}.yaml"
        config.write_text(block)
        done = subprocess.run([PRE_COMMIT, "validate-config", str(config)], capture_output=True, text=True)
        assert done.returncode == 0, block + done.stdout + done.stderr
        for repo in YAML(typ="safe").load(block)["repos"]:
            if repo["repo"] != "local":
                assert repo["repo"].startswith("https://") and _resolves(repo["rev"]), repo
            for hook in repo.get("hooks", []):
                if hook.get("language") == "python":
                    (dependency,) = hook["additional_dependencies"]
                    requirement = Requirement(dependency)
                    assert requirement.name == "hpcconf" and requirement.url.startswith("git+https://")
                    assert _resolves(requirement.url.rsplit("@", 1)[1]), requirement.url


def test_ci_snippets_install_hpcconf_from_git():
    for doc in ("README.md", "docs/workflow.md"):
        installs = [line for line in (REPO / doc).read_text().splitlines() if "pip install" in line and "hpcconf" in line
                    and "- run:" in line]
        pins = [re.search(r'"hpcconf @ git\+https://github.com/hpcconf/hpcconf@([^"]+)"', line) for line in installs]
        assert installs and all(pin and _resolves(pin.group(1)) for pin in pins), installs
