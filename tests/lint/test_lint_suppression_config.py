"""Inline suppressions and configuration files (.hpcconf.toml, [tool.hpcconf] in pyproject.toml)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from typer.testing import CliRunner

from hpcconf.cli import app as hpcconf_app
from hpcconf.lint.context import LintContext
from hpcconf.lint.engine import lint_text
from hpcconf.settings.config import ConfigError, find_config, load_config

JOB = """\
apiVersion: batch.volcano.sh/v1alpha1
kind: Job
metadata:
  name: nccl
spec:
  tasks:
    - name: worker
      template:
        spec:
          containers:
            - name: main
              image: nvcr.io/nvidia/pytorch:23.03-py3
              env:
                - name: NCCL_ALGO
                  value: Rings{comment}
"""


def codes(result) -> list[tuple[str, int]]:
    return [(f.code, f.line) for f in result.findings]


def test_env_value_in_a_volcano_job_is_checked_at_its_line():
    result = lint_text(JOB.format(comment=""), "job.yaml")
    assert codes(result) == [("NCCL011", 15)]
    assert result.findings[0].column == 26  # the offending token inside the value


def test_inline_suppression_with_reason_suppresses():
    text = JOB.format(comment="  # hpcconf: ignore[NCCL011] our NCCL build has a Rings plugin")
    assert codes(lint_text(text, "job.yaml")) == []


def test_inline_suppression_by_rule_name():
    text = JOB.format(comment="  # hpcconf: ignore[nccl-algo-proto-invalid] plugin")
    assert codes(lint_text(text, "job.yaml")) == []


def test_suppression_without_reason_still_suppresses_but_is_reported():
    text = JOB.format(comment="  # hpcconf: ignore[NCCL011]")
    assert codes(lint_text(text, "job.yaml")) == [("HPC010", 15)]


def test_unused_and_unknown_suppressions_are_reported():
    text = "NCCL_DEBUG=WARN\n# hpcconf: ignore[NCCL004, NCL9] nothing here\nNCCL_ALGO=Ring\n"
    found = lint_text(text, "nccl.conf")
    assert codes(found) == [("HPC011", 2), ("HPC012", 2)]
    assert "NCL9" in found.findings[1].message


def test_comment_line_above_covers_the_next_line_in_nccl_conf():
    text = "# hpcconf: ignore[NCCL004] the legacy image reads it from here\nCUDA_DEVICE_ORDER=PCI_BUS_ID\n"
    assert codes(lint_text(text, "nccl.conf")) == []


def test_no_inline_ignores_disregards_suppressions():
    text = JOB.format(comment="  # hpcconf: ignore[NCCL011] plugin")
    ctx = LintContext()
    ctx.config.no_inline_ignores = True
    assert codes(lint_text(text, "job.yaml", ctx)) == [("NCCL011", 15)]


def test_xml_comment_suppression():
    text = ('<system version="1">\n  <cpu numaid="0" affinity="0000ffff" arch="x86_64" vendor="AuthenticAMD">\n'
            '  </cpu>\n  <!-- hpcconf: ignore[NCCL026] one socket is pinned on purpose -->\n'
            '  <cpu numaid="1" affinity="0000ffff" arch="x86_64" vendor="AuthenticAMD">\n  </cpu>\n</system>\n')
    assert codes(lint_text(text, "topo.xml")) == []
    assert codes(lint_text(text.replace("<!-- hpcconf", "<!-- nothing"), "topo.xml")) == [("NCCL026", 5)]


# -- config files --------------------------------------------------------------------------------
@pytest.fixture
def project(tmp_path, monkeypatch) -> Path:
    (tmp_path / "conf").mkdir()
    (tmp_path / "conf" / "nccl.conf").write_text("NCCL_ALGO = Ring\nCUDA_DEVICE_ORDER=PCI_BUS_ID\n")
    (tmp_path / "legacy").mkdir()
    (tmp_path / "legacy" / "nccl.conf").write_text("CUDA_DEVICE_ORDER=PCI_BUS_ID\n")
    (tmp_path / "vendor").mkdir()
    (tmp_path / "vendor" / "nccl.conf").write_text("NCCL_ALGO = Ring\n")
    monkeypatch.chdir(tmp_path / "conf")  # config is searched upward from here
    return tmp_path


def lint_json(*args) -> tuple[int, dict]:
    result = CliRunner().invoke(hpcconf_app, ["lint", *args, "--format", "json"])
    return result.exit_code, (json.loads(result.stdout) if result.stdout.strip() else {})


def test_hpcconf_toml_found_upward_applies_everything(project):
    (project / ".hpcconf.toml").write_text(
        'exclude = ["vendor/**"]\n'
        'fail-level = "warning"\n'
        '[per-file-ignores]\n"legacy/*.conf" = ["NCCL004"]\n'
        '[severity]\nNCCL001 = "warning"\n')
    code, data = lint_json(str(project))
    files = {f["file"] for f in data["findings"]}
    assert not any("vendor" in f or "legacy" in f for f in files)
    assert {(f["code"], f["severity"]) for f in data["findings"]} == {("NCCL001", "warning"), ("NCCL004", "warning")}
    assert code == 1  # fail-level warning from the file


def test_pyproject_tool_section_and_cli_override(project):
    (project / "pyproject.toml").write_text('[project]\nname = "x"\n[tool.hpcconf]\nignore = ["NCCL004"]\n')
    code, data = lint_json(str(project / "conf"))
    assert {f["code"] for f in data["findings"]} == {"NCCL001"}
    code, data = lint_json(str(project / "conf"), "--ignore", "NCCL001")
    assert {f["code"] for f in data["findings"]} == {"NCCL004"}  # CLI list replaces the file's


def test_explicit_config_and_select(project, tmp_path):
    config = tmp_path / "ci.toml"
    config.write_text('select = ["NCCL004"]\nno-inline-ignores = true\n')
    code, data = lint_json(str(project / "conf"), "--config", str(config))
    assert {f["code"] for f in data["findings"]} == {"NCCL004"}
    assert code == 0


def test_bad_config_is_a_usage_error(project):
    (project / ".hpcconf.toml").write_text('[severity]\nNCCL001 = "fatal"\n')
    result = CliRunner().invoke(hpcconf_app, ["lint", "."])
    assert result.exit_code == 2 and "must be one of error, warning, info" in result.stderr
    with pytest.raises(ConfigError, match="invalid TOML"):
        (project / "broken.toml").write_text("select = [")
        load_config(project / "broken.toml")


def test_find_config_prefers_dedicated_file(project):
    (project / "pyproject.toml").write_text("[tool.hpcconf]\n")
    assert find_config(project / "conf") == project / "pyproject.toml"
    (project / ".hpcconf.toml").write_text("")
    assert find_config(project / "conf") == project / ".hpcconf.toml"
    (project / "pyproject.toml").write_text("[project]\nname='x'\n")


def test_suppression_of_a_disabled_rule_is_not_called_unused():
    text = "# hpcconf: ignore[NCCL004] legacy image\nCUDA_DEVICE_ORDER=PCI_BUS_ID\nNCCL_DEBUG WARN\n"
    ctx = LintContext()
    ctx.config.ignore = ["NCCL004"]
    assert codes(lint_text(text, "nccl.conf", ctx)) == [("NCCL005", 3)]


@pytest.mark.parametrize("pattern, path, matched", [
    ("charts/**/values.yaml", "charts/values.yaml", True),         # ** spans zero directories too
    ("charts/**/values.yaml", "infra/charts/a/b/values.yaml", True),
    ("clusters/*.yaml", "clusters/east/job.yaml", False),          # * stays within one directory
    ("clusters/*.yaml", "clusters/job.yaml", True),
    ("vendor/", "./vendor/x/nccl.conf", True), ("vendor/**", "/abs/repo/vendor/x.yaml", True),
    ("*.bak", "a/b/x.bak", True), ("tests/**", "spec.yaml -> tests/job.yaml", True),
])
def test_settings_globs_follow_git_wildmatch(pattern, path, matched):
    from hpcconf.settings.config import glob_match

    assert glob_match(path, pattern) is matched
