"""Every catalog SKU x every platform it supports x (default versions, newest pinned versions):
the spec `hpcconf init` writes builds, and everything it compiles to lints with nothing above info.
A pair that cannot work is refused by `init` with the reason, and `lint` reports the reason as an error.

Built in process (init_context -> compile_spec -> lint_paths), in a tmp dir, so the whole matrix
stays fast.
"""

from __future__ import annotations

import pytest

from hpcconf.catalog import Catalog
from hpcconf.init_spec import _refusal, init_context, render_init_spec
from hpcconf.knowledge import charts, nccl_env
from hpcconf.lint.context import LintContext
from hpcconf.lint.engine import lint_paths
from hpcconf.pipeline import compile_spec

CATALOG = Catalog.load()
PLATFORMS = ("aks", "azhop", "slurm", "ccws")
PAIRS = [(name, platform) for name in CATALOG.names() for platform in PLATFORMS]



# Platforms whose artifacts are x86_64-only and leave NVLink at the VM: Slurm compiles arm64 (Grace)
# pools and NVL72 racks (IMEX peers, topology/block, MNNVL job settings).
X86_ONLY_PLATFORMS = {"aks", "azhop"}
# Platforms that create Azure VMs from the SKU name: a Crusoe (or imported, provider other) size is refused.
AZURE_ONLY_PLATFORMS = {"aks", "azhop", "ccws"}


def _expected_refusal(sku, platform: str) -> tuple[str, str] | None:
    """Pairs that cannot work, from the SKU's facts: the reason init gives and the error lint reports."""
    if sku.provider != "azure" and platform in AZURE_ONLY_PLATFORMS:
        return "Crusoe instance type" if sku.provider == "crusoe" else "not an Azure size", "SPEC080"
    if sku.lifecycle_status() == "retired":
        return f"retired on {sku.lifecycle.date.isoformat()}", "HPC200"
    if sku.gpu.vendor != "nvidia" and platform == "azhop":  # AKS and Slurm have AMD targets
        return "no Azure HPC image with ROCm", "SPEC030"
    if sku.gpu.vendor != "nvidia" and platform == "ccws":  # CCWS's portal images carry NVIDIA's driver
        return "carry NVIDIA's driver and NCCL", "SPEC030"  # with a custom ROCm image it builds (init names none)
    if sku.cpu.arch != "x86_64" and platform == "ccws":  # GB200/GB300: only with a custom image, which init does not name
        return f"host CPU is {sku.cpu.arch}", "SPEC031"
    if sku.nvlink_spans_nodes and platform in X86_ONLY_PLATFORMS:
        return "NVLink domain holds", "SPEC032"
    if sku.cpu.arch != "x86_64" and platform in X86_ONLY_PLATFORMS:
        return f"host CPU is {sku.cpu.arch}", "SPEC031"
    return None


REFUSED = {(name, platform): reason for name, platform in PAIRS
           if (reason := _expected_refusal(CATALOG.get(name), platform)) is not None}
# Pairs that work with a known, documented risk: the only finding above info allowed.
# HPC206 (cyclecloud-slurm 3.0.4 and a wrong GPU count) is information: the build writes the override script.
KNOWN_WARNINGS: dict[tuple[str, str], str] = {}
# Defects the matrix found outside the compatibility rules, left to their owners (xfail until fixed).
KNOWN_DEFECTS: dict[tuple[str, str], str] = {}  # none left: NC96ads on AKS ships no graph file since 0.2.0


def _newest_versions() -> dict[str, str]:
    """The newest release of every pinned component hpcconf has tables for."""
    return {"gpu_operator": charts.newest_version("gpu-operator"),
            "network_operator": charts.newest_version("network-operator"),
            "node_feature_discovery": charts.newest_version("node-feature-discovery"),
            "volcano": charts.newest_version("volcano")}


def _spec_text(sku_name: str, platform: str, newest: bool) -> str:
    sku = CATALOG.get(sku_name)
    context = init_context(sku, 2, [platform], "matrix", None, None, "spec.yaml", "test")
    if newest:
        pins = _newest_versions()
        for item in context["versions"]:
            if item["key"] in pins:
                item["value"] = pins[item["key"]]
    return render_init_spec(context)


def _findings_above_info(spec_path) -> list:
    result = lint_paths([str(spec_path)], LintContext())
    return [f for f in result.findings if f.severity.value != "info"]


@pytest.mark.parametrize("sku_name, platform", PAIRS)
@pytest.mark.parametrize("newest", [False, True], ids=["default", "newest"])
def test_pair_builds_and_lints_clean_or_is_refused(sku_name, platform, newest, tmp_path):
    sku = CATALOG.get(sku_name)
    refusal = _refusal(sku, [platform])
    spec = tmp_path / "spec.yaml"
    spec.write_text(_spec_text(sku_name, platform, newest), encoding="utf-8")
    if (sku_name, platform) in REFUSED:
        reason, code = REFUSED[(sku_name, platform)]
        assert refusal is not None and reason in refusal, refusal
        errors = [f for f in _findings_above_info(spec) if f.severity.value == "error"]
        assert code in {f.code for f in errors}, [(f.code, f.message) for f in errors]
        return
    assert refusal is None, refusal
    build = compile_spec(spec)
    assert build.artifacts, f"{sku_name} on {platform} built nothing"
    above = _findings_above_info(spec)
    allowed = KNOWN_WARNINGS.get((sku_name, platform))
    unexpected = [f"{f.file}:{f.line} {f.code} {f.message}" for f in above if f.code != allowed]
    if unexpected and (sku_name, platform) in KNOWN_DEFECTS:
        pytest.xfail(KNOWN_DEFECTS[(sku_name, platform)])
    assert not unexpected, unexpected


def test_matrix_covers_every_sku_and_the_newest_nccl_is_known():
    assert {name for name, _ in PAIRS} == set(CATALOG.names())
    assert len(PAIRS) >= 4 * 16  # every catalog SKU x aks, azhop, slurm, ccws (Crusoe on aks/azhop/ccws: refused)
    assert nccl_env.newest_version() is not None


def test_v100_pool_gets_an_r580_driver_pinned():
    spec_text = _spec_text("Standard_ND40rs_v2", "aks", newest=False)
    build = compile_spec("spec.yaml", text=spec_text, display_name="spec.yaml")
    assert build.cluster.versions.gpu_driver == "580.126.20"
    values = next(a for a in build.artifacts if a.path.endswith("gpu-operator-values.yaml")).content
    assert "version: 580.126.20" in values


def test_nccl_is_derived_from_the_base_image_when_unset():
    spec_text = _spec_text("Standard_ND96amsr_A100_v4", "aks", newest=False)
    unset = "\n".join(line for line in spec_text.splitlines() if not line.strip().startswith("nccl:")) + "\n"
    build = compile_spec("spec.yaml", text=unset, display_name="spec.yaml")
    assert build.cluster.versions.nccl == "2.21.5"  # nvcr.io/nvidia/pytorch:24.05-py3
