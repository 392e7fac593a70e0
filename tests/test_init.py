"""`hpcconf init` scaffolds a commented spec that builds and lints clean as is; `hpcconf migrate`
checks the spec format version and keeps comments when it converts."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from typer.testing import CliRunner

from hpcconf.cli import app
from hpcconf.spec import migrations
from hpcconf.spec.load import load_spec
from hpcconf.spec.model import Versions

REPO = Path(__file__).resolve().parents[1]
runner = CliRunner()


def hpcconf(*args: str):
    return runner.invoke(app, list(args))


def lint_findings(path: str) -> list[dict]:
    result = hpcconf("lint", path, "--format", "json")
    assert result.exit_code in (0, 1), result.output
    return json.loads(result.stdout)["findings"]


# -- init -------------------------------------------------------------------------------------

def test_init_from_the_issue_builds_and_lints_clean(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    result = hpcconf("init", "--sku", "Standard_ND96isr_H100_v5", "--nodes", "4", "--platform", "aks")
    assert result.exit_code == 0, result.output
    spec = tmp_path / "nd96isr-h100-v5-aks.yaml"
    assert f"wrote {spec.name}" in result.output
    cluster = load_spec(spec).cluster
    assert cluster.platforms == ["aks"] and cluster.pools[0].sku == "Standard_ND96isr_H100_v5"
    assert cluster.pools[0].count == 4 and cluster.apiVersion == "hpcconf/v1"

    built = hpcconf("build", spec.name, "-q")
    assert built.exit_code == 0, built.output
    assert hpcconf("build", spec.name, "--check").exit_code == 0
    errors = [f for f in lint_findings(spec.name) if f["severity"] == "error"]
    assert errors == [], errors
    lint = hpcconf("lint", spec.name)
    assert lint.exit_code == 0, lint.output


def test_init_spec_is_commented(tmp_path):
    spec = tmp_path / "c.yaml"
    assert hpcconf("init", "--sku", "Standard_ND96isr_H100_v5", "-n", "4", "-p", "aks", "-o", str(spec)).exit_code == 0
    lines = spec.read_text().splitlines()
    assert lines[1].startswith("# hpcconf cluster spec: 4 x Standard_ND96isr_H100_v5")
    commented = {line.split(":")[0].strip(" -") for line in lines if ":" in line and " # " in line}
    for key in ("apiVersion", "name", "location", "platforms", "sku", "count", "network_operator", "nccl",
                "resource_name", "registry", "namespace"):
        assert key in commented, f"{key} has no comment"
    assert "8 x NDR InfiniBand" in spec.read_text()  # facts from the SKU catalog, not a generic text


def test_init_names_the_schema_for_editors_and_says_how_to_write_it(tmp_path):
    """yaml-language-server reads `$schema=` from a modeline comment; the path is relative to the spec and
    `hpcconf schema -o` (printed by init) writes that file, so the editor checks against the installed schema."""
    import json

    spec = tmp_path / "specs" / "c.yaml"
    result = hpcconf("init", "--sku", "Standard_ND96isr_H100_v5", "-o", str(spec))
    assert result.exit_code == 0
    first = spec.read_text().splitlines()[0]
    assert first == "# yaml-language-server: $schema=hpcconf-spec.schema.json"
    schema_file = spec.parent / first.split("$schema=")[1]
    assert f"editor: hpcconf schema -o {schema_file.as_posix()}" in result.stdout
    assert hpcconf("schema", "-o", str(schema_file)).exit_code == 0
    import jsonschema
    from ruamel.yaml import YAML

    jsonschema.validate(YAML(typ="safe").load(spec.read_text()), json.loads(schema_file.read_text()))
    again = hpcconf("init", "--sku", "Standard_ND96isr_H100_v5", "-o", str(spec.parent / "d.yaml"))
    assert "editor:" not in again.stdout  # the schema is there already


def test_init_pins_the_current_default_versions(tmp_path):
    """A scaffolded spec pins what hpcconf defaults to today, so upgrading hpcconf changes nothing silently."""
    spec = tmp_path / "c.yaml"
    assert hpcconf("init", "--sku", "Standard_ND96amsr_A100_v4", "-p", "aks", "-o", str(spec)).exit_code == 0
    pinned = load_spec(spec).document.data["versions"]
    defaults = Versions()
    from hpcconf.knowledge.charts import doca_driver_default

    # doca_ofed has no model default: hpcconf resolves it from the chart release, and init pins that value
    assert pinned.pop("doca_ofed") == doca_driver_default(defaults.network_operator)
    # nccl is the one the test image's base ships (lint HPC203), not the model's default
    from hpcconf.knowledge.compat import ngc_release

    assert pinned.pop("nccl") == ngc_release(load_spec(spec).cluster.test_image.base).nccl
    assert pinned and all(getattr(defaults, key) == value for key, value in pinned.items())
    assert {"network_operator", "gpu_operator", "volcano"} <= set(pinned)


@pytest.mark.parametrize("sku,platforms", [
    ("Standard_ND96amsr_A100_v4", ["slurm"]),
    ("Standard_ND96amsr_A100_v4", ["azhop"]),
    ("h100-80gb-sxm-ib.8x", ["slurm"]),
    ("Standard_NC24ads_A100_v4", ["aks,slurm,azhop"]),
    ("Standard_ND40rs_v2", ["azhop", "aks"]),
    ("Standard_ND96isr_H200_v5", ["aks"]),
])
def test_init_for_other_skus_and_platforms_builds_and_has_no_lint_errors(tmp_path, monkeypatch, sku, platforms):
    monkeypatch.chdir(tmp_path)
    args = ["init", "--sku", sku, "-n", "3", "-o", "spec.yaml"]
    for platform in platforms:
        args += ["--platform", platform]
    result = hpcconf(*args)
    assert result.exit_code == 0, result.output
    cluster = load_spec(tmp_path / "spec.yaml").cluster
    assert sorted(cluster.platforms) == sorted(",".join(platforms).split(","))
    assert hpcconf("build", "spec.yaml", "-q").exit_code == 0
    errors = [f for f in lint_findings("spec.yaml") if f["severity"] == "error"]
    assert errors == [], errors


def test_init_without_infiniband_leaves_the_network_out(tmp_path):
    spec = tmp_path / "c.yaml"
    assert hpcconf("init", "--sku", "Standard_NC24ads_A100_v4", "-p", "slurm", "-o", str(spec)).exit_code == 0
    assert "infiniband:" not in spec.read_text() and "no InfiniBand" in spec.read_text()


def test_init_prints_to_stdout_with_dash(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    result = hpcconf("init", "--sku", "Standard_ND96asr_v4", "-p", "slurm", "-o", "-")
    assert result.exit_code == 0 and result.stdout.splitlines()[1].startswith("# hpcconf cluster spec")
    assert list(tmp_path.iterdir()) == []


def test_init_does_not_overwrite_without_force(tmp_path):
    spec = tmp_path / "c.yaml"
    spec.write_text("mine\n")
    result = hpcconf("init", "--sku", "Standard_ND96asr_v4", "-o", str(spec))
    assert result.exit_code == 2 and "exists; pass --force" in result.output
    assert spec.read_text() == "mine\n"
    assert hpcconf("init", "--sku", "Standard_ND96asr_v4", "-o", str(spec), "--force").exit_code == 0
    assert spec.read_text().splitlines()[1].startswith("# hpcconf cluster spec")


def test_init_unknown_sku_suggests(tmp_path):
    result = hpcconf("init", "--sku", "Standard_ND96isr_H100_v6", "-o", str(tmp_path / "c.yaml"))
    assert result.exit_code == 2 and "unknown SKU 'Standard_ND96isr_H100_v6'" in result.output
    assert "Standard_ND96isr_H100_v5" in result.output
    assert not (tmp_path / "c.yaml").exists()


def test_init_rejects_an_unknown_platform_and_a_bad_name(tmp_path):
    result = hpcconf("init", "--sku", "Standard_ND96asr_v4", "-p", "k8s", "-o", str(tmp_path / "c.yaml"))
    assert result.exit_code == 2 and "--platform 'k8s'" in result.output
    result = hpcconf("init", "--sku", "Standard_ND96asr_v4", "--name", "My_Cluster", "-o", str(tmp_path / "c.yaml"))
    assert result.exit_code == 2 and "--name 'My_Cluster'" in result.output
    assert not (tmp_path / "c.yaml").exists()


def test_init_refuses_values_the_spec_rejects(tmp_path):
    result = hpcconf("init", "--sku", "Standard_ND96asr_v4", "--registry", "Not A Registry", "-o", str(tmp_path / "c.yaml"))
    assert result.exit_code == 2 and "test_image.registry" in result.output
    assert not (tmp_path / "c.yaml").exists()


# -- migrate ----------------------------------------------------------------------------------

def test_migrate_a_v1_spec_needs_nothing(tmp_path):
    spec = tmp_path / "s.yaml"
    original = (REPO / "examples" / "ndmv4-aks.yaml").read_text()
    spec.write_text(original)
    result = hpcconf("migrate", str(spec), "--write")
    assert result.exit_code == 0
    assert "no migration needed: hpcconf/v1 is the only version" in result.output
    assert spec.read_text() == original


@pytest.mark.parametrize("text,message", [
    ("apiVersion: hpcconf/v9\nkind: Cluster\n", "apiVersion 'hpcconf/v9' is not one this hpcconf knows"),
    ("kind: Cluster\n", "no apiVersion"),
    ("- a\n- b\n", "not a YAML mapping"),
])
def test_migrate_refuses_unknown_versions(tmp_path, text, message):
    spec = tmp_path / "s.yaml"
    spec.write_text(text)
    result = hpcconf("migrate", str(spec))
    assert result.exit_code == 2 and message in result.output
    assert spec.read_text() == text


def test_migration_steps_keep_the_users_comments(tmp_path, monkeypatch):
    """The migrate path for a future format: a step edits the round-trip tree; comments, order and quotes stay."""
    def rename_nodes(data):
        for pool in data["pools"]:
            pool.insert(list(pool).index("nodes"), "count", pool.pop("nodes"))

    monkeypatch.setitem(migrations.MIGRATIONS, "hpcconf/v0", ("hpcconf/v1", rename_nodes))
    old = (REPO / "examples" / "ndmv4-aks.yaml").read_text()
    assert "count: 2" in old
    spec = tmp_path / "s.yaml"
    spec.write_text(old.replace("apiVersion: hpcconf/v1", "apiVersion: hpcconf/v0").replace("count: 2", "nodes: 2"))
    result = hpcconf("migrate", str(spec), "--write")
    assert result.exit_code == 0 and "migrated (hpcconf/v0 -> hpcconf/v1)" in result.output
    assert spec.read_text() == old  # byte for byte: every comment kept
    assert load_spec(spec).cluster.pools[0].count == 2


def test_a_future_api_version_is_refused_at_build_with_a_pointer(tmp_path):
    spec = tmp_path / "s.yaml"
    spec.write_text((REPO / "examples" / "ndmv4-aks.yaml").read_text().replace("hpcconf/v1", "hpcconf/v2"))
    result = hpcconf("build", str(spec), "--out", str(tmp_path / "out"))
    assert result.exit_code == 2 and "HPC007" in result.output and "hpcconf/v1" in result.output


def test_a_bad_option_is_reported_on_the_line_it_would_fill(tmp_path):
    target = tmp_path / "x.yaml"
    result = hpcconf("init", "--sku", "Standard_ND96isr_H100_v5", "--location", "not a region", "-o", str(target))
    assert result.exit_code == 2
    assert "x.yaml (not written):12:13: error[HPC005]" in result.stderr
    assert "location: not a region" in result.stderr and "hpcconf-init-" not in result.stderr
    assert not target.exists()


@pytest.mark.parametrize("sku, platform, reason", [
    ("Standard_ND96isr_MI300X_v5", "azhop", "has AMD GPUs (AMD Instinct MI300X, collectives through RCCL) but az-hop's queue images"),
    ("Standard_ND128isr_NDR_GB200_v6", "aks", "NVLink domain holds 72 GPUs across 18 VMs of 4"),
    ("Standard_ND128isr_GB300_v6", "azhop", "NVLink domain holds 72 GPUs"),
])
def test_init_refuses_hardware_no_target_compiles_for(tmp_path, sku, platform, reason):
    result = hpcconf("init", "--sku", sku, "--platform", platform, "-o", str(tmp_path / "spec.yaml"))
    assert result.exit_code == 2, result.output
    assert reason in result.output and "cannot work on" in result.output
    assert not (tmp_path / "spec.yaml").exists()


@pytest.mark.parametrize("sku", ["Standard_ND128isr_NDR_GB200_v6", "Standard_ND128isr_GB300_v6"])
def test_init_scaffolds_nvl72_sizes_on_slurm(tmp_path, sku):
    result = hpcconf("init", "--sku", sku, "--nodes", "18", "--platform", "slurm", "-o", str(tmp_path / "spec.yaml"))
    assert result.exit_code == 0, result.output
    assert f"sku: {sku}" in (tmp_path / "spec.yaml").read_text()


@pytest.mark.parametrize("platform", ["aks", "slurm"])
def test_init_for_mi300x_writes_an_amd_spec_that_builds(tmp_path, platform):
    target = tmp_path / "spec.yaml"
    result = hpcconf("init", "--sku", "Standard_ND96isr_MI300X_v5", "--platform", platform, "-o", str(target))
    assert result.exit_code == 0, result.output
    text = target.read_text(encoding="utf-8")
    assert "gpu_operator:" not in text.replace("amd_gpu_operator:", "") and "nccl_tests:" not in text
    if platform == "aks":
        assert "amd_gpu_operator: 1.5.1" in text and "base: rocm/dev-ubuntu-22.04:6.4.1" in text
        assert "name: rccl-tests" in text
    assert hpcconf("build", str(target), "-o", str(tmp_path / "out")).exit_code == 0


def test_init_with_sku_dir_records_it_and_builds(tmp_path, monkeypatch):
    from hpcconf.resources import resource_dir

    skus = tmp_path / "my-skus"
    skus.mkdir()
    text = (resource_dir("skus") / "Standard_ND96isr_H100_v5.yaml").read_text(encoding="utf-8")
    (skus / "Standard_ND96isr_H100_v5_custom.yaml").write_text(
        text.replace("name: Standard_ND96isr_H100_v5\n", "name: Standard_ND96isr_H100_v5_custom\n"), encoding="utf-8")
    monkeypatch.chdir(tmp_path)
    result = hpcconf("init", "--sku", "Standard_ND96isr_H100_v5_custom", "--platform", "slurm",
                     "--sku-dir", "my-skus", "-o", "specs/spec.yaml")
    assert result.exit_code == 0, result.output
    spec = (tmp_path / "specs" / "spec.yaml").read_text(encoding="utf-8")
    assert "sku_dirs: [../my-skus]" in spec
    assert hpcconf("build", "specs/spec.yaml", "-o", "out").exit_code == 0
