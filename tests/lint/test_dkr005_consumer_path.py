"""DKR005 follows the deployment's consumers (review20z, azurehpc aks_ndv4/aks_ndv5): `COPY ndv4-topo.xml .` with the
NHC conf shipped beside it passing /workspace/ndv4-topo.xml is found exactly when the base image's WORKDIR is
/workspace, which the Dockerfile does not show: info, naming the path; with no consumer at all, still a warning."""

from __future__ import annotations

from pathlib import Path

from hpcconf.lint.context import LintContext
from hpcconf.lint.engine import lint_paths

DOCKERFILE = "FROM nvcr.io/nvidia/pytorch:23.03-py3\nCOPY ndv4-topo.xml .\n"
CONF = "* || check_gpu_count 8\n * || check_nccl_allreduce 228.0 10 /workspace/ndv4-topo.xml 8G\n"


def _dkr005(tmp_path: Path, monkeypatch, files: dict[str, str]) -> list[tuple[int, str, str]]:
    for rel, text in files.items():
        (tmp_path / rel).write_text(text)
    monkeypatch.chdir(tmp_path)
    return [(f.line, f.severity.value, f.message) for f in lint_paths(["."], LintContext()).findings
            if f.code == "DKR005"]


def test_a_conf_that_passes_the_path_makes_it_a_question_of_the_base_images_workdir(tmp_path, monkeypatch):
    [(line, severity, message)] = _dkr005(tmp_path, monkeypatch, {"Dockerfile": DOCKERFILE, "nd96asr_v4.conf": CONF})
    assert (line, severity) == (2, "info")
    assert "nd96asr_v4.conf:2 passes /workspace/ndv4-topo.xml" in message and "WORKDIR is /workspace" in message


def test_a_commented_check_passes_nothing(tmp_path, monkeypatch):
    conf = "* || check_gpu_count 8\n# * || check_nccl_allreduce 228.0 10 /workspace/ndv4-topo.xml 8G\n"
    found = _dkr005(tmp_path, monkeypatch, {"Dockerfile": DOCKERFILE, "nd96asr_v4.conf": conf})
    assert [(line, severity) for line, severity, _ in found] == [(2, "warning")]
