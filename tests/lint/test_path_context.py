"""Per-path context in the settings (``per-path-context``): one repository with NC48 and ND H100 files,
or values for two versions of a chart, lints correctly in one run; the command line wins over the
tables, a more specific glob over a broader one; bad tables are errors at their line (exit 2)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from typer.testing import CliRunner

from hpcconf.cli import app
from hpcconf.lint.context import LintContext
from hpcconf.lint.path_context import context_for_path
from hpcconf.settings.config import ConfigError, load_settings
from hpcconf.settings.path_context import PathContext

runner = CliRunner()

SETTINGS = """\
[per-path-context."clusters/**"]
charts = { network-operator = "26.4.1" }

[per-path-context."clusters/nc48/**"]
sku = "Standard_NC48ads_A100_v4"

[per-path-context."clusters/ndh100/**"]
sku = "ND96isr_H100_v5"

[per-path-context."clusters/legacy/**"]
nccl-version = "2.21.5"

[per-path-context."clusters/legacy/**".charts]
network-operator = "v23.10.0-rc.5"
"""
# NC48ads A100 v4 has no InfiniBand (NCCL012 warns); ND H100 v5 has mlx5_ib0.
IB_HCA = "NCCL_IB_HCA=mlx5_ib0\n"
# A per-collective NCCL_ALGO: NCCL 2.24+ reads it (NCCL014 on a SKU without NVLink SHARP); 2.21 does not (NCCL011).
PER_COLLECTIVE_ALGO = "NCCL_ALGO=allreduce:NVLS,Ring\n"
# network-operator values with the NicClusterPolicy keys the chart dropped in 24.10 (HELM001 from then on).
NCP_VALUES = "deployCR: true\nofedDriver:\n  deploy: true\n"


@pytest.fixture
def repo(tmp_path, monkeypatch):
    """A repository with several deployments side by side, each with its own SKU or chart version."""
    files = {
        ".hpcconf.toml": SETTINGS,
        "clusters/nc48/nccl.conf": IB_HCA,
        "clusters/ndh100/nccl.conf": IB_HCA,
        "clusters/nc48/network-operator-values.yaml": NCP_VALUES,
        "clusters/legacy/network-operator-values.yaml": NCP_VALUES,
        "clusters/legacy/job.env": PER_COLLECTIVE_ALGO,
        "README.md": "Set `NCCL_IB_HCA=mlx5_ib0` only where there is InfiniBand.\n",
    }
    for name, text in files.items():
        (tmp_path / name).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / name).write_text(text, encoding="utf-8")
    monkeypatch.chdir(tmp_path)
    return tmp_path


def _findings(*args: str) -> list[tuple[str, str]]:
    result = runner.invoke(app, ["lint", *args, "--format", "json"])
    assert result.exit_code in (0, 1), result.output
    return sorted((f["file"], f["code"]) for f in json.loads(result.stdout)["findings"])


def test_each_deployment_is_linted_for_its_own_sku_and_chart_version(repo):
    assert _findings(".") == [
        ("clusters/legacy/job.env", "NCCL011"),  # NCCL 2.21.5 has no per-collective NCCL_ALGO
        ("clusters/nc48/nccl.conf", "NCCL012"),  # NC48: no InfiniBand; the ND H100 file is fine
        ("clusters/nc48/network-operator-values.yaml", "HELM001"),  # 26.4.1: deployCR is gone
        ("clusters/nc48/network-operator-values.yaml", "HELM001"),  # ... and ofedDriver
    ]


def test_running_from_a_subdirectory_finds_the_same_tables(repo, monkeypatch):
    monkeypatch.chdir(repo / "clusters")
    assert ("nc48/nccl.conf", "NCCL012") in _findings(".")
    assert not any(file.startswith("ndh100/") for file, _ in _findings("."))


def test_the_command_line_wins_over_every_table(repo):
    found = _findings(".", "--sku", "ND96isr_H100_v5", "--nccl-version", "2.27.3", "--chart", "network-operator=23.10.0-rc.5")
    assert found == []  # H100 has mlx5_ib0; 2.27 reads the per-collective list; 23.10 has deployCR
    assert _findings(".", "--sku", "NC48ads_A100_v4") == [
        ("clusters/legacy/job.env", "NCCL011"),
        ("clusters/nc48/nccl.conf", "NCCL012"),
        ("clusters/nc48/network-operator-values.yaml", "HELM001"),
        ("clusters/nc48/network-operator-values.yaml", "HELM001"),
        ("clusters/ndh100/nccl.conf", "NCCL012"),  # the table's ND H100 lost to --sku
    ]


def test_a_more_specific_glob_wins_key_by_key(repo):
    settings = load_settings(config_file=repo / ".hpcconf.toml").lint
    ctx = LintContext(config=settings)
    legacy = context_for_path(ctx, "clusters/legacy/values.yaml")
    assert legacy.charts == {"network-operator": "23.10.0-rc.5"}  # clusters/legacy/** over clusters/**
    assert legacy.nccl_version == "2.21.5" and legacy.sku is None
    nc48 = context_for_path(ctx, "clusters/nc48/nccl.conf")
    assert nc48.charts == {"network-operator": "26.4.1"} and nc48.sku is not None  # both tables give a key
    assert nc48.sku.name == "Standard_NC48ads_A100_v4"
    assert context_for_path(ctx, "docs/nccl.conf") is ctx  # no table: the run's context itself
    assert context_for_path(ctx, "clusters/nc48/a.conf") is nc48  # one object per table combination


def test_specificity_counts_literal_segments_then_characters_then_file_order():
    broad, deep, named, later = (PathContext("clusters/**", 0), PathContext("clusters/nc48/**", 1),
                                 PathContext("clusters/*/nccl.conf", 2), PathContext("clusters/**", 3))
    ranked = sorted([named, later, deep, broad], key=lambda c: c.specificity)
    assert ranked == [broad, later, deep, named]


def test_a_spec_decides_for_what_it_compiles_to(repo):
    """A spec's artifacts are judged by its pools and pins: a table giving the spec's path another SKU
    changes nothing about them (hpcconf build lints them the same way)."""
    spec = Path(__file__).resolve().parents[2] / "examples" / "ndmv4-aks.yaml"
    (repo / "clusters/nc48/cluster.yaml").write_text(spec.read_text(encoding="utf-8"), encoding="utf-8")
    assert not any(code == "NCCL012" for _, code in _findings("clusters/nc48/cluster.yaml"))
    from hpcconf.lint.engine import lint_paths

    ctx = LintContext(config=load_settings().lint)
    result = lint_paths(["clusters/nc48/cluster.yaml"], ctx)
    artifacts = [d for d in result.documents if d.artifact is not None]
    assert artifacts and {d.context.sku.name for d in artifacts if d.context and d.context.sku} == \
        {"Standard_ND96amsr_A100_v4"}  # the spec's pool, not the table's NC48
    assert all(d.context.charts.get("network-operator") != "26.4.1" for d in artifacts if d.context)  # pinned


@pytest.mark.parametrize(("table", "message"), [
    ('sku = "Standard_NC48ads_A100_v5"',
     ".hpcconf.toml:2:1: unknown SKU 'Standard_NC48ads_A100_v5'; did you mean Standard_NC48ads_A100_v4"),
    ('nccl-version = "2.21.x"', ".hpcconf.toml:2:1: 'nccl-version' must be a version such as"),
    ('charts = { gpu-operater = "24.9.2" }', ".hpcconf.toml:2:12: unknown chart 'gpu-operater' in charts; "
                                             "did you mean 'gpu-operator'?"),
    ('charts = { gpu-operator = "latest" }', ".hpcconf.toml:2:12: 'charts.gpu-operator' must be a version"),
    ('skuu = "NC48ads_A100_v4"', ".hpcconf.toml:2:1: unknown key 'skuu' in per-path-context.\"a/**\"; did you mean 'sku'?"),
])
def test_a_bad_table_is_an_error_at_its_line(tmp_path, monkeypatch, table, message):
    (tmp_path / ".hpcconf.toml").write_text(f'[per-path-context."a/**"]\n{table}\n', encoding="utf-8")
    (tmp_path / "nccl.conf").write_text("NCCL_DEBUG=WARN\n", encoding="utf-8")
    monkeypatch.chdir(tmp_path)
    with pytest.raises(ConfigError, match="per-path|SKU|chart|version"):
        load_settings()
    for args in (["lint", "."], ["build", "--check"]):  # one loader: build rejects it too
        result = runner.invoke(app, args)
        assert result.exit_code == 2, result.output
        assert message in result.output.replace(str(tmp_path) + "/", ""), result.output


def test_inline_tables_and_pyproject_are_located_too(tmp_path):
    (tmp_path / "pyproject.toml").write_text(
        '[project]\nname = "x"\n\n[tool.hpcconf.per-path-context]\n'
        '"k8s/*.yaml" = { sku = "NC48ads_A100_v4", nccl-version = "two" }\n', encoding="utf-8")
    with pytest.raises(ConfigError) as error:
        load_settings(config_file=tmp_path / "pyproject.toml")
    assert str(error.value).startswith(f"{tmp_path / 'pyproject.toml'}:5:43: 'nccl-version' must be a version")


def test_sku_dir_setting_adds_skus_the_tables_can_name(tmp_path, monkeypatch):
    catalog = Path(__file__).resolve().parents[2] / "skus"
    mine = tmp_path / "my-skus"
    mine.mkdir()
    text = (catalog / "Standard_NC48ads_A100_v4.yaml").read_text(encoding="utf-8")
    (mine / "Standard_NC48ads_A100_v9.yaml").write_text(text.replace("NC48ads_A100_v4", "NC48ads_A100_v9"), encoding="utf-8")
    (tmp_path / ".hpcconf.toml").write_text('sku-dir = ["my-skus"]\n[per-path-context."**"]\nsku = "NC48ads_A100_v9"\n',
                                            encoding="utf-8")
    (tmp_path / "nccl.conf").write_text(IB_HCA, encoding="utf-8")
    monkeypatch.chdir(tmp_path)
    settings = load_settings()
    assert settings.sku_dirs == [tmp_path / "my-skus"] and settings.lint.path_contexts[0].sku is not None
    assert _findings("nccl.conf") == [("nccl.conf", "NCCL012")]
    (tmp_path / ".hpcconf.toml").write_text('sku-dir = ["no-such"]\n', encoding="utf-8")
    result = runner.invoke(app, ["lint", "nccl.conf"])
    assert result.exit_code == 2 and ".hpcconf.toml:1:1: SKU directory" in result.output


def test_lint_text_applies_the_tables_too(repo):
    """Editors lint a buffer with lint_text: the buffer's path picks its table as `hpcconf lint FILE` does."""
    from hpcconf.lint.engine import lint_text

    ctx = LintContext(config=load_settings().lint)
    assert [f.code for f in lint_text(IB_HCA, "clusters/nc48/nccl.conf", ctx).findings] == ["NCCL012"]
    assert lint_text(IB_HCA, "clusters/ndh100/nccl.conf", ctx).findings == []
