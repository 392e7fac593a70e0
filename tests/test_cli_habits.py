"""The CLI as its users' habits expect it: `-h`, help that says what the command does, `--format`
everywhere, shell completion of values, decision exit codes for `review`, rule text without
reStructuredText markup. Completion goes through the shell protocol typer installs
(`_HPCCONF_COMPLETE=complete_bash` with `COMP_WORDS`/`COMP_CWORD`, zsh's `_TYPER_COMPLETE_ARGS`),
the way `hpcconf --install-completion`'s script calls it."""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
import typer
from typer.testing import CliRunner

from hpcconf.cli import app

runner = CliRunner()
BIN = Path(sys.executable).parent
HPCCONF = str(BIN / "hpcconf") if (BIN / "hpcconf").exists() else shutil.which("hpcconf")
needs_command = pytest.mark.skipif(HPCCONF is None, reason="the hpcconf command is not installed (pip install -e .)")


def _commands() -> list[list[str]]:
    group = typer.main.get_command(app)
    paths = []
    for name, command in sorted(group.commands.items()):  # type: ignore[attr-defined]
        subcommands = getattr(command, "commands", None)
        paths += [[name, sub] for sub in sorted(subcommands)] if subcommands else [[name]]
    return paths


COMMANDS = _commands()


@pytest.mark.parametrize("command", COMMANDS, ids=" ".join)
def test_every_command_takes_dash_h_and_names_its_values(command):
    long, short = runner.invoke(app, [*command, "--help"]), runner.invoke(app, [*command, "-h"])
    assert long.exit_code == 0 and short.exit_code == 0 and short.output == long.output
    assert "-h, --help" in long.output
    # A metavar says what to give (SKU, FILE, N), not the Python type typer would print.
    assert not re.search(r"<(str|int|float|path|int range|float range)>|\b(TEXT|INTEGER|FLOAT)\b", long.output), long.output


def test_build_help_states_the_default_output_root_and_it_is_true(tmp_path, monkeypatch):
    assert "else out/ next to each spec" in " ".join(runner.invoke(app, ["build", "--help"]).output.split())
    (tmp_path / "deep").mkdir()
    spec = tmp_path / "deep" / "c.yaml"
    assert runner.invoke(app, ["init", "--sku", "Standard_ND96asr_v4", "--name", "c1", "-o", str(spec)]).exit_code == 0
    monkeypatch.chdir(tmp_path)
    assert runner.invoke(app, ["build", str(spec), "-q"]).exit_code == 0
    assert (tmp_path / "deep" / "out" / "c1").is_dir() and not (tmp_path / "out").exists()


def test_skus_takes_format_like_every_other_command_and_json_still_works():
    as_format = runner.invoke(app, ["skus", "--format", "json"])
    assert as_format.exit_code == 0
    names = [row["name"] for row in json.loads(as_format.stdout)]
    assert "Standard_ND96isr_H100_v5" in names
    deprecated = runner.invoke(app, ["skus", "--json"])
    assert deprecated.exit_code == 0 and deprecated.stdout == as_format.stdout
    assert "--json is deprecated; use --format json" in deprecated.stderr
    assert "--json" not in runner.invoke(app, ["skus", "--help"]).output  # hidden: the help shows one spelling
    one = runner.invoke(app, ["skus", "Standard_ND96isr_H100_v5", "-f", "json"])
    assert json.loads(one.stdout)["name"] == "Standard_ND96isr_H100_v5"
    bad = runner.invoke(app, ["skus", "--format", "yaml"])
    assert bad.exit_code == 2 and "--format must be text or json" in bad.stderr


# -- rule text -----------------------------------------------------------------------------------

def _without_fences(text: str) -> str:
    return re.sub(r"^```.*?^```", "", text, flags=re.M | re.S)


def test_explain_prints_markdown_not_restructuredtext():
    from hpcconf.lint.rule_loading import load_rules

    for code in load_rules():
        page = runner.invoke(app, ["explain", code]).output
        assert "``" not in _without_fences(page), (code, page)
    for fmt in ("text", "json"):
        assert "``" not in runner.invoke(app, ["rules", "--format", fmt]).output
    # A literal whose spaces matter keeps them, quoted.
    assert '`"NCCL_IB_HCA=mlx5_0 "`' in runner.invoke(app, ["explain", "NCCL001"]).output


def test_sarif_rule_texts_carry_no_restructuredtext_literals(tmp_path, monkeypatch):
    (tmp_path / "nccl.conf").write_text("NCCL_ALGO=Foo\nNCCL_DEBUG = INFO\n")
    monkeypatch.chdir(tmp_path)
    result = runner.invoke(app, ["lint", "nccl.conf", "--format", "sarif"])
    rules = json.loads(result.stdout)["runs"][0]["tool"]["driver"]["rules"]
    assert rules
    for rule in rules:
        texts = [rule["shortDescription"]["text"], rule["fullDescription"]["text"], rule.get("help", {}).get("text", ""),
                 rule.get("help", {}).get("markdown", "")]
        assert not any("``" in _without_fences(text) for text in texts), rule["id"]


# -- completion ----------------------------------------------------------------------------------

def _complete_bash(words: str) -> list[str]:
    cword = len(words.split()) - (0 if words.endswith(" ") else 1)
    env = {**os.environ, "_HPCCONF_COMPLETE": "complete_bash", "COMP_WORDS": words, "COMP_CWORD": str(cword)}
    done = subprocess.run([HPCCONF], env=env, capture_output=True, text=True, timeout=60)
    assert done.returncode == 0, done.stderr
    return done.stdout.split()


@needs_command
@pytest.mark.parametrize("words, expected, absent", [
    ("hpcconf lint --sku Standard_ND96i", {"Standard_ND96isr_H100_v5", "Standard_ND96isr_H200_v5"}, {"Standard_NC24ads_A100_v4"}),
    ("hpcconf init --sku ND96isr_H1", {"ND96isr_H100_v5"}, set()),  # the options take the name without Standard_
    ("hpcconf skus Standard_NC48", {"Standard_NC48ads_A100_v4"}, set()),
    ("hpcconf nccl-report --sku Standard_ND96isr_H2", {"Standard_ND96isr_H200_v5"}, set()),
    ("hpcconf explain NCCL01", {"NCCL011"}, {"SPEC001"}),
    ("hpcconf lint --select DKR", {"DKR001"}, {"NCCL001"}),
    ("hpcconf lint --ignore NCCL001,NCCL01", {"NCCL001,NCCL011"}, {"NCCL001,NCCL001"}),  # a comma list: the last item
    ("hpcconf lint --format ", {"text", "json", "sarif", "github"}, set()),
    ("hpcconf lint --fail-level w", {"warning"}, {"error"}),
    ("hpcconf review --format m", {"markdown"}, set()),
    ("hpcconf skus --format ", {"text", "json"}, set()),
    ("hpcconf nccl-report --format ", {"text", "json", "markdown"}, set()),
    ("hpcconf init --platform ", {"aks", "azhop", "slurm"}, set()),
    ("hpcconf init --platform aks,", {"aks,azhop", "aks,slurm"}, {"aks,aks"}),
])
def test_bash_completion_offers_the_values_the_option_takes(words, expected, absent):
    offered = set(_complete_bash(words))
    assert expected <= offered and not (absent & offered), sorted(offered)


@needs_command
def test_completion_offers_every_rule_code_and_every_catalog_sku():
    from hpcconf.catalog import Catalog
    from hpcconf.lint.rule_loading import load_rules

    assert set(_complete_bash("hpcconf explain ")) == set(load_rules())
    assert set(Catalog.load().names()) <= set(_complete_bash("hpcconf lint --sku "))  # Crusoe sizes too


@needs_command
def test_zsh_completion_describes_rule_codes_with_their_summary():
    env = {**os.environ, "_HPCCONF_COMPLETE": "complete_zsh", "_TYPER_COMPLETE_ARGS": "hpcconf explain NCCL011"}
    done = subprocess.run([HPCCONF], env=env, capture_output=True, text=True, timeout=60)
    assert done.returncode == 0 and '"NCCL011":' in done.stdout and "NCCL\\_ALGO" not in done.stdout
    assert "NCCL_ALGO" in done.stdout and "``" not in done.stdout


# -- review --detailed-exitcode --------------------------------------------------------------------

SPEC = """\
apiVersion: hpcconf/v1
kind: Cluster
metadata: {name: demo, location: southcentralus}
platforms: [aks]
pools:
  - {name: gpu, sku: Standard_ND96amsr_A100_v4, count: 2}
test_image: {registry: demo.azurecr.io, tag: "25.10", base: "nvcr.io/nvidia/pytorch:25.10-py3"}
"""


@pytest.fixture
def reviewed_repo(tmp_path, monkeypatch):
    git = shutil.which("git")
    if git is None:
        pytest.skip("git is not on PATH")
    env = {"GIT_CONFIG_GLOBAL": os.devnull, "GIT_CONFIG_NOSYSTEM": "1", "GIT_AUTHOR_NAME": "t",
           "GIT_AUTHOR_EMAIL": "t@example.com", "GIT_COMMITTER_NAME": "t", "GIT_COMMITTER_EMAIL": "t@example.com"}
    for key, value in env.items():
        monkeypatch.setenv(key, value)
    monkeypatch.chdir(tmp_path)
    subprocess.run([git, "init", "-q", "-b", "main"], check=True)
    (tmp_path / "specs").mkdir()
    (tmp_path / "specs" / "demo.yaml").write_text(SPEC)
    assert runner.invoke(app, ["build", "specs/demo.yaml", "-q"]).exit_code == 0
    subprocess.run([git, "add", "-A"], check=True)
    subprocess.run([git, "commit", "-qm", "base"], check=True)
    return tmp_path / "specs" / "demo.yaml"


def _review_after(spec: Path, old: str, new: str, *options: str) -> int:
    spec.write_text(spec.read_text().replace(old, new))
    assert runner.invoke(app, ["build", str(spec.relative_to(Path.cwd())), "-q"]).exit_code == 0
    return runner.invoke(app, ["review", *options]).exit_code


def test_review_detailed_exitcode_nothing_changed_is_0(reviewed_repo):
    assert runner.invoke(app, ["review", "--detailed-exitcode"]).exit_code == 0


def test_review_detailed_exitcode_a_scale_up_is_3(reviewed_repo):
    assert _review_after(reviewed_repo, "count: 2}", "count: 3}", "--detailed-exitcode") == 3


def test_review_detailed_exitcode_replacing_the_nodes_is_4_and_plain_review_still_0(reviewed_repo):
    assert _review_after(reviewed_repo, "Standard_ND96amsr_A100_v4", "Standard_ND96isr_H100_v5", "--detailed-exitcode") == 4
    assert runner.invoke(app, ["review"]).exit_code == 0  # without the option: changes alone do not fail


def test_review_detailed_exitcode_hand_edits_still_exit_1(reviewed_repo):
    conf = sorted((reviewed_repo.parent / "out").rglob("*.yaml"))[0]
    conf.write_text(conf.read_text() + "# tuned by hand\n")
    assert runner.invoke(app, ["review", "--detailed-exitcode"]).exit_code == 1


def test_review_exit_codes_are_documented_with_the_others():
    readme = (Path(__file__).resolve().parents[1] / "README.md").read_text()
    table = readme.split("## Exit codes", 1)[1]
    assert "| 3 | `review --detailed-exitcode`" in table and "| 4 | `review --detailed-exitcode`" in table


def test_the_skus_table_stays_aligned_with_a_long_user_sku_name(tmp_path):
    repo = Path(__file__).resolve().parents[1]
    long_name = "Standard_ND96isr_H100_v5_with_a_very_long_custom_name"
    source = (repo / "skus" / "Standard_ND96isr_H100_v5.yaml").read_text()
    (tmp_path / f"{long_name}.yaml").write_text(source.replace("name: Standard_ND96isr_H100_v5", f"name: {long_name}", 1))
    lines = runner.invoke(app, ["skus", "--sku-dir", str(tmp_path)]).stdout.splitlines()
    assert any(line.startswith(long_name + " ") for line in lines)
    ends = {re.match(r"\S+\s+\S+", line).end() for line in lines}  # the name, then the GPU count right-aligned
    assert len(ends) == 1, lines[:3]
