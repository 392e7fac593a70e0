"""The compatibility tables (hpcconf/data/compat) against the upstream files they were read from,
and the lookups resolve and lint use."""

from __future__ import annotations

import datetime as dt
import re
from pathlib import Path

import pytest
from ruamel.yaml import YAML

from hpcconf.catalog import Catalog
from hpcconf.knowledge import charts, compat

UPSTREAM = Path(__file__).resolve().parents[2] / "shared" / "upstream"
needs_upstream = pytest.mark.skipif(not UPSTREAM.is_dir(), reason="../shared/upstream is absent (upstream oracles)")


def test_every_row_has_a_source():
    rows = [*compat.gpu_architectures(), *compat.legacy_pins(), *compat.hca_generations(),
            *compat.aks_default_ubuntu_table(), *compat.doca_driver_tags(), *compat.ngc_pytorch_releases(),
            *compat.cyclecloud_slurm_gpu_count_fixes(), *compat.aks_kubernetes_support_table()]
    short = [r for r in rows if len(r.source) < 10]
    assert rows and not short, short
    for text in (Path(compat.DATA_DIR) / name for name in ("retirements.yaml",)):
        data = YAML(typ="safe").load(text.read_text())
        assert all(row["source"] for section in data.values() for row in section)


def test_user_facing_sources_cite_public_places_only():
    for path in Path(compat.DATA_DIR).glob("*.yaml"):
        text = path.read_text()
        assert not re.search(r"seed \d|research/|shared/upstream", text), path.name


@needs_upstream
@pytest.mark.parametrize("tag", ["v23.3.2", "v23.6.1", "v26.7.0"])
def test_gpu_operator_default_driver_matches_the_chart_values(tag):
    values = YAML(typ="safe").load((UPSTREAM / "k8s" / "gpu-operator" / f"values-{tag}.yaml").read_text())
    assert compat.gpu_operator_default_driver(tag.lstrip("v")) == str(values["driver"]["version"])


@needs_upstream
def test_legacy_pin_is_a_default_some_gpu_operator_release_ships():
    matrix = YAML(typ="safe").load((UPSTREAM / "k8s" / "chart-key-matrix.yaml").read_text())
    defaults = {str(v) for v in matrix["gpu-operator"]["keys"]["driver.version"]["default"].values()}
    for pin in compat.legacy_pins():
        assert pin.driver in defaults and compat.driver_branch(pin.driver) == pin.branch


@needs_upstream
def test_hca_and_gpu_facts_match_the_sku_facts_file():
    facts = YAML(typ="safe").load((UPSTREAM / "skus" / "azure-gpu-skus.yaml").read_text())["skus"]
    ncv3 = facts["Standard_NC24rs_v3"]
    assert compat.hca_generation(ncv3["ib"]["value"]["hca"]).has_current_rdma_stack is False
    assert "2025-09-30" in ncv3["family"]["note"] and compat.sku_retirement("Standard_NC24rs_v3").date == dt.date(2025, 9, 30)
    for name in ("Standard_ND96asr_v4", "Standard_ND96amsr_A100_v4"):
        assert compat.hca_generation(facts[name]["ib"]["value"]["hca"]).has_current_rdma_stack


@needs_upstream
def test_doca_tag_rows_are_the_tags_network_operator_releases_pair():
    assert {t.tag for t in compat.doca_driver_tags()} <= set(charts.DOCA_DRIVER_BY_RELEASE.values())


@needs_upstream
def test_azhop_template_default_infra_image_is_the_end_of_life_one():
    template = (UPSTREAM / "azhop" / "az-hop" / "config.tpl.yml").read_text()
    default = re.search(r'^linux_base_image: "([^"]+)"', template, re.M).group(1)
    assert compat.image_retirement(default).name == "CentOS 7"
    assert "almalinux:almalinux-x86_64:8_7-gen2:latest" in template  # the replacement we default to


def test_every_catalog_gpu_has_an_architecture():
    for sku in Catalog.load():
        if sku.gpu.vendor == "nvidia":  # sm is a CUDA compute capability: NVIDIA GPUs only
            assert compat.gpu_architecture(sku.gpu.sm) is not None, sku.name


@pytest.mark.parametrize("sm, driver, drives", [(70, "595.91.07", False), (70, "580.126.20", True),
                                                (80, "595.91.07", True), (90, "525.60.13", True), (1, "1.0", None)])
def test_driver_drives(sm, driver, drives):
    assert compat.driver_drives(sm, driver) is drives


@pytest.mark.parametrize("image, tag, nccl", [("nvcr.io/nvidia/pytorch:24.05-py3", "24.05", "2.21.5"),
                                              ("nvidia/pytorch:23.03-py3", "23.03", None),  # no readable source: unknown
                                              ("nvcr.io/nvidia/pytorch:99.01-py3", "99.01", None),
                                              ("myacr.azurecr.io/pytorch:24.05-py3", None, None)])
def test_ngc_release(image, tag, nccl):
    assert compat.ngc_pytorch_tag(image) == tag
    release = compat.ngc_release(image)
    assert (release.nccl if release else None) == nccl


@pytest.mark.parametrize("k8s, ubuntu", [("1.24", None), ("1.25", "22.04"), ("1.34.2", "22.04"), ("1.35", "24.04")])
def test_aks_default_ubuntu(k8s, ubuntu):
    row = compat.aks_default_ubuntu(k8s)
    assert (row.ubuntu if row else None) == ubuntu


@pytest.mark.parametrize("version, needs_fix", [("3.0.4", True), ("3.0.5", True), ("3.0.6", False), ("4.0.1", False)])
def test_cyclecloud_slurm_gpu_count(version, needs_fix):
    assert (compat.cyclecloud_slurm_gpu_count_fix("Standard_ND96isr_H100_v5", version) is not None) is needs_fix
    assert compat.cyclecloud_slurm_gpu_count_fix("Standard_ND96amsr_A100_v4", version) is None


def test_retirement_depends_on_the_date():
    retired = compat.sku_retirement("Standard_NC24rs_v3")
    assert not retired.passed(dt.date(2025, 9, 29)) and retired.passed(dt.date(2025, 9, 30))
    sku = Catalog.load().get("Standard_NC24rs_v3")
    assert "ConnectX-3" in compat.unsupported_reason(sku, "slurm", today=dt.date(2025, 1, 1))
    assert compat.unsupported_reason(sku, "slurm", infiniband=False, today=dt.date(2025, 1, 1)) is None
    assert compat.image_retirement("microsoft-dsvm:ubuntu-hpc:2004:20.04.2023031501").name == "Ubuntu 20.04"
    assert compat.image_retirement("microsoft-dsvm:ubuntu-hpc:2204:latest") is None


def test_aks_calendar_months_end_on_their_last_day_and_lts_extends_creation():
    row = compat.aks_kubernetes_support("1.28.5")
    assert row is not None and row.end_of_life == dt.date(2025, 1, 31) and row.lts_end_of_life == dt.date(2026, 2, 28)
    assert row.creatable(dt.date(2025, 1, 31)) == "yes"
    assert row.creatable(dt.date(2025, 2, 1)) == "lts"
    assert row.creatable(dt.date(2026, 3, 1)) == "no"
    assert compat.aks_kubernetes_support("1.30").end_of_life == dt.date(2025, 8, 22)  # an explicit day wins
    assert compat.aks_kubernetes_support("1.26").creatable(dt.date(2024, 4, 1)) == "no"  # no LTS before 1.27
    assert compat.aks_kubernetes_support("1.99") is None


def test_aks_calendar_rows_are_ordered_and_each_lts_outlives_its_end_of_life():
    rows = compat.aks_kubernetes_support_table()
    minors = [tuple(int(p) for p in r.minor.split(".")) for r in rows]
    assert minors == sorted(minors)
    assert all(r.lts_end_of_life is None or r.lts_end_of_life > r.end_of_life for r in rows)


def test_hpc207_reports_the_lts_window_with_its_option(monkeypatch, tmp_path):
    from hpcconf.lint.context import LintContext
    from hpcconf.lint.engine import lint_paths
    from hpcconf.lint.rules import compat as compat_rules

    monkeypatch.setattr(compat_rules, "_today", lambda: dt.date(2026, 12, 1))
    good = Path(__file__).parent / "rules" / "HPC207" / "good.yaml"
    spec = tmp_path / "spec.yaml"
    spec.write_text(good.read_text().replace("aks: {}", 'aks: {kubernetes_version: "1.33"}'))
    found = [f for f in lint_paths([str(spec)], LintContext()).findings if f.code == "HPC207"]
    assert len(found) == 1
    assert "2026-06-30" in found[0].message and "until 2027-06-30" in found[0].message
    assert "--k8s-support-plan AKSLongTermSupport" in (found[0].hint or "")
