"""One settings loader for [tool.hpcconf] / .hpcconf.toml, shared by `build` and `lint`.

Both commands must agree on every key: an unknown key or a bad value is an error for both
(exit 2, file:line:col, the key, "did you mean"), and a broken file is never skipped silently.
"""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest
from typer.testing import CliRunner

from hpcconf.cli import app
from hpcconf.diagnostics import Severity
from hpcconf.settings.config import ConfigError, Settings, find_config, load_settings

REPO = Path(__file__).resolve().parents[1]
runner = CliRunner()


@pytest.fixture
def project(tmp_path, monkeypatch):
    """A directory with one spec, as the current directory."""
    shutil.copy(REPO / "examples" / "ndmv4-aks-current.yaml", tmp_path / "cluster.yaml")
    monkeypatch.chdir(tmp_path)
    return tmp_path


def _both_fail_with(project: Path, message: str) -> None:
    for args in (["build", "cluster.yaml", "--check"], ["lint", "cluster.yaml"]):
        result = runner.invoke(app, args)
        assert result.exit_code == 2, (args, result.output)
        assert message in result.output, (args, result.output)


def test_unknown_key_in_pyproject_is_an_error_for_build_and_lint(project):
    (project / "pyproject.toml").write_text('[project]\nname = "x"\n\n[tool.hpcconf]\nout = "gen"\nignroe = ["DKR001"]\n')
    _both_fail_with(project, "pyproject.toml:6:1: unknown key 'ignroe' in [tool.hpcconf]; did you mean 'ignore'?")


def test_unknown_key_in_dedicated_file_names_line_and_column(project):
    (project / ".hpcconf.toml").write_text('select = ["NCCL"]\n  fail_level = "warning"\n')
    _both_fail_with(project, ".hpcconf.toml:2:3: unknown key 'fail_level' in .hpcconf.toml; did you mean 'fail-level'?")


def test_unknown_key_without_a_close_match_lists_the_known_ones(project):
    (project / ".hpcconf.toml").write_text('colour = "red"\n')
    with pytest.raises(ConfigError, match=r"\.hpcconf\.toml:1:1: unknown key 'colour'.*known keys: exclude, "):
        load_settings()


def test_invalid_toml_reports_its_position(project):
    (project / ".hpcconf.toml").write_text('select = ["NCCL"\nignore = 3\n')
    with pytest.raises(ConfigError, match=r"\.hpcconf\.toml:2:\d+: invalid TOML: "):
        load_settings()


def test_broken_pyproject_with_an_hpcconf_table_is_not_skipped(project):
    """Skipping it would build into ./out instead of the configured `out`, without a word."""
    (project / "pyproject.toml").write_text('[tool.hpcconf]\nout = "gen\n')
    assert find_config(project) == project / "pyproject.toml"
    _both_fail_with(project, "pyproject.toml:2:")


def test_broken_pyproject_without_hpcconf_is_not_ours(project):
    (project / "pyproject.toml").write_text('[project\nname = "x"\n')
    assert find_config(project) is None
    assert load_settings() == Settings()


@pytest.mark.parametrize("text, where, key", [
    ('select = 3\n', ":1:1:", "'select' must be a list of strings"),
    ('fail-level = "loud"\n', ":1:1:", "'fail-level' must be one of error, warning, info"),
    ('no-inline-ignores = "false"\n', ":1:1:", "'no-inline-ignores' must be true or false"),
    ('out = ""\n', ":1:1:", "'out' must be a directory path"),
    ('[severity]\nNCCL010 = "loud"\n', ":2:1:", "'severity.NCCL010' must be one of"),
    ('[per-file-ignores]\n"legacy/*.conf" = 5\n', ":2:1:", "'per-file-ignores.legacy/*.conf' must be a list"),
    ('severity = "error"\n', ":1:1:", "'severity' must be a table"),
])
def test_bad_value_names_file_line_and_key(project, text, where, key):
    (project / ".hpcconf.toml").write_text(text)
    with pytest.raises(ConfigError) as caught:
        load_settings()
    assert f".hpcconf.toml{where} {key}" in str(caught.value)


def test_settings_are_read_for_both_commands(project):
    (project / "pyproject.toml").write_text('[tool.hpcconf]\nout = "generated"\nignore = ["DKR001"]\n'
                                            '[tool.hpcconf.severity]\nNCCL010 = "error"\n')
    settings = load_settings()
    assert settings.out == project / "generated" and settings.lint.ignore == ["DKR001"]
    assert settings.lint.severity == {"NCCL010": Severity.ERROR}
    assert settings.source == project / "pyproject.toml"
    assert runner.invoke(app, ["build", "cluster.yaml", "-q"]).exit_code == 0
    assert (project / "generated" / "ndmv4-aks-current").is_dir()
    assert runner.invoke(app, ["lint", "generated"]).exit_code in (0, 1)  # `out` is a known key to lint too


def test_build_config_option_names_the_file(project, tmp_path_factory):
    elsewhere = tmp_path_factory.mktemp("conf") / "hpcconf.toml"
    elsewhere.write_text('out = "built"\n')
    assert runner.invoke(app, ["build", "cluster.yaml", "-q", "--config", str(elsewhere)]).exit_code == 0
    assert (elsewhere.parent / "built" / "ndmv4-aks-current").is_dir()
    missing = runner.invoke(app, ["build", "cluster.yaml", "--config", "nope.toml"])
    assert missing.exit_code == 2 and "config file not found: nope.toml" in missing.output
