"""One walker: `hpcconf lint .`, the pre-commit hook's file names and a file named alone select and
read files the same way, on a repository-shaped tree of our own files (issue 20, item 1)."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
from ruamel.yaml import YAML
from test_lint_repo_tree import JOB, NCP

from hpcconf.lint.context import LintContext
from hpcconf.lint.detect import not_linted_reason, shebang_language
from hpcconf.lint.engine import lint_paths

REPO = Path(__file__).resolve().parents[2]
BIN = Path(sys.executable).parent

MPIJOB_TEMPLATE = """\
apiVersion: kubeflow.org/v2beta1
kind: MPIJob
metadata:
  name: {{ include "nccl-test.fullname" . }}
spec:
  slotsPerWorker: {{ .Values.gpusPerNode }}
  mpiReplicaSpecs:
    Worker:
      replicas: {{ .Values.nodes }}
      template:
        spec:
          containers:
            - name: worker
              image: {{ .Values.image }}
              env:
              {{- range $k, $v := .Values.ncclEnv }}
                - {name: {{ $k }}, value: {{ $v | quote }}}
              {{- end }}
"""
# Python that reads like shell assignments: linted as shell, NCCL_ALGO="Foo" would be an NCCL011 error.
TRAIN_PY = """#!/usr/bin/env python3
import os
NCCL_ALGO="Foo"
TOKEN = os.environ.get("HF_TOKEN")
os.environ["NCCL_ALGO"] = NCCL_ALGO
"""
LAUNCH_SLURM = """#!/bin/bash
#SBATCH --nodes=2
#SBATCH --gpus-per-node=8
export NCCL_ALGO=Foo
TOKEN=$(curl -s http://169.254.169.254/latest/api/token)
srun --mpi=pmix all_reduce_perf -b 8 -e 8G
"""


DOCKERFILES = ("docker/Dockerfile-mpi", "docker/Dockerfile_cuda", "docker/Dockerfile.rocm", "docker/train.Dockerfile",
               "Dockerfile/rccl-tests/ubuntu-22.04", ".github/workflows/docker/Dockerfile.ci")
DOCKERFILE_WITH_TYPO = "# syntax=docker/dockerfile:1\nARG BASE=ubuntu:22.04\nFROM ${BASE}\nENV NCCL_ALGO=Foo\n"


def write_tree(root: Path) -> None:
    def write(rel: str, text: str) -> None:
        path = root / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text, encoding="utf-8")

    # Two deployments side by side (each consistent, different resource names) and a true finding.
    write("clusters/east/job.yaml", JOB.replace("RESOURCE", "mlnxnics"))
    write("clusters/east/policy.yaml", NCP.replace("RESOURCE", "mlnxnics"))
    write("clusters/west/job.yaml", JOB.replace("RESOURCE", "infiniband"))
    write("clusters/west/policy.yaml", NCP.replace("RESOURCE", "infiniband"))
    write("clusters/west/tuning/nccl.conf", "NCCL_ALGO=Foo\n")
    # A Helm chart of our own: metadata, values, templates that are not YAML until rendered.
    write("charts/nccl-test/Chart.yaml", "apiVersion: v2\nname: nccl-test\nversion: 0.2.0\n")
    write("charts/nccl-test/Chart.lock", "dependencies: []\ndigest: sha256:0\ngenerated: '2025-01-01T00:00:00Z'\n")
    write("charts/nccl-test/values.yaml", "image: example.io/nccl:1\nnodes: 2\ngpusPerNode: 8\nncclEnv: {NCCL_DEBUG: WARN}\n")
    write("charts/nccl-test/values-ndv5.yaml", "nodes: 4\n")
    write("charts/nccl-test/templates/mpijob.yaml", MPIJOB_TEMPLATE)
    write("charts/nccl-test/templates/_helpers.tpl", '{{- define "nccl-test.fullname" -}}{{ .Release.Name }}{{- end }}\n')
    write("charts/nccl-test/templates/NOTES.txt", "Run: kubectl logs -l app={{ .Release.Name }}\n")
    # Go-template markup outside a chart, a Jinja file, prose.
    write("deploy/job-template.yaml", MPIJOB_TEMPLATE)
    write("deploy/slurm.conf.j2", "NodeName={{ node }} Gres=gpu:8\n")
    write("docs/README.md", "Set `NCCL_ALGO=Foo` # hpcconf: ignore[NCCL999]\n")
    # Scripts: Python with a #! line (with and without .py), a Slurm script and a bash script without extension.
    write("scripts/train.py", TRAIN_PY)
    write("scripts/train", TRAIN_PY)
    write("scripts/launch.slurm", LAUNCH_SLURM)
    write("scripts/run-nccl", LAUNCH_SLURM.replace("#SBATCH --nodes=2\n#SBATCH --gpus-per-node=8\n", ""))
    # Infra files hpcconf has no rules for, and a hidden directory.
    write("infra/vpc.yaml", "AWSTemplateFormatVersion: '2010-09-09'\nResources:\n  Vpc: {Type: 'AWS::EC2::VPC'}\n")
    write(".github/workflows/ci.yml", "on: push\njobs: {lint: {runs-on: ubuntu-latest, steps: [{run: 'NCCL_ALGO=Foo'}]}}\n")
    # Dockerfiles by every name `docker build -f` is given in real repositories (kubeflow's Dockerfile-mpi,
    # ROCm/MAD's <x>.Dockerfile, OCI's Dockerfile/rccl-tests/<base>, AMD Primus' CI image under .github/);
    # a README and a shell script kept beside them are not Dockerfiles.
    for rel in DOCKERFILES:
        write(rel, DOCKERFILE_WITH_TYPO)
    write("Dockerfile/README", "Build: docker build -f Dockerfile/rccl-tests/ubuntu-22.04 .\nFROM here on, read on\n")
    write("Dockerfile/rccl-tests/build.sh", "#!/bin/bash\ndocker build -f ubuntu-22.04 .\n")
    write(".github/workflows/docker/notes", DOCKERFILE_WITH_TYPO)  # hidden, and not named a Dockerfile
    for script in ("scripts/train", "scripts/run-nccl", "scripts/launch.slurm"):
        os.chmod(root / script, 0o755)


def _key(finding) -> tuple:
    file = finding["file"] if isinstance(finding, dict) else finding.file
    code = finding["code"] if isinstance(finding, dict) else finding.code
    line = finding["line"] if isinstance(finding, dict) else finding.line
    return os.path.normpath(file), line, code


EXPECTED = {("clusters/west/tuning/nccl.conf", 1, "NCCL011"), ("scripts/launch.slurm", 4, "NCCL011"),
            ("scripts/run-nccl", 2, "NCCL011")} | \
    {(rel, 4, code) for rel in DOCKERFILES for code in ("NCCL011", "DKR006")}


def _hook() -> dict:
    return next(h for h in YAML(typ="safe").load((REPO / ".pre-commit-hooks.yaml").read_text()) if h["id"] == "hpcconf-lint")


def _hook_files(root: Path) -> list[str]:
    """What pre-commit passes: every file, filtered by the hook's files/exclude/types (identify's tags)."""
    import re

    from identify.identify import tags_from_path

    hook = _hook()
    files, exclude = re.compile(hook.get("files", "")), re.compile(hook.get("exclude", "^$"))
    names = sorted(p.relative_to(root).as_posix() for p in root.rglob("*") if p.is_file())
    return [n for n in names if files.search(n) and not exclude.search(n)
            and set(hook.get("types", [])) <= tags_from_path(str(root / n))]


def test_lint_dot_and_the_hooks_file_list_give_the_same_findings(tmp_path, monkeypatch):
    write_tree(tmp_path)
    monkeypatch.chdir(tmp_path)
    walked = lint_paths(["."], LintContext())
    named = lint_paths(_hook_files(tmp_path), LintContext())
    assert {_key(f) for f in walked.findings} == EXPECTED
    assert {_key(f) for f in named.findings} == EXPECTED
    assert walked.files_checked == named.files_checked == 14  # 4 manifests, nccl.conf, 3 scripts, 6 Dockerfiles
    skipped = dict(named.skipped)
    assert "python3 script" in skipped["scripts/train"] and "python3 script" in skipped["scripts/train.py"]
    assert "Helm template" in skipped["deploy/job-template.yaml"]
    assert "Helm chart's template" in skipped["charts/nccl-test/templates/mpijob.yaml"]
    assert "chart's metadata" in skipped["charts/nccl-test/Chart.yaml"] and "chart's metadata" in skipped["charts/nccl-test/Chart.lock"]
    assert "Helm values of the chart in nccl-test/" in skipped["charts/nccl-test/values-ndv5.yaml"]
    assert skipped["infra/vpc.yaml"].startswith("not a kind hpcconf lints")
    assert skipped[".github/workflows/ci.yml"] == skipped[".github/workflows/docker/notes"] == "inside a hidden directory"
    assert set(dict(walked.skipped)) >= set(skipped)


def test_a_named_file_that_the_walk_skips_is_skipped_with_a_debug_line(tmp_path, monkeypatch):
    from typer.testing import CliRunner

    from hpcconf.cli import app

    write_tree(tmp_path)
    monkeypatch.chdir(tmp_path)
    done = CliRunner().invoke(app, ["lint", "charts/nccl-test/templates/mpijob.yaml", "scripts/train",
                                    "clusters/west/tuning/nccl.conf", "--verbose"])
    assert done.exit_code == 1
    assert "hpcconf: debug: skipped charts/nccl-test/templates/mpijob.yaml: a Helm chart's template" in done.stderr
    assert "hpcconf: debug: skipped scripts/train: a python3 script (its #! line), not a shell script" in done.stderr
    assert "HPC001" not in done.stdout and "HPC091" not in done.stdout and "scripts/train" not in done.stdout
    assert "clusters/west/tuning/nccl.conf:1:11: error[NCCL011]" in done.stdout


@pytest.mark.skipif(shutil.which("git") is None or not (BIN / "pre-commit").exists(), reason="needs git and pre-commit")
def test_the_real_pre_commit_hook_reports_what_lint_dot_reports(tmp_path):
    """`pre-commit run --all-files` with the manifest's hook (as a local system hook: no package index)."""
    root = tmp_path / "infra"
    write_tree(root)
    env = {**os.environ, "PATH": f"{BIN}{os.pathsep}{os.environ.get('PATH', '')}",
           "PRE_COMMIT_HOME": str(tmp_path / "cache"), "GIT_CONFIG_GLOBAL": os.devnull, "GIT_CONFIG_NOSYSTEM": "1",
           "GIT_AUTHOR_NAME": "t", "GIT_AUTHOR_EMAIL": "t@example.com", "GIT_COMMITTER_NAME": "t",
           "GIT_COMMITTER_EMAIL": "t@example.com"}
    hook = {k: v for k, v in _hook().items() if k in ("id", "name", "entry", "files", "exclude", "types", "require_serial")}
    report = tmp_path / "hook.json"
    hook.update(language="system", args=["--format", "json", "-o", str(report)])
    config = root / ".pre-commit-config.yaml"
    YAML(typ="safe", pure=True).dump({"repos": [{"repo": "local", "hooks": [hook]}]}, config)
    for args in (["git", "init", "-q", "."], ["git", "add", "-A"]):
        assert subprocess.run(args, cwd=root, env=env, capture_output=True).returncode == 0
    done = subprocess.run([str(BIN / "pre-commit"), "run", "--all-files"], cwd=root, env=env, capture_output=True, text=True)
    assert done.returncode == 1 and "Failed" in done.stdout, done.stdout + done.stderr  # the NCCL011 errors
    hooked = {_key(f) for f in json.loads(report.read_text())["findings"]}
    walked = subprocess.run([str(BIN / "hpcconf"), "lint", ".", "--format", "json"], cwd=root, env=env,
                            capture_output=True, text=True)
    assert hooked == {_key(f) for f in json.loads(walked.stdout)["findings"]} == EXPECTED


@pytest.mark.parametrize("line, language", [("#!/bin/bash", "bash"), ("#!/usr/bin/env python3", "python3"),
                                            ("#!/usr/bin/env -S perl -w", "perl"), ("#! /bin/sh -e", "sh"),
                                            ("#!/usr/bin/env VAR=1 node", "node")])
def test_shebang_language(line, language):
    assert shebang_language(line) == language


def test_ansible_variables_in_an_azhop_config_are_not_template_markup():
    """AzHOP's config.yml holds {{anf_home_ip}}-style values (its playbooks fill them): still linted; Helm
    actions in comments (node-feature-discovery's values) do not make a file a template either."""
    assert not_linted_reason("config.yml", "queues: []\nmounts:\n  home: {server: '{{anf_home_ip}}'}\n") is None
    assert not_linted_reason("values.yaml", "worker:\n  #  {{ range .pci.device }}x{{ end }}\n  config: {}\n") is None
    assert not_linted_reason("job.yaml", "metadata:\n  name: {{ .Release.Name }}\n").startswith("a Helm template")
    assert not_linted_reason("job.yaml", "{% if gpu %}\nkind: Job\n{% endif %}\n").startswith("a Jinja template")


def test_build_lints_what_lint_dot_lints_and_skips_what_it_excludes(tmp_path, monkeypatch):
    """A spec whose compiled files have a lint error (HPC200): `build` refuses it as `lint .` reports it;
    once the settings exclude it, `lint .` passes it over and so does build's own lint."""
    from typer.testing import CliRunner

    from hpcconf.cli import app

    shutil.copy(REPO / "tests" / "rules" / "HPC200" / "bad.yaml", tmp_path / "spec.yaml")
    monkeypatch.chdir(tmp_path)
    assert "HPC200" in {f.code for f in lint_paths(["."], LintContext()).findings}
    assert CliRunner().invoke(app, ["build", "spec.yaml"]).exit_code == 1
    (tmp_path / ".hpcconf.toml").write_text('exclude = ["spec.yaml"]\n')
    from hpcconf.settings.config import load_settings

    assert lint_paths(["."], LintContext(config=load_settings().lint)).findings == []
    built = CliRunner().invoke(app, ["build", "spec.yaml"])
    assert built.exit_code == 0 and "HPC200" not in built.output, built.output


def test_a_manifest_named_like_a_dockerfile_is_read_as_the_manifest_it_is():
    """aws-samples/awsome-distributed-training keeps a PyTorchJob as `Dockerfile.llama2-efa`: no FROM, so it
    is not read as a Dockerfile; its content says Kubernetes. A Dockerfile-named file that is neither is skipped."""
    from hpcconf.lint.detect import detect_documents

    manifest = "apiVersion: kubeflow.org/v1\nkind: PyTorchJob\nmetadata: {name: fsdp}\nspec: {}\n"
    assert [d.kind for d in detect_documents("Dockerfile.llama2-efa", manifest)] == ["k8s-manifest"]
    assert detect_documents("Dockerfile.notes", "Build with docker build .\n") == []
    assert [d.kind for d in detect_documents("Dockerfile", "# syntax=docker/dockerfile:1\nfrom ubuntu:22.04\n")] == \
        ["dockerfile"]


def test_a_file_named_with_kind_is_read_as_that_kind_wherever_it_lies(tmp_path, monkeypatch):
    """`--kind dockerfile` on a file in a hidden directory or of a skipped name reads it (HPC091 before)."""
    write_tree(tmp_path)
    (tmp_path / ".cache").mkdir()
    (tmp_path / ".cache" / "image.txt").write_text(DOCKERFILE_WITH_TYPO)
    monkeypatch.chdir(tmp_path)
    found = lint_paths([".cache/image.txt", ".github/workflows/docker/notes"], LintContext(), forced_kind="dockerfile")
    assert {_key(f) for f in found.findings} == {(rel, 4, code) for rel in (".cache/image.txt",
                                                                            ".github/workflows/docker/notes")
                                                 for code in ("NCCL011", "DKR006")}


def test_an_rccl_tests_image_builds_the_tests():
    """DKR006 on OCI's Dockerfile/rccl-tests/<base> (review20y): rccl-tests builds the *_perf binaries for RCCL."""
    from hpcconf.lint.detect import detect_documents
    from hpcconf.lint.engine import lint_documents

    text = DOCKERFILE_WITH_TYPO.replace("NCCL_ALGO=Foo", "NCCL_DEBUG=VERSION") + \
        "RUN git clone https://github.com/ROCm/rccl-tests ./rccl-tests && make -C rccl-tests MPI=1\n"
    docs = detect_documents("Dockerfile/rccl-tests/ubuntu-22.04", text)
    assert [d.kind for d in docs] == ["dockerfile"]
    assert "DKR006" not in {f.code for f in lint_documents(docs, LintContext()).findings}
