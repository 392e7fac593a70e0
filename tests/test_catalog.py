"""The SKU catalog: every file loads, facts agree with the research tables and Azure's image
files, lookups forgive case and the Standard_ prefix, and bad files point at the bad line."""

from __future__ import annotations

import csv
import fnmatch
import re
import shutil
from pathlib import Path

import pytest
from conftest import REPO, shared_path
from ruamel.yaml import YAML

from hpcconf.catalog import Catalog, Sku, UnknownSku, cpumask_groups, load_sku_file, parse_cpulist
from hpcconf.diagnostics import HpcconfError
from hpcconf.resources import resource_dir

REQUIRED_SKUS = [
    "Standard_ND40rs_v2", "Standard_NC24rs_v3", "Standard_ND96asr_v4", "Standard_ND96amsr_A100_v4",
    "Standard_NC24ads_A100_v4", "Standard_NC48ads_A100_v4", "Standard_NC96ads_A100_v4",
    "Standard_ND96isr_H100_v5", "Standard_ND96isr_H200_v5", "Standard_NC40ads_H100_v5",
    "Standard_NC80adis_H100_v5", "h100-80gb-sxm-ib.8x",
]


@pytest.fixture(scope="module")
def catalog() -> Catalog:
    return Catalog.load()


@pytest.fixture(scope="module")
def research_skus() -> dict:
    path = shared_path("upstream", "skus", "azure-gpu-skus.yaml")
    return YAML(typ="safe").load(path.read_text())["skus"]


def value(entry):
    return entry["value"] if isinstance(entry, dict) and "value" in entry else entry


# --------------------------------------------------------------------------- loading

def test_every_sku_file_loads_and_the_required_ones_exist(catalog):
    files = sorted(p.name for p in resource_dir("skus").glob("*.yaml"))
    assert len(catalog) == len(files)
    assert set(REQUIRED_SKUS) <= set(catalog.names())


def test_resource_dir_finds_the_checkout_skus():
    assert resource_dir("skus") == REPO / "skus"
    assert (resource_dir("templates") / "nccl").is_dir()


def test_every_file_names_its_sources_in_a_leading_comment():
    for path in resource_dir("skus").glob("*.yaml"):
        first = path.read_text().splitlines()[0]
        assert first.startswith("# "), path.name
        assert "Sources:" in path.read_text().split("\nname:")[0], path.name


def test_every_fact_is_cited(catalog):
    for sku in catalog:
        for fact in ("family", "gpu", "nvlink"):
            assert sku.cites.get(fact), (sku.name, fact)
        for fact in ("vcpus", "memory_gib", "infiniband", "topology"):
            if getattr(sku, fact) is not None:
                assert sku.cites.get(fact), (sku.name, fact)
        if sku.numa:
            assert sku.cites.get("numa"), sku.name
        if sku.nccl.conf or sku.nccl.topo_family:
            assert sku.cites.get("nccl"), sku.name


# --------------------------------------------------------------------------- facts vs research tables

def _research_entry(research_skus: dict, sku) -> dict:
    key = sku.name if sku.provider == "azure" else f"{sku.provider}/{sku.name}"
    return research_skus[key]


@pytest.mark.parametrize("name", REQUIRED_SKUS)
def test_hardware_facts_agree_with_research_table(catalog, research_skus, name):
    sku = catalog.get(name)
    entry = _research_entry(research_skus, sku)
    gpu = value(entry["gpu"])
    assert (sku.gpu.count, sku.gpu.memory_gb) == (gpu["count"], gpu["memory_gb"])
    assert sku.gpu.model == gpu["model"]
    research_vcpus = value(entry["vcpus"])
    if research_vcpus is None:  # the table has no value; ours must then cite its own source
        assert sku.vcpus is None or sku.cites.get("vcpus"), sku.name
    else:
        assert sku.vcpus == research_vcpus
    assert sku.memory_gib == value(entry["memory_gib"])
    assert sku.family == value(entry["family"])
    ib = value(entry["ib"])
    if ib in (None, "none"):
        assert sku.infiniband is None
    else:
        assert (sku.infiniband.count, sku.infiniband.rate, sku.infiniband.gbps) == (ib["count"], ib["type"], ib["gbps"])
        if isinstance(ib.get("devices"), list):
            assert sku.infiniband.devices == ib["devices"]
        elif ib.get("devices") == "mlx5_ib0..7":
            assert sku.infiniband.devices == [f"mlx5_ib{i}" for i in range(8)]
    numa_nodes = value(entry.get("numa_nodes"))
    if isinstance(numa_nodes, int):
        assert len(sku.numa) == numa_nodes


def _resolve_same_as(research_skus: dict, entry: dict, key: str):
    data = value(entry.get(key))
    if isinstance(data, str) and data.startswith("same as "):
        data = value(research_skus[data[len("same as "):]][key])
    return data


@pytest.mark.parametrize("name", [n for n in REQUIRED_SKUS if n.startswith("Standard_ND") or n == "Standard_NC96ads_A100_v4"])
def test_pci_placement_agrees_with_research_table(catalog, research_skus, name):
    sku = catalog.get(name)
    entry = research_skus[name]
    topo = sku.topology
    gpus = {f"numa{n.numaid}": n.gpus for n in topo.numa if n.gpus}
    assert gpus == _resolve_same_as(research_skus, entry, "gpu_pci")
    nics = _resolve_same_as(research_skus, entry, "nic_pci")
    if nics is not None:
        assert {f"numa{n.numaid}": n.hcas for n in topo.numa if n.hcas} == nics


@pytest.mark.parametrize("name", REQUIRED_SKUS)
def test_image_nccl_conf_agrees_with_research_table(catalog, research_skus, name):
    sku = catalog.get(name)
    listed = value(_research_entry(research_skus, sku).get("azhpc_nccl_conf"))
    if sku.provider != "azure" or listed is None:
        assert sku.nccl.topo_family is None
        return
    assert sku.nccl.image_conf() == dict(line.split("=", 1) for line in listed)


def _nhc_rows() -> dict[str, dict]:
    path = shared_path("upstream", "skus", "azurehpc-nhc-thresholds.tsv")
    lines = [line for line in path.read_text().splitlines() if not line.startswith("#")]
    return {row["sku_conf"]: row for row in csv.DictReader(lines, delimiter="\t")}


@pytest.mark.parametrize("name", [n for n in REQUIRED_SKUS if n.startswith("Standard_")])
def test_facts_agree_with_nhc_thresholds(catalog, name):
    sku = catalog.get(name)
    row = _nhc_rows()[sku.short_name.lower()]
    sockets, cores, threads = map(int, row["cpuinfo_sockets_cores_threads"].split())
    assert sku.vcpus == cores == threads
    assert sku.gpu.count == int(row["gpu_count"])
    nhc_bw = [bw for bw in sku.busbw if bw.kind == "nhc_min"]
    if row["nccl_allreduce_min_busbw_GBps"]:
        assert len(nhc_bw) == 1
        assert nhc_bw[0].gbps == float(row["nccl_allreduce_min_busbw_GBps"].split()[0])
        assert nhc_bw[0].message_size == row["nccl_msg_size"]
        assert nhc_bw[0].nodes == 1
    else:
        assert nhc_bw == []
    if row["ib_rate_Gbps_per_port"]:
        assert sku.infiniband.gbps == int(row["ib_rate_Gbps_per_port"])
        ports = row["ib_ports"].split()[0]
        expected = [f"mlx5_ib{i}" for i in range(8)] if ports == "mlx5_ib0..7" else [ports]
        assert sku.infiniband.devices == expected


# --------------------------------------------------------------------------- facts vs azhpc-images

def _azhpc_conf(family: str) -> dict[str, str]:
    text = shared_path("upstream", "nccl", "azhpc-images", "nccl-conf", f"{family}.nccl.conf").read_text()
    return dict(line.split("=", 1) for line in text.splitlines() if line and not line.startswith("#"))


def _family_globs() -> list[tuple[str, str]]:
    path = shared_path("upstream", "nccl", "azhpc-images", "sku-family-map.tsv")
    rows = csv.DictReader(path.read_text().splitlines(), delimiter="\t")
    return [(row["vm_size_glob"], row["topo_family"]) for row in rows
            if "topo.xml" in row["files_linked_under_opt_microsoft"] and "(" not in row["vm_size_glob"]]


@pytest.mark.parametrize("family", ["ndv2", "ndv4", "ndv5", "ncv4"])
def test_nccl_conf_defaults_equal_azhpc_images(catalog, family):
    skus = [sku for sku in catalog if sku.nccl.topo_family == family]
    assert skus, family
    for sku in skus:
        assert sku.nccl.image_dir == f"/opt/microsoft/{family}"
        assert sku.nccl.image_conf() == _azhpc_conf(family), sku.name
        assert sku.nccl.image_conf()["NCCL_TOPO_FILE"] == sku.nccl.image_dir + "/topo.xml"


def test_topo_family_follows_azhpc_images_vm_size_globs(catalog):
    globs = _family_globs()
    assert {family for _, family in globs} == {"ndv2", "ndv4", "ndv5", "ncv4"}
    for sku in catalog:
        if sku.provider != "azure":
            continue
        matched = [family for glob, family in globs if fnmatch.fnmatchcase(sku.name.lower(), glob)]
        assert sku.nccl.topo_family == (matched[0] if matched else None), sku.name


def test_crusoe_nccl_conf_is_seed_002(catalog):
    sku = catalog.get("crusoe-h100-80gb-sxm-ib.8x")
    text = shared_path("seeds", "002_390e0036d47c531c.txt").read_text()
    seed = dict(re.findall(r"^(NCCL_[A-Z_]+)=(\S+)$", text, flags=re.M))
    assert sku.nccl.image_conf() == seed
    assert sku.nccl.algo == "NVLSTree"
    assert sku.infiniband.exclude_hcas == ["mlx5_0"]


# --------------------------------------------------------------------------- NUMA layout

@pytest.mark.parametrize("name, gpus", [("Standard_NC48ads_A100_v4", 2), ("Standard_NC96ads_A100_v4", 4)])
def test_numa_layout_reproduces_seed_slurm_pin_masks(catalog, name, gpus):
    """seed 000 pins one task per GPU/NUMA node with srun --cpu-bind=mask_cpu:$PIN_MASK."""
    text = shared_path("seeds", "000_7e98fd9eb232997b.txt").read_text()
    masks = {len(m.split(",")): m.split(",") for m in re.findall(r"PIN_MASK='([^']+)'", text)}
    sku = catalog.get(name)
    ours = [hex(node.cpu_mask()) for node in sku.numa]
    assert ours == masks[gpus]


def test_cpumask_format():
    assert cpumask_groups(range(0, 24), 96) == "00000000,00000000,00ffffff"
    assert cpumask_groups(range(72, 96), 96) == "ffffff00,00000000,00000000"
    assert cpumask_groups(range(20, 40), 40) == "000000ff,fff00000"
    assert cpumask_groups([0], 1) == "00000001"
    assert parse_cpulist("0-2,8,10-11") == [0, 1, 2, 8, 10, 11]
    with pytest.raises(ValueError):
        parse_cpulist("3-1")


# --------------------------------------------------------------------------- lookup

def test_lookup_by_short_name_and_any_case(catalog):
    for query in ["Standard_NC48ads_A100_v4", "NC48ads_A100_v4", "nc48ads_a100_v4", "STANDARD_NC48ADS_A100_V4"]:
        assert catalog.get(query).name == "Standard_NC48ads_A100_v4"
    for query in ["h100-80gb-sxm-ib.8x", "crusoe-h100-80gb-sxm-ib.8x", "crusoe/H100-80GB-SXM-IB.8x"]:
        assert catalog.get(query).name == "h100-80gb-sxm-ib.8x"
    assert "nd96isr_h200_v5" in catalog


def test_unknown_sku_suggests_close_names(catalog):
    with pytest.raises(KeyError) as info:
        catalog.get("Standard_NC48ad_A100_v4")
    err = info.value
    assert isinstance(err, UnknownSku)
    assert err.suggestions[0] == "Standard_NC48ads_A100_v4"
    assert "did you mean Standard_NC48ads_A100_v4" in str(err)
    with pytest.raises(UnknownSku) as info:
        catalog.get("Standard_F2s_v2")
    assert "Standard_F2s_v2" in str(info.value)


# --------------------------------------------------------------------------- user directories and errors

def _copy(tmp_path: Path, name: str) -> Path:
    target = tmp_path / f"{name}.yaml"
    shutil.copy(resource_dir("skus") / f"{name}.yaml", target)
    return target


def test_user_sku_dir_overrides_and_adds(tmp_path):
    changed = _copy(tmp_path, "Standard_ND96asr_v4")
    changed.write_text(changed.read_text().replace("memory_gib: 900", "memory_gib: 901"))
    new = tmp_path / "Standard_ND96asr_v4_custom.yaml"
    new.write_text(changed.read_text().replace("name: Standard_ND96asr_v4", "name: Standard_ND96asr_v4_custom"))
    catalog = Catalog.load(extra_dirs=[tmp_path])
    assert catalog.get("ND96asr_v4").memory_gib == 901
    assert catalog.get("nd96asr_v4_custom").memory_gib == 901
    assert catalog.get("ND96amsr_A100_v4").memory_gib == 1900  # others untouched
    assert catalog.files["Standard_ND96asr_v4"] == changed
    assert Catalog.load().get("ND96asr_v4").memory_gib == 900


def _error(tmp_path: Path, text: str, name: str = "Standard_Bad_v1") -> HpcconfError:
    directory = tmp_path / f"case{len(list(tmp_path.iterdir()))}"
    directory.mkdir()
    (directory / f"{name}.yaml").write_text(text)
    with pytest.raises(HpcconfError) as info:
        Catalog.load(extra_dirs=[directory])
    return info.value


def _bad_copy(tmp_path: Path, old: str, new: str) -> tuple[str, int]:
    text = (resource_dir("skus") / "Standard_NC24ads_A100_v4.yaml").read_text()
    assert old in text
    text = text.replace(old, new)
    line = next(i for i, ln in enumerate(text.splitlines(), 1) if new.splitlines()[0] in ln)
    return text, line


def test_malformed_yaml_reports_line_and_column(tmp_path):
    err = _error(tmp_path, "name: Standard_Bad_v1\ngpu: {model: x, count: 1\n", "Standard_Bad_v1")
    diag = err.diagnostics[0]
    assert diag.file.endswith("Standard_Bad_v1.yaml")
    assert diag.line is not None and diag.line >= 2 and diag.column


def test_invalid_value_points_at_its_line(tmp_path):
    text, line = _bad_copy(tmp_path, "count: 1, memory_gb: 80", "count: many, memory_gb: 80")
    err = _error(tmp_path, text, "Standard_NC24ads_A100_v4")
    diag = err.diagnostics[0]
    assert (diag.line, diag.code) == (line, "HPC100")
    assert "gpu.count" in diag.message
    assert diag.column == text.splitlines()[line - 1].index("many") + 1


def test_unknown_key_points_at_the_key(tmp_path):
    text, line = _bad_copy(tmp_path, "memory_gib: 220", "memory_gib: 220\nmemroy_gib: 220")
    err = _error(tmp_path, text, "Standard_NC24ads_A100_v4")
    assert [(d.line, d.column) for d in err.diagnostics] == [(line + 1, 1)]
    assert "memroy_gib" in err.diagnostics[0].message


def test_cross_field_rules_are_enforced(tmp_path):
    text, line = _bad_copy(tmp_path, "nccl: {graph: false}", "nccl: {graph: true}")
    err = _error(tmp_path, text, "Standard_NC24ads_A100_v4")
    assert "graph" in err.diagnostics[0].message
    sku_text = (resource_dir("skus") / "Standard_NC96ads_A100_v4.yaml").read_text()
    err = _error(tmp_path, sku_text.replace("link_speed: 16 GT/s", 'link_speed: ""'), "Standard_NC96ads_A100_v4")
    assert "6 Gb/s per lane" in err.diagnostics[0].message
    assert err.diagnostics[0].line == next(i for i, ln in enumerate(sku_text.splitlines(), 1) if "link_speed:" in ln)


def test_file_name_must_match_sku_name(tmp_path):
    text = (resource_dir("skus") / "Standard_NC24ads_A100_v4.yaml").read_text()
    err = _error(tmp_path, text, "Standard_NC24ads_A100_v5")
    assert "does not match" in err.diagnostics[0].message


# -- vendor, architecture, NVLink domain, lifecycle ------------------------------------------------

def test_vendor_decides_collective_and_pci_vendor():
    from hpcconf.catalog import Gpu

    amd = Gpu.model_validate({"vendor": "amd", "model": "MI300X", "count": 8, "memory_gb": 192})
    assert (amd.collective, amd.pci_vendor, amd.sm) == ("rccl", "0x1002", None)
    nvidia = Gpu.model_validate({"model": "H100", "count": 8, "memory_gb": 80, "sm": 90})
    assert (nvidia.vendor, nvidia.collective, nvidia.pci_vendor) == ("nvidia", "nccl", "0x10de")
    with pytest.raises(ValueError, match="does not run on amd"):
        Gpu.model_validate({"vendor": "amd", "model": "MI300X", "count": 8, "memory_gb": 192, "collective": "nccl"})
    with pytest.raises(ValueError, match="needs sm"):
        Gpu.model_validate({"model": "H100", "count": 8, "memory_gb": 80})
    with pytest.raises(ValueError, match="only NVIDIA"):
        Gpu.model_validate({"vendor": "amd", "model": "MI300X", "count": 8, "memory_gb": 192, "sm": 94})


def test_nvl72_domain_spans_vms_and_hgx_domain_is_the_vm(catalog):
    gb200 = catalog.get("Standard_ND128isr_NDR_GB200_v6")
    assert (gb200.cpu.arch, gb200.nvlink_domain_gpus, gb200.nvlink_spans_nodes) == ("arm64", 72, True)
    h100 = catalog.get("Standard_ND96isr_H100_v5")
    assert (h100.cpu.arch, h100.nvlink_domain_gpus, h100.nvlink_spans_nodes) == ("x86_64", 8, False)
    assert catalog.get("Standard_NC40ads_H100_v5").nvlink_domain_gpus == 1
    mi300x = catalog.get("Standard_ND96isr_MI300X_v5")
    assert (mi300x.gpu.vendor, mi300x.gpu.collective) == ("amd", "rccl")


def test_domain_must_hold_whole_vms_and_topology_arch_must_match(catalog):
    data = catalog.get("Standard_ND96isr_H100_v5").model_dump(mode="json", exclude_none=True)
    data["nvlink"]["domain_gpus"] = 12
    with pytest.raises(ValueError, match="not a multiple of gpu.count"):
        Sku.model_validate(data)
    data = catalog.get("Standard_ND96isr_H100_v5").model_dump(mode="json", exclude_none=True)
    data["cpu"] = {"arch": "arm64"}
    with pytest.raises(ValueError, match="contradicts cpu.arch"):
        Sku.model_validate(data)


def test_lifecycle_comes_from_the_retirement_table_for_azure_sizes(catalog):
    from hpcconf.knowledge.compat import sku_retirement

    for path in resource_dir("skus").glob("*.yaml"):
        sku = load_sku_file(path)
        if sku.provider == "azure":
            assert sku.lifecycle is None, f"{path.name}: lifecycle comes from retirements.yaml, not the SKU file"
    nc24 = catalog.get("Standard_NC24rs_v3")
    assert nc24.lifecycle is not None and nc24.lifecycle.date.isoformat() == "2025-09-30"
    assert nc24.lifecycle_status() == "retired" and nc24.lifecycle.source == sku_retirement("Standard_NC24rs_v3").source
    assert all(sku.lifecycle is not None for sku in catalog)
    assert catalog.get("Standard_ND96isr_H200_v5").lifecycle_status() == "available"


def test_retiring_becomes_retired_after_its_date():
    import datetime

    from hpcconf.catalog import Lifecycle

    life = Lifecycle(status="retiring", date=datetime.date(2030, 1, 1), source="https://example.invalid/notice")
    assert life.effective_status(datetime.date(2029, 12, 31)) == "retiring"
    assert life.effective_status(datetime.date(2030, 1, 1)) == "retired"
    with pytest.raises(ValueError, match="needs the date"):
        Lifecycle(status="retired")


def test_lazy_package_index_equals_a_full_load():
    """Catalog.load parses a package SKU on first lookup, from an index of each file's `name:` and
    `provider:` lines: the index must give the names, providers and lookup keys a full parse gives."""
    from hpcconf.catalog import _package_entries, _with_lifecycle, default_sku_dir

    parsed = {sku.name: sku for sku in map(load_sku_file, sorted(default_sku_dir().glob("*.yaml")))}
    entries = _package_entries()
    assert {name: provider for name, (provider, _) in entries.items()} == \
        {name: sku.provider for name, sku in parsed.items()}
    lazy = Catalog.load()
    assert lazy._loaded == {}  # nothing parsed until asked
    eager = Catalog({name: _with_lifecycle(sku) for name, sku in parsed.items()},
                    {name: path for name, (_, path) in entries.items()})
    assert lazy._index == eager._index and lazy.names() == eager.names() and len(lazy) == len(eager)
    lazy.get("nd96asr_v4")
    assert list(lazy._loaded) == ["Standard_ND96asr_v4"]
    assert list(lazy) == list(eager)
