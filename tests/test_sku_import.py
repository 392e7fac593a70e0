"""`hpcconf sku collect-script` / `hpcconf sku import`: the real H200 collection round-trips into a SKU
that `init`/`build` use, the fixture HGX node's facts land where they belong, and malformed or
contradictory input stops with file:line."""

from __future__ import annotations

import os
import re
import shutil
import subprocess
from pathlib import Path

import pytest
from typer.testing import CliRunner

from hpcconf.catalog import Catalog, load_sku_file
from hpcconf.cli import app
from hpcconf.diagnostics import HpcconfError
from hpcconf.sku_import.command import collect_script_text
from hpcconf.sku_import.importer import import_sku

ROOT = Path(__file__).resolve().parent.parent
REAL = ROOT / "tests" / "data" / "sku-import" / "h200-2026-12-01"
REAL_B = REAL.with_name("h200-2026-12-01-b")  # the lead's run of the same script on another lease
HGX = ROOT / "tests" / "fixtures" / "sku-import" / "hgx-8gpu"
runner = CliRunner()


def cli(*args: str):
    return runner.invoke(app, list(args))


def _copy(src: Path, tmp_path: Path) -> Path:
    dst = tmp_path / src.name
    shutil.copytree(src, dst)
    return dst


# --------------------------------------------------------------------------- the real H200 node

@pytest.mark.parametrize("node", [REAL, REAL_B], ids=["h200-a", "h200-b"])
def test_real_h200_facts_equal_the_raw_files(node: Path) -> None:
    _, sku = import_sku(node, name="lab-h200", provider=None, family=None)
    xml = (node / "nvidia-smi-q.xml").read_text()
    csv_row = (node / "nvidia-smi-query.csv").read_text().splitlines()[1].split(", ")
    pci = [line.split("\t") for line in (node / "pci-devices.tsv").read_text().splitlines()[1:]]
    gpu_rows = [row for row in pci if row[1].startswith("0x03") and row[2] == "0x10de"]

    assert sku.provider == "other"  # no Azure metadata answered on that node
    assert sku.gpu.count == int(re.search(r"<attached_gpus>(\d+)<", xml).group(1)) == len(gpu_rows) == 1
    assert "NVIDIA " + sku.gpu.model == re.search(r"<product_name>([^<]+)<", xml).group(1) == csv_row[2] == "NVIDIA H200"
    mib = int(re.search(r"<fb_memory_usage>\s*<total>(\d+) MiB", xml).group(1))
    assert mib == int(csv_row[3].split()[0]) == 143771
    assert sku.gpu.memory_gb == 141  # 143771 MiB = 140.4 GiB: NVIDIA's "141 GB"
    assert sku.gpu.sm == 90 and csv_row[4] == "9.0"
    assert (sku.gpu.pci_device, sku.gpu.pci_subsystem_device) == (gpu_rows[0][3], gpu_rows[0][5]) == ("0x2335", "0x18bf")
    assert sku.topology is not None
    xml_busid = re.search(r"<pci_bus_id>([^<]+)<", xml).group(1)  # 00000000:00:06.0
    assert sku.topology.gpu_busids() == [gpu_rows[0][0]] == ["0000:" + xml_busid.split(":", 1)[1].lower()]
    assert sku.topology.link_speed == gpu_rows[0][7] and sku.topology.link_width == int(gpu_rows[0][8])
    assert sku.vcpus == 16 and [n.cpus for n in sku.numa] == ["0-15"]
    assert sku.infiniband is None and not sku.nvlink.present  # one GPU, no NVLink, no HCA on that node
    assert sku.cpu.arch == "x86_64" and sku.cpu.vendor == "Intel"


def test_two_real_collections_import_to_the_same_sku() -> None:
    a, _ = import_sku(REAL, name="lab-h200", provider=None, family=None)
    b, _ = import_sku(REAL_B, name="lab-h200", provider=None, family=None)
    strip = lambda text: [re.sub(r"\s*#.*$", "", line) for line in text.splitlines()  # noqa: E731
                          if "collected 2026" not in line and not line.startswith("#")]
    assert strip(a) == strip(b)


def test_real_h200_round_trips_through_init_and_build(tmp_path: Path) -> None:
    skus = tmp_path / "skus"
    result = cli("sku", "import", str(REAL), "-o", str(skus / "lab-h200.yaml"))
    assert result.exit_code == 0, result.output
    assert load_sku_file(skus / "lab-h200.yaml").gpu.model == "H200"
    assert Catalog.load(extra_dirs=[skus]).get("lab-h200").gpu.count == 1

    spec = tmp_path / "lab.yaml"
    result = cli("init", "--sku", "lab-h200", "--sku-dir", str(skus), "--platform", "slurm", "--nodes", "2", "-o", str(spec))
    assert result.exit_code == 0, result.output
    result = cli("build", str(spec), "-o", str(tmp_path / "out"), "--sku-dir", str(skus))
    assert result.exit_code == 0, result.output
    sbatch = next((tmp_path / "out").rglob("all_reduce_perf.sbatch")).read_text()
    assert "--gpus-per-node=1" in sbatch and "--cpus-per-task=16" in sbatch  # the imported GPU and CPU counts
    assert "PIN_MASK='0xffff'" in sbatch  # the one NUMA node's 16 CPUs
    assert next((tmp_path / "out").rglob("nccl.conf")).is_file()
    assert "# informational: the site or cloud region of your own nodes" in spec.read_text()  # not an Azure region


def test_the_job_ships_the_imported_sku_and_judges_with_it(tmp_path: Path, monkeypatch) -> None:
    """The sbatch runs `hpcconf nccl-report --sku NAME` on a node whose hpcconf has only its own catalog:
    the build puts the SKU file beside the job and the job passes that directory."""
    skus = tmp_path / "skus"
    assert cli("sku", "import", str(REAL), "-o", str(skus / "lab-h200.yaml")).exit_code == 0
    spec = tmp_path / "lab.yaml"
    assert cli("init", "--sku", "lab-h200", "--sku-dir", str(skus), "-p", "slurm", "-o", str(spec)).exit_code == 0
    assert cli("build", str(spec), "-o", str(tmp_path / "out")).exit_code == 0  # sku_dirs from the spec
    job = next((tmp_path / "out").rglob("all_reduce_perf.sbatch")).parent
    assert (job / "sku" / "lab-h200.yaml").read_text() == (skus / "lab-h200.yaml").read_text()
    sbatch = (job / "all_reduce_perf.sbatch").read_text()
    judge = next(ln for ln in sbatch.splitlines() if ln.startswith("judge() {"))
    assert 'hpcconf nccl-report --sku lab-h200 --sku-dir "${SLURM_SUBMIT_DIR:-.}/sku" "$@"' in judge
    assert '  judge --nodes 1 "${LOGS[@]}"' in sbatch.splitlines()  # no IB: one node

    # On the node: submitted from the job's directory, no other SKU directory anywhere.
    monkeypatch.chdir(job)
    log = ROOT / "tests" / "fixtures" / "nccl_logs" / "crusoe-h100-2node-srun.log"
    result = cli("nccl-report", "--sku", "lab-h200", "--sku-dir", str(job / "sku"), "--nodes", "1", str(log))
    assert "unknown SKU" not in result.output and result.exit_code in (0, 1), result.output
    assert cli("nccl-report", "--sku", "lab-h200", "--nodes", "1", str(log)).exit_code == 2  # what it did before


def test_catalog_skus_ship_no_sku_file(tmp_path: Path) -> None:
    spec = tmp_path / "c.yaml"
    assert cli("init", "--sku", "Standard_ND96isr_H100_v5", "-p", "slurm", "-o", str(spec)).exit_code == 0
    assert cli("build", str(spec), "-o", str(tmp_path / "out")).exit_code == 0
    assert not list((tmp_path / "out").rglob("sku/*.yaml"))
    assert "--sku-dir" not in next((tmp_path / "out").rglob("all_reduce_perf.sbatch")).read_text()


def test_importing_under_a_catalog_name_warns_that_it_replaces_the_entry(tmp_path: Path) -> None:
    out = tmp_path / "skus" / "Standard_ND96isr_H200_v5.yaml"
    result = runner.invoke(app, ["sku", "import", str(REAL), "--provider", "azure", "-o", str(out)])
    assert result.exit_code == 0, result.output
    assert f"{out}:4:1: warning[HPC333] sku-import-replaces-catalog: 'Standard_ND96isr_H200_v5' is also a SKU" in result.output
    assert "replaces the catalog's definition" in result.output
    # ... which is what happens: the directory's file wins over the package's 8-GPU entry
    assert Catalog.load(extra_dirs=[out.parent]).get("Standard_ND96isr_H200_v5").gpu.count == 1
    quiet = runner.invoke(app, ["sku", "import", str(REAL), "-o", str(tmp_path / "skus" / "lab-h200.yaml")])
    assert quiet.exit_code == 0 and "HPC333" not in quiet.output


@pytest.mark.parametrize("platform", ["aks", "azhop"])
def test_an_imported_non_azure_sku_is_refused_on_azure_platforms(tmp_path: Path, platform: str) -> None:
    skus = tmp_path / "skus"
    assert cli("sku", "import", str(REAL), "-o", str(skus / "lab-h200.yaml")).exit_code == 0
    result = cli("init", "--sku", "lab-h200", "--sku-dir", str(skus), "-p", platform, "-o", str(tmp_path / "s.yaml"))
    assert result.exit_code == 2 and "not an Azure size (provider: other)" in result.output, result.output
    assert not (tmp_path / "s.yaml").exists()


def test_every_value_says_where_it_came_from() -> None:
    text, _ = import_sku(REAL, name="lab-h200", provider=None, family=None)
    assert "memory_gb: 141 # from nvidia-smi-q.xml:129 fb_memory_usage/total 143771 MiB" in text
    assert "sm: 90 # from nvidia-smi-query.csv:2 compute_cap 9.0" in text
    assert "0000:00:06.0" in text and "collected 2026-12-01T03:23:21Z, NVIDIA driver 580.159.04" in text


# --------------------------------------------------------------------------- a fixture HGX node

def test_hgx_fixture_nvswitch_infiniband_and_numa() -> None:
    _, sku = import_sku(HGX, name="hgx-h100", provider=None, family=None)
    assert (sku.gpu.count, sku.gpu.memory_gb, sku.gpu.sm) == (8, 80, 90)
    assert sku.nvlink.present and sku.nvlink.nvswitch and not sku.nvlink.nvls  # NV18 to 7 peers > 18 links
    ib = sku.infiniband
    assert ib is not None and (ib.count, ib.rate, ib.gbps, ib.pci_device) == (8, "NDR", 400, "101e")
    assert ib.devices == [f"mlx5_ib{i}" for i in range(8)] and ib.exclude_hcas == ["mlx5_an0"]
    assert [(n.id, n.cpus) for n in sku.numa] == [(0, "0-47"), (1, "48-95")]
    assert sku.topology is not None and [len(n.gpus) for n in sku.topology.numa] == [4, 4]
    assert sku.topology.numa[1].hcas[0] == "0105:00:00.0"


def test_hgx_fixture_with_nic_switches_leaves_topology_out(tmp_path: Path) -> None:
    node = _copy(HGX, tmp_path)
    topo = node / "nvidia-smi-topo.txt"
    topo.write_text(topo.read_text().replace("NODE", "PXB"))
    text, sku = import_sku(node, name="hgx-h100", provider=None, family=None)
    assert sku.topology is None and "GPUs and NICs share PCIe switches" in text


def test_falls_back_to_numactl_and_architecture(tmp_path: Path) -> None:
    node = _copy(HGX, tmp_path)
    (node / "numa-nodes.tsv").unlink()
    (node / "nvidia-smi-query.csv").unlink()
    _, sku = import_sku(node, name="hgx-h100", provider=None, family=None)
    assert [n.cpus for n in sku.numa] == ["0-47", "48-95"] and sku.gpu.sm == 90  # Hopper is 9.0


def test_azure_metadata_names_the_size(tmp_path: Path) -> None:
    node = _copy(HGX, tmp_path)
    (node / "azure-imds.json").write_text('{"vmSize": "Standard_ND96isr_H100_v5", "location": "eastus"}')
    with (node / "collect.log").open("a") as log:
        log.write("ok\tazure-imds.json\tcurl IMDS compute\n")
    _, sku = import_sku(node, name=None, provider=None, family=None)
    assert (sku.name, sku.provider) == ("Standard_ND96isr_H100_v5", "azure")
    assert sku.cites["name"] == ["azure_imds"]


# --------------------------------------------------------------------------- bad input

def _error(node: Path) -> str:
    with pytest.raises(HpcconfError) as info:
        import_sku(node, name="x", provider=None, family=None)
    diag = info.value.diagnostics[0]
    return f"{diag.code} {Path(diag.file).name}:{diag.line} {diag.message}"


def test_malformed_xml_is_reported_at_its_line(tmp_path: Path) -> None:
    node = _copy(HGX, tmp_path)
    xml = node / "nvidia-smi-q.xml"
    xml.write_text(xml.read_text().replace("<total>81559 MiB</total>", "<total>81559 MiB</totl>", 1))
    assert _error(node).startswith("HPC330 nvidia-smi-q.xml:25 not well-formed XML")


def test_bad_memory_value_and_topo_row(tmp_path: Path) -> None:
    node = _copy(HGX, tmp_path)
    xml = node / "nvidia-smi-q.xml"
    xml.write_text(xml.read_text().replace("81559 MiB", "80 GB", 1))
    assert _error(node).startswith("HPC330 nvidia-smi-q.xml:25 GPU 0001:00:00.0: fb_memory_usage/total is '80 GB'")
    node = _copy(REAL, tmp_path / "b")
    (node / "nvidia-smi-topo.txt").write_text("\tGPU0\tCPU Affinity\nGPU0\t X \t0-15\nGPU9\t X \t0-15\n")
    assert _error(node).startswith("HPC330 nvidia-smi-topo.txt:3 row 'GPU9' is not one of the header's devices")


def test_no_gpu_facts_and_disagreeing_files(tmp_path: Path) -> None:
    node = _copy(REAL, tmp_path)
    (node / "nvidia-smi-q.xml").unlink()
    assert _error(node).startswith("HPC331 ")  # the directory, no line
    node = _copy(HGX, tmp_path / "b")
    pci = node / "pci-devices.tsv"
    pci.write_text(pci.read_text() + "00ff:00:00.0\t0x030200\t0x10de\t0x2330\t0x10de\t0x16c1\t0\t-\t-\t-\t-\tnvidia\n")
    assert _error(node).startswith("HPC332 pci-devices.tsv:19 GPU 00ff:00:00.0 is on the PCI bus but nvidia-smi does not report it")


def test_cli_refuses_overwrite_and_unknown_provider(tmp_path: Path) -> None:
    out = tmp_path / "hgx.yaml"
    assert cli("sku", "import", str(HGX), "-o", str(out)).exit_code == 0
    assert load_sku_file(out).name == "hgx"  # named after the file
    assert cli("sku", "import", str(HGX), "-o", str(out)).exit_code == 2
    assert cli("sku", "import", str(HGX), "-o", str(tmp_path), "--name", "n2").exit_code == 0
    assert (tmp_path / "n2.yaml").is_file()
    result = cli("sku", "import", str(HGX), "--name", "x", "--provider", "gcp")
    assert result.exit_code == 2 and "not one of azure, crusoe, other" in result.output
    result = cli("sku", "import", str(tmp_path / "nope"), "--name", "x")
    assert result.exit_code == 2 and "HPC331" in result.output


# --------------------------------------------------------------------------- the collection script

def test_collect_script_is_printed_and_never_fails_without_tools(tmp_path: Path) -> None:
    result = cli("sku", "collect-script")
    assert result.exit_code == 0 and result.output == collect_script_text()
    script = tmp_path / "collect.sh"
    assert cli("sku", "collect-script", "-o", str(script)).exit_code == 0
    bash = shutil.which("bash")
    if bash is None:
        pytest.skip("no bash")
    bin_dir = tmp_path / "bin"  # coreutils only: no nvidia-smi, lscpu, numactl, ibstat, curl
    bin_dir.mkdir()
    for tool in ("cat", "mkdir", "rm", "date", "uname", "nproc", "sed", "grep", "head", "basename", "readlink", "ls", "timeout"):
        if (found := shutil.which(tool)) is not None:
            os.symlink(found, bin_dir / tool)
    env = {"PATH": str(bin_dir), "HPCCONF_NO_IMDS": "1"}
    done = subprocess.run([bash, str(script), str(tmp_path / "facts")], env=env, capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    log = (tmp_path / "facts" / "collect.log").read_text()
    assert "missing\tnvidia-smi-q.xml\tnvidia-smi -q -x" in log and "skipped\tazure-imds.json" in log
    assert "ok\tmeta.txt" in log
    # and the importer says what is missing instead of failing on it
    assert _error(tmp_path / "facts").startswith("HPC331 ")
    assert subprocess.run([bash, str(script)], capture_output=True, timeout=30).returncode == 2  # usage
