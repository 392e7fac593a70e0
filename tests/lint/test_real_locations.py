"""SARIF and GitHub annotations name real repository paths (issue: locations): a finding in an artifact
compiled from a spec points at the committed copy under the output root when it holds that line, else
at the spec entry that produced the artifact; files given directly keep their path."""

from __future__ import annotations

import dataclasses
import json
import shutil
from pathlib import Path

import jsonschema
import pytest
from typer.testing import CliRunner

from hpcconf.cli import app
from hpcconf.diagnostics import Diagnostic, Severity
from hpcconf.lint.context import LintContext
from hpcconf.lint.engine import LintResult, lint_build
from hpcconf.lint.formats import render_github, render_sarif
from hpcconf.lint.locations import real_location
from hpcconf.pipeline import compile_spec
from hpcconf.settings.config import load_settings

REPO = Path(__file__).resolve().parents[2]


def _sarif_schema() -> dict:
    """The SARIF 2.1.0 structure test_lint_formats.py checks (tests are not a package: load it by path)."""
    import importlib.util

    spec = importlib.util.spec_from_file_location("lint_formats", Path(__file__).with_name("test_lint_formats.py"))
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module.SARIF_MINIMAL_SCHEMA


SARIF_MINIMAL_SCHEMA = _sarif_schema()
runner = CliRunner()


@pytest.fixture
def project(tmp_path, monkeypatch):
    """A repository with a spec (a pool `ndmv4`, platform aks) and `out = "gen"` in its settings."""
    shutil.copy(REPO / "examples" / "ndmv4-aks-current.yaml", tmp_path / "cluster.yaml")
    (tmp_path / ".hpcconf.toml").write_text('out = "gen"\n', encoding="utf-8")
    monkeypatch.chdir(tmp_path)
    return tmp_path


def _linted() -> LintResult:
    ctx = LintContext(config=load_settings().lint)
    return lint_build(compile_spec(Path("cluster.yaml")), ctx)


def _finding_in(result: LintResult, artifact: str, needle: str) -> Diagnostic:
    """A finding on the first line of ``artifact`` that contains ``needle``, as a rule would report it."""
    doc = next(d for d in result.documents if d.path == f"cluster.yaml -> {artifact}")
    line = next(n for n, text in enumerate(doc.lines, start=1) if needle in text)
    return Diagnostic(code="DKR002", name="x", message="m", severity=Severity.WARNING, file=doc.path, line=line,
                      column=3, end_line=line, end_column=9)


def _spec_line(text: str) -> int:
    return next(n for n, line in enumerate(Path("cluster.yaml").read_text().splitlines(), start=1) if line.startswith(text))


def test_a_committed_copy_is_named_with_its_own_line(project):
    assert runner.invoke(app, ["build", "cluster.yaml", "-q"]).exit_code == 0
    result = _linted()
    finding = _finding_in(result, "image/Dockerfile", "apt-get")
    committed = project / "gen" / "ndmv4-aks-current" / "image" / "Dockerfile"
    assert real_location(finding, result) == dataclasses.replace(real_location(finding, result), file=
                                                                 "gen/ndmv4-aks-current/image/Dockerfile", line=finding.line)
    # A hand-edited copy whose line moved down is matched by its text.
    committed.write_text("# edited\n# by hand\n" + committed.read_text(encoding="utf-8"), encoding="utf-8")
    moved = real_location(finding, result)
    assert (moved.file, moved.line, moved.column, moved.end_line) == (
        "gen/ndmv4-aks-current/image/Dockerfile", finding.line + 2, 3, finding.line + 2)
    assert moved.note == ""


def test_without_a_committed_copy_the_spec_entry_that_produced_it_is_named(project):
    result = _linted()
    image = real_location(_finding_in(result, "image/Dockerfile", "apt-get"), result)
    assert (image.file, image.line) == ("cluster.yaml", _spec_line("test_image:"))
    assert image.note.startswith(" (generated as image/Dockerfile:")
    aks_doc = next(d for d in result.documents if d.path.startswith("cluster.yaml -> aks/"))
    aks = real_location(Diagnostic(code="X", message="m", file=aks_doc.path, line=1), result)
    assert (aks.file, aks.line) == ("cluster.yaml", _spec_line("aks:"))


def test_a_stale_copy_without_the_line_falls_back_to_the_spec(project):
    assert runner.invoke(app, ["build", "cluster.yaml", "-q"]).exit_code == 0
    result = _linted()
    finding = _finding_in(result, "image/Dockerfile", "apt-get")
    (project / "gen" / "ndmv4-aks-current" / "image" / "Dockerfile").write_text("FROM scratch\n", encoding="utf-8")
    assert real_location(finding, result).file == "cluster.yaml"


def test_sarif_and_github_name_only_real_paths(project):
    assert runner.invoke(app, ["build", "cluster.yaml", "-q"]).exit_code == 0
    result = _linted()
    findings = [_finding_in(result, "image/Dockerfile", "apt-get"),
                Diagnostic(code="X", message="m", file="cluster.yaml -> aks/never-built.yaml", line=4)]
    result = dataclasses.replace(result, findings=findings)
    log = json.loads(render_sarif(result))
    jsonschema.validate(log, SARIF_MINIMAL_SCHEMA)
    uris = [r["locations"][0]["physicalLocation"]["artifactLocation"]["uri"] for r in log["runs"][0]["results"]]
    assert uris == ["gen/ndmv4-aks-current/image/Dockerfile", "cluster.yaml"]
    assert all(Path(uri).is_file() for uri in uris)
    lines = render_github(result).splitlines()
    assert lines[0].startswith(f"::warning file=gen/ndmv4-aks-current/image/Dockerfile,line={findings[0].line},col=3,")
    assert lines[1].startswith("::error file=cluster.yaml,line=1,") and "(generated as aks/never-built.yaml:4)" in lines[1]


def test_lint_of_a_repository_with_a_spec_gives_real_paths_end_to_end(project):
    """`hpcconf lint . --format sarif` from the CLI: every uri exists in the checkout."""
    (project / "cluster.yaml").write_text((project / "cluster.yaml").read_text() + "nccl_env:\n  NCCL_ALGO: NVLS\n")
    output = runner.invoke(app, ["lint", ".", "--format", "sarif"])
    log = json.loads(output.stdout)
    jsonschema.validate(log, SARIF_MINIMAL_SCHEMA)
    uris = {r["locations"][0]["physicalLocation"]["artifactLocation"]["uri"] for r in log["runs"][0]["results"]}
    assert uris and all(Path(uri).is_file() for uri in uris), uris
