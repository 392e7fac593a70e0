"""`hpcconf build` lints what it is about to write (hpcconf.build_lint)."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest
from typer.testing import CliRunner

from hpcconf.cli import app
from hpcconf.lint.context import LintContext, newest_nccl_version
from hpcconf.lint.engine import lint_build, lint_paths
from hpcconf.pipeline import compile_spec

REPO = Path(__file__).resolve().parents[1]
RETIRED = REPO / "tests" / "rules" / "HPC200" / "bad.yaml"  # compiles; HPC200 is a lint error


def hpcconf(*args: str):
    return CliRunner().invoke(app, list(args))


@pytest.fixture
def retired(tmp_path, monkeypatch) -> Path:
    shutil.copy(RETIRED, tmp_path / "spec.yaml")
    monkeypatch.chdir(tmp_path)
    return tmp_path


@pytest.mark.parametrize("spec", sorted((REPO / "examples").glob("*.yaml")) + [RETIRED], ids=lambda p: p.stem)
def test_lint_build_finds_what_lint_spec_finds(spec):
    """No second load or compile, and no other answer: the same findings as `hpcconf lint SPEC`."""
    ctx = LintContext(nccl_version=newest_nccl_version())
    by_build = lint_build(compile_spec(spec), ctx).findings
    by_path = lint_paths([str(spec)], LintContext(nccl_version=newest_nccl_version())).findings
    key = lambda d: (d.code, Path(d.file.split(" -> ")[0]).name, d.line, d.column, d.message)  # noqa: E731
    assert sorted(map(key, by_build)) == sorted(map(key, by_path))


def test_build_refuses_lint_errors_and_writes_nothing(retired):
    result = hpcconf("build", "spec.yaml")
    assert result.exit_code == 1, result.output
    assert "spec.yaml:7:" in result.output and "HPC200" in result.output  # located on the spec line
    assert "build refused" in result.output and "nothing was written" in result.output
    assert not (retired / "out").exists()


def test_force_writes_despite_lint_errors_and_says_so(retired):
    result = hpcconf("build", "spec.yaml", "--force")
    assert result.exit_code == 0, result.output
    assert "HPC200" in result.output and "writing them anyway (--force)" in result.output
    assert (retired / "out" / "demo" / ".hpcconf-manifest.json").is_file()


def test_check_fails_on_lint_errors_and_diff_reports_them(retired):
    assert hpcconf("build", "spec.yaml", "--force", "-q").exit_code == 0
    check = hpcconf("build", "spec.yaml", "--check")
    assert check.exit_code == 1 and "HPC200" in check.output and "up to date" in check.output
    diff = hpcconf("build", "spec.yaml", "--diff")
    assert diff.exit_code == 0 and "HPC200" in diff.output


def test_settings_apply_to_the_build_lint(retired):
    (retired / ".hpcconf.toml").write_text('ignore = ["HPC200"]\n')
    result = hpcconf("build", "spec.yaml")
    assert result.exit_code == 0, result.output
    assert "spec.yaml: lint: 0 errors" in result.output


def test_clean_build_prints_one_summary_line(tmp_path):
    result = hpcconf("build", str(REPO / "examples" / "ndmv4-aks-current.yaml"), "-o", str(tmp_path))
    assert result.exit_code == 0, result.output
    summary = [line for line in result.output.splitlines() if ": lint: " in line]
    assert len(summary) == 1 and "0 errors, 0 warnings" in summary[0] and "lists them" in summary[0]
    quiet = hpcconf("build", str(REPO / "examples" / "ndmv4-aks-current.yaml"), "-o", str(tmp_path), "-q")
    assert quiet.output == ""


def test_error_in_an_artifact_is_reported_at_the_spec_line_that_set_it(tmp_path, monkeypatch):
    spec = tmp_path / "spec.yaml"
    spec.write_text((REPO / "examples" / "ndmv4-aks-current.yaml").read_text() + "nccl_env:\n  NCCL_ALGO: Tree\n")
    monkeypatch.chdir(tmp_path)
    result = hpcconf("build", "spec.yaml")
    assert result.exit_code == 1, result.output
    line = len(spec.read_text().splitlines())
    assert f"spec.yaml:{line}:14: error[NCCL029]" in result.output
    assert "seen in aks/volcano-job.yaml" in result.output
    assert not (tmp_path / "out").exists()


def test_the_build_lint_reads_no_file_again(monkeypatch):
    """The build's lint checks the text the build parsed (the spec is not read a second time)."""
    from hpcconf.lint import engine

    compiled = compile_spec(REPO / "examples" / "ndmv4-aks-current.yaml")

    def no_read(*args, **kwargs):
        raise AssertionError(f"read again: {args}")

    monkeypatch.setattr(engine, "_read", no_read)
    assert lint_build(compiled, LintContext(nccl_version=newest_nccl_version())).files_checked == 1
