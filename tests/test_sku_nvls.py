"""NVLink SHARP (``nvlink.nvls``) in the SKU catalog: stated, with a cited source, on the NVSwitch generations
public vendor evidence gives it (third-generation NVSwitch on HGX H100/H200, NVLink5 on B200 HGX and GB200
NVL72), stated false on A100's NVSwitch, and left unstated (None: unknown, not absent) where no source says."""

from __future__ import annotations

from pathlib import Path

from hpcconf.catalog import Catalog
from hpcconf.knowledge.nccl_bounds import nvls_possible

RULES = Path(__file__).resolve().parent / "rules"
NVLS_GPUS = ("H100", "H200", "B200", "GB200", "GB300")  # NVSwitch gen 3+ with SHARP, stated in public sources


def test_nvswitch_skus_of_nvls_gpus_state_nvls_with_a_source():
    catalog = Catalog.load()
    checked = []
    for name in catalog.names():
        sku = catalog.get(name)
        if not sku.nvlink.nvswitch or not sku.gpu.model.startswith(NVLS_GPUS):
            continue
        checked.append(name)
        assert sku.nvlink.nvls is True, f"{name}: nvlink.nvls not stated true"
    assert {"Standard_ND96isr_H100_v5", "Standard_ND96isr_H200_v5", "h200-141gb-sxm-ib.8x",
            "b200-180gb-sxm-ib.8x", "gb200-186gb-nvl-ib.4x", "Standard_ND128isr_NDR_GB200_v6",
            "Standard_ND128isr_GB300_v6"} <= set(checked)


def test_a100_nvswitch_states_no_nvls_and_an_unstated_nvls_is_unknown():
    catalog = Catalog.load()
    assert catalog.get("Standard_ND96asr_v4").nvlink.nvls is False
    # an NVSwitch SKU file as `hpcconf sku import` drafts it: nvls unstated
    imported = Catalog.load([RULES / "NCCL014" / "skus"]).get("Standard_ND128isr_Imported_v6")
    assert imported.nvlink.nvswitch and imported.nvlink.nvls is None
    possible, note = nvls_possible(imported)
    assert possible and "does not state NVLS" in note  # a ceiling takes the higher bound where unknown


def test_gb300_states_nvls_from_azure_s_own_runs() -> None:
    """Issue #25: GB300's nvls was unstated. Azure runs GB300 racks with NCCL_NVLS_ENABLE=1 (NCCL then sets NVLS up
    without asking the driver) and publishes ~937 GB/s across a rack, above one NVLink 5 direction (900)."""
    gb300 = Catalog.load().get("Standard_ND128isr_GB300_v6")
    assert gb300.nvlink.nvls is True
    cited = " ".join(gb300.sources[k] for k in gb300.cites["nvlink"])
    assert "NCCL_NVLS_ENABLE=1" in cited and "~937 GB/s" in cited and "src/transport/nvls.cc @v2.30.7-1" in cited
