"""AMD Instinct (ND MI300X v5) targets: what an MI300X spec compiles to on AKS and Slurm, and that none
of it is NVIDIA's (no nvidia.com/gpu, no NVIDIA gpu-operator, no CUDA image, no NCCL topology file).
"""

from __future__ import annotations

import re

import pytest
from ruamel.yaml import YAML

from hpcconf.catalog import Catalog
from hpcconf.init_spec import _refusal
from hpcconf.knowledge import accelerators, nccl_env, rocm
from hpcconf.knowledge.nccl_floors import load_floors
from hpcconf.pipeline import compile_spec

MI300X = "Standard_ND96isr_MI300X_v5"


def load_yaml_text(text: str):
    return YAML(typ="safe").load(text)


SPEC = f"""apiVersion: hpcconf/v1
kind: Cluster
metadata: {{name: mi, location: eastus}}
platforms: [aks, slurm]
pools:
  - {{name: gpu, sku: {MI300X}, count: 2}}
test_image: {{registry: miacr.azurecr.io, name: rccl-tests, tag: "1", base: "{rocm.ROCM_BASE_IMAGE}"}}
"""

# Strings that only an NVIDIA GPU artifact contains. Allowed on purpose: nvidia.com/infiniband and
# nvcr.io/nvidia/mellanox (the network-operator drives the ConnectX-7 HCAs of MI300X VMs as well), and
# citations of NVIDIA/nccl source in comments.
NVIDIA_ONLY = {
    "NVIDIA GPU resource": re.compile(r"nvidia\.com/gpu"),
    "NVIDIA gpu-operator values": re.compile(r"(?<!amd-)gpu-operator-values\.yaml"),
    "gpu-operator toolkit/driver keys": re.compile(r"^(toolkit|driver):", re.M),
    "CUDA": re.compile(r"cuda", re.I),
    "NGC PyTorch/CUDA image": re.compile(r"nvcr\.io/nvidia/(pytorch|cuda)"),
    "NVIDIA nccl-tests": re.compile(r"NVIDIA/nccl-tests"),
    "nvidia-smi": re.compile(r"nvidia-smi"),
    "nvidia-peermem": re.compile(r"peermem"),
    "NCCL topology file": re.compile(r"NCCL_TOPO_FILE|<system version"),
    "NCCL graph file setting": re.compile(r"NCCL_GRAPH_FILE="),
    "NVLink SHARP": re.compile(r"NVLS"),
    "AKS NVIDIA accelerator label": re.compile(r"accelerator: nvidia"),
    "NVIDIA PCI vendor label": re.compile(r"pci-10de"),
    "NVIDIA container runtime variable": re.compile(r"NVIDIA_VISIBLE_DEVICES"),
}


def _nvidia_strings(artifacts) -> list[str]:
    return [f"{a.path}: {what} ({m.group(0)!r})" for a in artifacts for what, pattern in NVIDIA_ONLY.items()
            if (m := pattern.search(a.content))]


@pytest.fixture(scope="module")
def build():
    return compile_spec("mi.yaml", text=SPEC, display_name="mi.yaml")


def _artifact(build, path: str):
    return next(a for a in build.artifacts if a.path == path)


def test_mi300x_compiles_to_amd_artifacts_on_aks_and_slurm(build):
    paths = {a.path for a in build.artifacts}
    assert {"aks/amd-gpu-operator-values.yaml", "aks/volcano-job.yaml", "aks/provision.sh", "aks/nfd-values.yaml",
            "aks/network-operator-values.yaml", "image/Dockerfile", "image/rccl-tests.sh",
            "slurm/gpu/all_reduce_perf.sbatch"} <= paths
    # No NVIDIA operator values, no nccl-tests build, no node nccl.conf (RCCL reads /etc/rccl.conf).
    assert not paths & {"aks/gpu-operator-values.yaml", "image/nccl-tests.sh", "nccl/gpu/nccl.conf"}


def test_nothing_nvidia_specific_in_anything_an_mi300x_spec_generates(build):
    assert _nvidia_strings(build.artifacts) == []


def test_the_scan_finds_nvidia_strings_in_an_nvidia_build():
    text = SPEC.replace(MI300X, "Standard_ND96isr_H100_v5").replace(rocm.ROCM_BASE_IMAGE,
                                                                     "nvcr.io/nvidia/pytorch:24.05-py3")
    nvidia = compile_spec("h100.yaml", text=text, display_name="h100.yaml")
    found = " ".join(_nvidia_strings(nvidia.artifacts))
    for what in ("NVIDIA GPU resource", "NVIDIA gpu-operator values", "CUDA", "NGC PyTorch/CUDA image",
                 "NVIDIA nccl-tests", "NCCL topology file"):
        assert what in found, what


def test_amd_gpu_operator_values_select_the_vm_gpus_and_install_the_driver(build):
    values = load_yaml_text(_artifact(build, "aks/amd-gpu-operator-values.yaml").content)
    spec = values["deviceConfig"]["spec"]
    assert spec["selector"] == {"kubernetes.azure.com/agentpool": "gpu"}  # VF or PF: the pool label holds
    assert spec["driver"]["enable"] is True and spec["driver"]["blacklist"] is True
    assert str(spec["driver"]["version"]) == "6.4.1"  # the ROCm release of the test image's base
    assert spec["driver"]["image"] == "miacr.azurecr.io/amdgpu-driver"
    assert spec["devicePlugin"]["enableDevicePlugin"] is True
    assert values["node-feature-discovery"] == {"enabled": False}  # hpcconf installs NFD on its own
    assert values["crds"]["defaultCR"]["install"] is True  # the chart renders the DeviceConfig


# Every key of the AMD values above, as helm-charts-k8s/values.yaml at ROCm/gpu-operator v1.5.1 spells it
# (imageRegistrySecret.name: docs/drivers/installation.md at the same tag).
V151_KEYS = {"node-feature-discovery.enabled", "kmm.enabled", "crds.defaultCR.install",
             "deviceConfig.spec.selector.kubernetes.azure.com/agentpool", "deviceConfig.spec.driver.enable",
             "deviceConfig.spec.driver.blacklist", "deviceConfig.spec.driver.version",
             "deviceConfig.spec.driver.image", "deviceConfig.spec.driver.imageRegistrySecret.name",
             "deviceConfig.spec.devicePlugin.enableDevicePlugin", "deviceConfig.spec.devicePlugin.enableNodeLabeller"}


def _leaves(data, prefix=""):
    if isinstance(data, dict):
        for key, value in data.items():
            yield from _leaves(value, f"{prefix}{key}.")
    else:
        yield prefix.rstrip(".")


def test_amd_gpu_operator_values_use_only_keys_of_the_pinned_chart(build):
    values = load_yaml_text(_artifact(build, "aks/amd-gpu-operator-values.yaml").content)
    assert set(_leaves(values)) <= V151_KEYS


def test_aks_job_requests_amd_gpus_and_runs_rccl_tests(build):
    job = _artifact(build, "aks/volcano-job.yaml").content
    assert "amd.com/gpu: 8" in job and "/workspace/rccl-tests/build/${test}_perf" in job
    assert "name: rccl-allreduce-job1" in job
    provision = _artifact(build, "aks/provision.sh").content
    assert "--repo https://rocm.github.io/gpu-operator" in provision and "--version 'v1.5.1'" in provision
    assert "cert-manager" in provision and "--set crds.enabled=true" in provision
    assert "allocatable.amd\\.com/gpu" in provision
    assert "create secret docker-registry amdgpu-driver-registry" in provision


def test_test_image_is_rocm_with_rccl_tests_at_a_pinned_commit(build):
    dockerfile = _artifact(build, "image/Dockerfile").content
    assert f"FROM {rocm.ROCM_BASE_IMAGE}" in dockerfile and "rccl-dev" in dockerfile and "openmpi" in dockerfile
    script = _artifact(build, "image/rccl-tests.sh").content
    recipe = accelerators.profile("amd").test_image
    assert recipe is not None and recipe.default_base == rocm.ROCM_BASE_IMAGE  # the lint hints name the same base
    assert f"checkout --detach {recipe.tests_commit}" in script
    assert f"MPI=1 MPI_HOME={recipe.mpi_home}" in script


def test_slurm_job_runs_rccl_tests_with_the_rocm_environment(build):
    sbatch = _artifact(build, "slurm/gpu/all_reduce_perf.sbatch").content
    assert "#SBATCH --gpus-per-node=8" in sbatch
    # Azure's MI300X image: rccl-tests in /opt/rccl-tests/ (no build/), its RCCL in /opt/rccl/lib, built
    # against HPC-X (azhpc-images components/install_rccl.sh @ ubuntu-hpc-mi300x-2404-2026072801).
    assert "/opt/rccl-tests/${test}_perf" in sbatch and "/opt/rccl-tests/build" not in sbatch
    assert 'export LD_LIBRARY_PATH="/opt/rccl/lib:$ROCM_PATH/lib' in sbatch
    assert "module load mpi/hpcx" in sbatch
    assert "export ROCM_PATH=/opt/rocm" in sbatch and "/etc/rccl.conf" in sbatch
    assert "hpcconf nccl-report --sku Standard_ND96isr_MI300X_v5" in sbatch


def test_slurm_tests_dir_set_in_the_spec_wins():
    text = SPEC.replace("platforms: [aks, slurm]", "platforms: [slurm]") + "slurm: {nccl_tests_dir: /shared/rccl}\n"
    sbatch = next(a for a in compile_spec("s.yaml", text=text, display_name="s.yaml").artifacts
                  if a.path.endswith(".sbatch")).content
    assert "/shared/rccl/${test}_perf" in sbatch


def test_azhop_is_refused_for_mi300x_with_the_reason_and_aks_slurm_are_not():
    sku = Catalog.load().get(MI300X)
    assert _refusal(sku, ["aks"]) is None and _refusal(sku, ["slurm"]) is None
    reason = _refusal(sku, ["azhop"])
    assert reason is not None and "no Azure HPC image with ROCm" in reason


def test_mi300x_has_a_sourced_rccl_floor():
    floor = load_floors().floor(MI300X, "all_reduce", 1, 8)
    assert floor is not None and floor.gbps == 314.0 and floor.message_size == "16G"
    assert "nd96isr_mi300x_v5.conf" in floor.source


# ----------------------------------------------------------------------------- the RCCL variable table

def test_rccl_reads_the_nccl_names_and_its_own():
    for name in ("NCCL_IB_HCA", "NCCL_IB_GID_INDEX", "NCCL_SOCKET_IFNAME", "NCCL_ALGO", "NCCL_TOPO_FILE",
                 "NCCL_P2P_LEVEL", "RCCL_MSCCL_ENABLE", "HSA_FORCE_FINE_GRAIN_PCIE", "NCCL_NCHANNELS_PER_PEER"):
        assert rocm.reads(name), name
    for name in ("NCCL_NVLS_ENABLE", "NCCL_NVLS_NCHANNELS", "NCCL_MEM_SYNC_DOMAIN"):
        assert not rocm.reads(name) and rocm.cuda_only(name) is not None, name
    assert not rocm.reads("NCCL_CONF_FILE")  # RCCL reads ~/.rccl.conf and /etc/rccl.conf only


def test_rccl_table_rows_are_sourced_and_every_nccl_name_is_an_nccl_variable():
    rows = rocm.all_vars()
    assert len(rows) > 140
    for var in rows:
        assert re.fullmatch(r"src/[\w/.]+:\d+", var.source), var
        assert var.build in ("hip", "cuda-only"), var
    # RCCL 2.20.5 is NCCL 2.20.5 plus AMD's extras: its NCCL_* names are NCCL's, but for one of its own.
    rccl_only = {v.name for v in rows if v.name.startswith("NCCL_") and nccl_env.lookup(v.name) is None}
    assert rccl_only == {"NCCL_NCHANNELS_PER_PEER"}


def test_nccl_variables_of_2_20_are_all_read_by_rccl_2_20():
    """Why no rule says "RCCL ignores this NCCL variable": RCCL 2.20.5 reads every name NCCL 2.20.5 reads."""
    missing = [name for name in nccl_env.names_read_by(rocm.RCCL_VERSION) if rocm.lookup(name) is None]
    assert missing == []


def test_a_second_amd_pool_on_aks_is_refused_before_anything_is_written():
    """AMD's GPU operator drives the one pool its DeviceConfig selects (by agentpool label): a second AMD pool,
    or an NVIDIA pool beside it, would get no driver and its readiness wait would never end (SPEC061)."""
    from hpcconf.diagnostics import HpcconfError

    spec = SPEC.replace("count: 2}", f"count: 2}}\n  - {{name: big, sku: {MI300X}, count: 3}}")
    with pytest.raises(HpcconfError) as refused:
        compile_spec("mi.yaml", text=spec, display_name="mi.yaml")
    assert [d.code for d in refused.value.diagnostics] == ["SPEC061"]
    assert "second AMD GPU pool" in refused.value.diagnostics[0].message
