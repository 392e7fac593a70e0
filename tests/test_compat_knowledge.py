"""The compatibility tables (hpcconf/data/compat) against the upstream files they were read from,
and the lookups resolve and lint use."""

from __future__ import annotations

import datetime as dt
import json
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
            *compat.cyclecloud_slurm_gpu_count_fixes(), *compat.aks_kubernetes_support_table(),
            *compat.marketplace_pins(), *compat.gpu_operator_os_table(), *compat.driver_image_os_table()]
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


# -- AzHOP marketplace pins, NGC 26.03, gpu-operator x node OS ------------------------------------------------

@pytest.mark.parametrize("image, floating, pinned", [
    ("microsoft-dsvm:ubuntu-hpc:2204:latest", True, "22.04.2024102301"),
    ("Microsoft-DSVM:Ubuntu-HPC:2204:Latest", True, "22.04.2024102301"),
    ("microsoft-dsvm:ubuntu-hpc:2404:latest", True, "24.04.2026072901"),
    ("microsoft-dsvm:ubuntu-hpc:2204:22.04.2024102301", False, "22.04.2024102301"),
    ("almalinux:almalinux-hpc:8_10-hpc-gen2:latest", True, None),
    ("/subscriptions/s/resourceGroups/r/providers/Microsoft.Compute/galleries/g/images/i/latest", False, None)])
def test_marketplace_pins(image, floating, pinned):
    assert compat.floating_marketplace_image(image) is floating
    pin = compat.marketplace_pin(image)
    assert (pin.version if pin else None) == pinned


def test_marketplace_pin_versions_carry_their_release_date():
    for pin in compat.marketplace_pins():
        os_version, stamp = pin.version.split(".", 2)[:2], pin.version.rsplit(".", 1)[1]
        assert pin.image.endswith(os_version[0] + os_version[1]), pin  # 22.04.* for sku 2204
        assert stamp[:8] == pin.published.strftime("%Y%m%d"), pin


def test_azhop_default_queue_images_are_pinned_and_explicit_choices_kept():
    from hpcconf.resolve.compat import supported_azhop_images
    from hpcconf.spec.azhop import AzhopSettings

    images = supported_azhop_images(AzhopSettings()).images
    assert images.gpu == images.cpu == "microsoft-dsvm:ubuntu-hpc:2204:22.04.2024102301"
    assert images.linux_base.endswith(":latest")  # infrastructure VMs are created once: no mixed queue
    chosen = supported_azhop_images(AzhopSettings(images={"gpu": "microsoft-dsvm:ubuntu-hpc:2204:latest"})).images
    assert chosen.gpu == "microsoft-dsvm:ubuntu-hpc:2204:latest"


def test_ngc_2603_row_matches_the_cuda_dl_page():
    release = compat.ngc_release("nvcr.io/nvidia/pytorch:26.03-py3")
    assert release is not None
    assert (release.cuda, release.nccl, release.hpcx, release.ubuntu) == ("13.2.0", "2.29.7", "2.26", "24.04")
    assert release.source.startswith("https://docs.nvidia.com/deeplearning/frameworks/")


@pytest.mark.parametrize("driver, missing", [("550.127.05", True), ("550.144.03", False), ("570.86.15", False),
                                             ("570.40.07", True), ("595.91.07", False), ("525.60.13", False)])
def test_driver_image_missing_for_ubuntu2404(driver, missing):
    assert (compat.driver_image_missing(driver, "ubuntu24.04") is not None) is missing
    assert compat.driver_image_missing(driver, "ubuntu22.04") is None  # the table says nothing about 22.04


def test_old_branches_and_operators_predate_ubuntu2404():
    assert compat.driver_branch_predates_os_images("525.60.13", "ubuntu24.04")
    assert not compat.driver_branch_predates_os_images("580.126.20", "ubuntu24.04")
    support = compat.gpu_operator_os_support("ubuntu24.04")
    assert support is not None and support.since == "25.3.0"
    assert compat.gpu_operator_os_support("ubuntu22.04") is None


def _lint_spec(tmp_path, text):
    from typer.testing import CliRunner

    from hpcconf.cli import app

    path = tmp_path / "cluster.yaml"
    path.write_text(text)
    result = CliRunner().invoke(app, ["lint", "--kind", "spec", "--format", "json", str(path)])
    return result.output


_SPEC_2404 = """apiVersion: hpcconf/v1
kind: Cluster
metadata: {{name: demo, location: eastus}}
platforms: [aks]
pools:
  - {{name: gpu, sku: Standard_ND96amsr_A100_v4, count: 2}}
versions:
  gpu_operator: {operator}
  gpu_driver: {driver}
  az_cli: 2.75.0
test_image: {{registry: demo.azurecr.io, tag: "24.05", base: "nvcr.io/nvidia/pytorch:24.05-py3"}}
aks:
  kubernetes_version: "{k8s}"
"""


@pytest.mark.parametrize("operator, driver, k8s, severity", [
    ("23.3.2", "525.60.13", "1.35", "warning"),  # the legacy example moved to Kubernetes 1.35
    ("26.7.0", "550.127.05", "1.35", "error"),
    ("26.7.0", "550.144.03", "1.35", None),
    ("23.3.2", "525.60.13", "1.34", None)])  # 1.34 gives Ubuntu 22.04 nodes
def test_hpc209_severity(tmp_path, operator, driver, k8s, severity):
    output = _lint_spec(tmp_path, _SPEC_2404.format(operator=operator, driver=driver, k8s=k8s))
    findings = [f for f in json.loads(output[output.index("{"):])["findings"] if f["code"] == "HPC209"] \
        if "{" in output else []
    assert [f["severity"] for f in findings] == ([severity] if severity else []), output


_SPEC_NGC = """apiVersion: hpcconf/v1
kind: Cluster
metadata: {{name: demo, location: eastus}}
platforms: [aks]
pools:
  - {{name: gpu, sku: Standard_ND96isr_H100_v5, count: 2}}
versions:
  az_cli: 2.75.0
{nccl}test_image: {{registry: demo.azurecr.io, tag: "26.03", base: "nvcr.io/nvidia/pytorch:26.03-py3"}}
"""


@pytest.mark.parametrize("nccl, codes", [("", []), ("  nccl: 2.29.7\n", []), ("  nccl: 2.28.9\n", ["HPC203"])])
def test_nccl_follows_the_2603_base_image(tmp_path, nccl, codes):
    output = _lint_spec(tmp_path, _SPEC_NGC.format(nccl=nccl))
    found = [f["code"] for f in json.loads(output[output.index("{"):])["findings"]] if "{" in output else []
    assert [c for c in found if c in ("HPC203", "HPC204")] == codes, output


def test_resolve_derives_nccl_from_the_2603_base_image():
    from hpcconf.resolve.compat import nccl_from_base_image
    from hpcconf.spec.model import Cluster

    spec = Cluster.model_validate(YAML(typ="safe").load(_SPEC_NGC.format(nccl="")))
    assert nccl_from_base_image(spec) == "2.29.7"
