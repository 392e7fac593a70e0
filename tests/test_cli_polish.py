"""--version, shell completion, plain help, and one meaning of -o across commands."""

from __future__ import annotations

import json
import re
import subprocess
import sys
from pathlib import Path

import pytest
from typer.testing import CliRunner

from hpcconf import __version__
from hpcconf.cli import app

REPO = Path(__file__).resolve().parents[1]
runner = CliRunner()
COMMANDS = ["build", "lint", "rules", "explain", "init", "migrate", "explain-diff", "review", "schema", "skus", "version"]
HEAVY = ("pydantic", "ruamel", "jsonschema", "lxml", "jinja2")


@pytest.mark.parametrize("flag", ["--version", "-V"])
def test_version_flag(flag):
    result = runner.invoke(app, [flag])
    assert result.exit_code == 0 and result.output == f"hpcconf {__version__}\n"


def test_version_does_not_import_the_heavy_libraries():
    """Measured with `python -X importtime`: the YAML, model and schema stacks are what made start-up slow."""
    probe = ("import sys\nsys.argv = ['hpcconf', '--version']\nfrom hpcconf.cli import main\n"
             "try:\n    main()\nexcept SystemExit:\n    pass\n"
             f"print(sorted({{m.split('.')[0] for m in sys.modules}} & set({HEAVY!r})))")
    done = subprocess.run([sys.executable, "-X", "importtime", "-c", probe], capture_output=True, text=True,
                          cwd=REPO, check=True)
    assert done.stdout.splitlines() == [f"hpcconf {__version__}", "[]"], done.stdout
    imported = {line.split("|")[-1].strip().split(".")[0] for line in done.stderr.splitlines() if "|" in line}
    assert not imported & set(HEAVY)


def test_shell_completion_is_available():
    # typer detects the user's shell from the parent processes (shellingham) and then takes no value; a test
    # run with no shell above it (CI in the background) detects none. With detection off, as in typer's own
    # tests, `--show-completion SHELL` names the shell.
    import os
    import subprocess
    import sys

    code = "import sys; from hpcconf.cli import main; sys.argv = ['hpcconf', '--show-completion', 'bash']; main()"
    env = dict(os.environ, _TYPER_COMPLETE_TEST_DISABLE_SHELL_DETECTION="1")
    result = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60, env=env)
    assert result.returncode == 0 and "_hpcconf_completion" in result.stdout, result.stdout + result.stderr
    assert "--install-completion" in runner.invoke(app, ["--help"]).output


@pytest.mark.parametrize("command", COMMANDS)
def test_help_shows_plain_metavars(command):
    """No typer type noise (`<list[Path]>`, `<path>`, TEXT, PATH...): each value is named for what it is."""
    text = runner.invoke(app, [command, "--help"]).output
    assert "Usage:" in text
    noise = re.findall(r"<(?:list\[|path|text|int|str|bool|float)[\w\[\]|, ]*>", text, flags=re.IGNORECASE)
    noise += re.findall(r"\bTEXT\b|\bPATH\.\.\.|\bINTEGER\b", text)
    assert not noise, f"`hpcconf {command} --help` shows {noise}"


def test_help_metavars_name_the_value():
    assert "Usage: hpcconf build [OPTIONS] [SPEC]..." in runner.invoke(app, ["build", "--help"], prog_name="hpcconf").output
    assert "-o, --output, --out DIR" in runner.invoke(app, ["build", "--help"]).output
    assert "-o, --output, --out FILE" in runner.invoke(app, ["schema", "--help"]).output


@pytest.mark.parametrize("spelling", ["-o", "--output", "--out"])
def test_o_writes_the_result_of_every_command(spelling, tmp_path, monkeypatch):
    """-o/--output/--out all mean "write the result here": a file, or build's output root."""
    monkeypatch.chdir(tmp_path)
    example = str(REPO / "examples" / "ndmv4-aks-current.yaml")

    assert runner.invoke(app, ["schema", spelling, "schema.json"]).exit_code == 0
    assert json.loads((tmp_path / "schema.json").read_text())["title"] == "hpcconf cluster spec"

    assert runner.invoke(app, ["build", example, spelling, "gen", "-q"]).exit_code == 0
    assert (tmp_path / "gen" / "ndmv4-aks-current" / ".hpcconf-manifest.json").is_file()

    result = runner.invoke(app, ["init", "--sku", "Standard_ND96isr_H100_v5", spelling, "new.yaml"])
    assert result.exit_code == 0 and (tmp_path / "new.yaml").read_text().count("apiVersion: hpcconf/v1") == 1

    result = runner.invoke(app, ["lint", "gen", "--format", "json", spelling, "report.json"])
    assert result.exit_code in (0, 1) and result.stdout == ""
    assert isinstance(json.loads((tmp_path / "report.json").read_text()), (dict, list))


def test_dash_means_stdout(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    result = runner.invoke(app, ["schema", "-o", "-"])
    assert json.loads(result.output)["title"] == "hpcconf cluster spec" and not (tmp_path / "-").exists()


def test_lint_usage_error_report_goes_to_the_output_file(tmp_path, monkeypatch):
    """CI uploads the SARIF file even when lint failed to start: it must say why, in the file."""
    monkeypatch.chdir(tmp_path)
    (tmp_path / ".hpcconf.toml").write_text('ignroe = ["DKR001"]\n')
    result = runner.invoke(app, ["lint", ".", "--format", "sarif", "-o", "hpcconf.sarif"])
    assert result.exit_code == 2 and result.stdout == ""
    sarif = json.loads((tmp_path / "hpcconf.sarif").read_text())
    assert "did you mean 'ignore'" in json.dumps(sarif)
