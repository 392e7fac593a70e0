"""A new accelerator is a row of data/accelerators.yaml: a fictitious vendor builds on Slurm and AKS.

The profile is added here only (the fixture extends the table in memory), written from scratch, not copied
from NVIDIA's: its own collective library (ACCL), device resource, tests directory, operator chart, driver
image, visible-devices variable, health-check tool and gres device files. Nothing under hpcconf/targets/ knows
the vendor, so each of those values reaching its artifact shows the targets read the profile.
"""

from __future__ import annotations

import re
from dataclasses import replace
from pathlib import Path

import jinja2
import pytest
from ruamel.yaml import YAML

from hpcconf import templating
from hpcconf.diagnostics import HpcconfError
from hpcconf.knowledge import accelerators, rocm
from hpcconf.knowledge.accelerators import AcceleratorProfile, GpuOperator, NhcFloor, NhcProfile, OperatorChart, TestImageRecipe
from hpcconf.knowledge.nhc import load_nhc_data
from hpcconf.pipeline import compile_spec

ROOT = Path(__file__).resolve().parents[1]
VENDOR = "acme"

SKU = """\
name: Standard_ACME8_v1
provider: azure
family: ACME v1
vcpus: 96
memory_gib: 1800
cpu: {arch: x86_64, vendor: Intel, model: Xeon Sapphire Rapids, sockets: 2}
gpu: {vendor: acme, model: ACME X1, count: 8, memory_gb: 96, pci_vendor: "0x1eac"}
nvlink: {present: false, description: "none"}
infiniband: {count: 8, rate: NDR, gbps: 400, hca: ConnectX-7, pci_vendor: "15b3",
             devices: [mlx5_ib0, mlx5_ib1, mlx5_ib2, mlx5_ib3, mlx5_ib4, mlx5_ib5, mlx5_ib6, mlx5_ib7]}
ethernet_interface: eth0
numa: []
nccl: {}
topology: null
busbw: []
sources: {test: "fictitious accelerator (tests/test_accelerator_profile.py)"}
cites: {family: [test], vcpus: [test], memory_gib: [test], cpu: [test], gpu: [test], nvlink: [test], infiniband: [test]}
"""

SPEC = """\
apiVersion: hpcconf/v1
kind: Cluster
metadata: {name: acme, location: eastus}
platforms: [aks, slurm]
pools:
  - {name: gpu, sku: Standard_ACME8_v1, count: 2}
test_image: {registry: acmeacr.azurecr.io, name: nccl-tests, tag: "1.0"}
aks: {namespace: default}
"""
# The spec gives no base: the profile's default is the image the ACME operator's driver must match (7.0).
ACME_SPEC = SPEC.replace("name: nccl-tests", "name: accl-tests")


# Every field its own: a profile copied from NVIDIA's would pass with targets that still assume NVIDIA.
ACME = AcceleratorProfile(
    vendor=VENDOR, collective_library="ACCL", pci_vendor="0x1eac", cuda_compute_capability=False,
    operator=GpuOperator.AMD,  # an operator whose chart builds the driver on the node (its own chart below)
    operator_label="the ACME operator", device_resource="acme.example/gpu", visible_devices_env="ACME_VISIBLE_DEVICES",
    gpu_runtime_class=False, device_order_env=False, nfd_workers_on_every_node=True, nfd_extra_pci_classes=("12",),
    driver_built_by_operator=True, collective_tests="accl-tests", reads_nccl_conf=False, runtime_path="/opt/acme",
    azure_image_env=(("ACME_FAST", "1"),), azure_image_layouts=(),
    operator_chart=OperatorChart(chart="acme-operator", repository="https://charts.acme.example", version_prefix="",
                                 version_pin="amd_gpu_operator", values_source="the ACME operator's values.yaml",
                                 release="acme-operator", driver_docs="the ACME operator's driver guide"),
    driver_image="acme-driver", driver_name="acmegpu",
    nhc=NhcProfile(gpu_count_args=("acme",), smi_checks=False, allreduce_check="check_accl_allreduce",
                   allreduce_floor=NhcFloor.NHC_CONF),
    gpu_mesh="acme-link", sku_nvidia_sections=False, slurm_gres_files="dri-render",
    # its own test image: templates image/accl-tests.* (the fixture adds them), base, MPI and tests pin
    test_image=TestImageRecipe(recipe="accl-tests", default_base="registry.acme.example/acme-dev:7.0",
                               mpi_home="/opt/acme/mpi", tests_repo="https://git.acme.example/accl-tests.git",
                               tests_commit="0a1b2c3d4e5f60718293a4b5c6d7e8f901234567"))
# The vendor's test-image templates, as a new vendor adds them under templates/image/.
ACME_TEMPLATES = {
    "image/accl-tests.Dockerfile.j2": "# {{ header }}\n# ACCL test image for pool '{{ pool }}' ({{ sku }}): {{ image_ref }}\n"
                                      "FROM {{ base }}\nWORKDIR {{ workdir }}\nCOPY accl-tests.sh {{ workdir }}/accl-tests.sh\n"
                                      "RUN bash {{ workdir }}/accl-tests.sh\n",
    "image/accl-tests.sh.j2": "#!/bin/bash\n# {{ header }}\nset -euo pipefail\ngit clone {{ repo }} {{ directory }}\n"
                              "git -C {{ directory }} checkout --detach {{ commit }}\n"
                              "make -C {{ directory }} MPI=1 MPI_HOME={{ mpi_home }}\ntest -x {{ binary }}\n",
}


@pytest.fixture
def acme_profile(monkeypatch, tmp_path):
    """The table plus the fictitious vendor, and its test-image templates."""
    for name, text in ACME_TEMPLATES.items():
        (tmp_path / "templates" / name).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / "templates" / name).write_text(text, encoding="utf-8")
    env = templating.environment()
    monkeypatch.setattr(env, "loader", jinja2.ChoiceLoader([jinja2.FileSystemLoader(str(tmp_path / "templates")), env.loader]))
    table = dict(accelerators.profiles())
    table[VENDOR] = ACME
    accelerators.profiles.cache_clear()
    monkeypatch.setattr(accelerators, "profiles", lambda: table)
    monkeypatch.setattr("hpcconf.catalog.accelerator_profiles", lambda: table)
    # the other row a vendor needs: the health-check image its nodes run (data/nhc.yaml upstream.images)
    monkeypatch.setitem(load_nhc_data().images, VENDOR, "acmeacr.azurecr.io/health:1.0")
    yield table[VENDOR]


def _build(tmp_path: Path):
    skus = tmp_path / "skus"
    skus.mkdir()
    (skus / "Standard_ACME8_v1.yaml").write_text(SKU, encoding="utf-8")
    spec = tmp_path / "acme.yaml"
    spec.write_text(ACME_SPEC, encoding="utf-8")
    return compile_spec(spec, [skus])


# Another vendor's names: NVIDIA's or AMD's runtime, library, driver or operator.
OTHER_VENDOR = re.compile(r"(?i)nvidia|\bamd|rocm|cuda|\brccl|\bnccl|\bhip\b|instinct|nvcr")
# NVIDIA's network-operator (InfiniBand): its namespace, chart repository, CRDs and VF resource.
NETWORK_OPERATOR = re.compile(r"OPERATORS_NAMESPACE='nvidia-operator'|helm\.ngc\.nvidia\.com/nvidia \\$|nv-ipam\.nvidia\.com"
                              r"|nvidia\\\.com/infiniband|^# node-feature-discovery [^,]*, network-operator ")


def _documents(text: str) -> list:
    return [d for d in YAML(typ="safe").load_all(text) if d]


def test_fictitious_accelerator_builds_on_slurm_and_aks(acme_profile, tmp_path):
    build = _build(tmp_path)
    assert build.cluster.pools[0].accelerator is acme_profile
    texts = {a.path: a.content for a in build.artifacts}
    assert {"aks", "slurm"} <= {a.target for a in build.artifacts}
    every = "\n".join(texts.values())
    for other in ("nvidia.com/gpu", "NVIDIA_VISIBLE_DEVICES", "helm.ngc.nvidia.com/nvidia/gpu-operator", "rocm.github.io",
                  "cert-manager", "/dev/nvidia", "amdgpu", "amd.com/gpu"):
        assert other not in every, other
    # AKS: the worker's GPUs are the profile's device resource, in the job's limits and requests
    (job,) = _documents(texts["aks/volcano-job.yaml"])
    worker = next(t for t in job["spec"]["tasks"] if t["name"] == build.cluster.aks.worker_task)
    (container,) = worker["template"]["spec"]["containers"]
    assert container["resources"]["limits"]["acme.example/gpu"] == 8
    assert container["resources"]["requests"]["acme.example/gpu"] == 8
    # the health-check pods see the GPUs through the profile's variable
    pods = [d for d in _documents(texts["aks/health-checks.yaml"]) if d.get("kind") == "DaemonSet"]
    env = {e["name"]: e.get("value") for p in pods for c in p["spec"]["template"]["spec"]["containers"] for e in c.get("env", [])}
    assert env.get("ACME_VISIBLE_DEVICES") == "all"
    # provision.sh installs the profile's operator chart from its repository, spelt as that repository spells versions
    provision = texts["aks/provision.sh"]
    assert "acme-operator \\\n  --repo https://charts.acme.example \\\n  --version '1.5.1'" in provision
    assert "ACCL test job" in provision
    assert "the ACME operator installs driver 7.0 (acmegpu, built by KMM)" in provision
    assert "create secret docker-registry acmegpu-driver-registry" in provision
    assert "device plugin (acme.example/gpu)" in provision  # the operator's release comment
    # its GPUs are ready when every node advertises the profile's device resource (kubectl wait)
    assert "--for=jsonpath='{.status.allocatable.acme\\.example/gpu}'=\"$GPUS_PER_NODE\"" in provision
    # the image is acme's own recipe on the profile's default base, and nothing in it or in provision.sh is
    # another vendor's (network-operator, NVIDIA's InfiniBand stack, is the one NVIDIA text provision.sh has)
    assert "FROM registry.acme.example/acme-dev:7.0\n" in texts["image/Dockerfile"]
    assert "git.acme.example/accl-tests.git" in texts["image/accl-tests.sh"]
    for path in ("image/Dockerfile", "image/accl-tests.sh", "aks/provision.sh", "aks/acme-operator-values.yaml"):
        for line in texts[path].splitlines():
            if NETWORK_OPERATOR.search(line):
                continue
            assert not OTHER_VENDOR.search(line), f"{path}: {line}"
    # the operator builds the profile's driver and pushes it where the profile says
    values = _documents(texts["aks/acme-operator-values.yaml"])[0]
    assert values["deviceConfig"]["spec"]["driver"]["image"] == "acmeacr.azurecr.io/acme-driver"
    # Slurm: the profile's library names the job, its tests directory holds the binaries, Azure's image settings
    sbatch = texts["slurm/gpu/all_reduce_perf.sbatch"]
    assert "#SBATCH --job-name=accl-all_reduce-gpu" in sbatch
    assert "/opt/accl-tests/build/all_reduce_perf" in sbatch
    assert "export ACME_FAST=1" in sbatch and "export ROCM_PATH=/opt/acme" in sbatch
    # Azure's health checks count the GPUs with the profile's tool; no NVIDIA-only check
    nhc = texts["health/gpu/nhc.conf"]
    assert " * || check_gpu_count 8 acme" in nhc.splitlines()
    assert "check_gpu_ecc" not in nhc and "check_nvlink_status" not in nhc
    assert "single-node ACCL all_reduce floor" in nhc
    assert not any(p.endswith("nccl.conf") for p in texts)  # ACCL reads no /etc/nccl.conf


def test_fictitious_accelerator_sku_facts_come_from_its_profile(acme_profile, tmp_path):
    """gres.conf device files and the GPUs' fabric are the profile's, not NVIDIA's defaults."""
    from hpcconf.catalog import Catalog
    from hpcconf.knowledge import nccl_bounds, slurm_gres

    skus = tmp_path / "skus"
    skus.mkdir()
    (skus / "Standard_ACME8_v1.yaml").write_text(SKU, encoding="utf-8")
    sku = Catalog.load([skus]).get("Standard_ACME8_v1")
    assert sku.gpu.collective == "accl"
    assert slurm_gres.gpu_devices(sku) == "/dev/dri/renderD[128,136,144,152,160,168,176,184]"
    assert nccl_bounds.gpu_fabric(sku) == "acme-link"


def test_the_amd_profiles_chart_is_the_one_lint_recognises():
    chart = accelerators.profile("amd").operator_chart
    assert chart is not None and (chart.chart, chart.repository) == (rocm.AMD_GPU_OPERATOR_CHART, rocm.AMD_GPU_OPERATOR_REPO)


def test_unknown_vendor_is_refused(tmp_path):
    skus = tmp_path / "skus"
    skus.mkdir()
    (skus / "Standard_ACME8_v1.yaml").write_text(SKU, encoding="utf-8")
    spec = tmp_path / "acme.yaml"
    spec.write_text(SPEC, encoding="utf-8")
    with pytest.raises(HpcconfError, match="unknown GPU vendor 'acme'"):
        compile_spec(spec, [skus])


@pytest.mark.parametrize("provider", ["azure", "other"])
def test_collective_tests_and_image_env_are_the_profiles(acme_profile, monkeypatch, tmp_path, provider):
    """Where the tests live (image and nodes), what Azure's image passes to every rank and which Azure image the
    nodes run are profile fields: a vendor with its own tests project and image settings needs no branch in
    resolve or knowledge (an Azure node of a vendor without an Azure image is not given NVIDIA's)."""
    table = accelerators.profiles()
    table[VENDOR] = replace(acme_profile, collective_tests="acme-tests", azure_image_env=(("ACME_SCRATCH", "1"),),
                            azure_image_layouts=())  # Azure publishes no image for it: no layout is guessed
    skus = tmp_path / "skus"
    skus.mkdir()
    (skus / "Standard_ACME8_v1.yaml").write_text(SKU.replace("provider: azure", f"provider: {provider}"), encoding="utf-8")
    spec = tmp_path / "acme.yaml"
    spec.write_text(SPEC if provider == "azure" else SPEC.replace("[aks, slurm]", "[slurm]"), encoding="utf-8")
    build = compile_spec(spec, [skus])
    pool = build.cluster.pools[0]
    assert pool.collective.image_tests_dir == "/workspace/acme-tests"
    assert build.cluster.test_image_build is not None and build.cluster.test_image_build.binary.startswith("/workspace/acme-tests/")
    assert build.cluster.slurm is not None
    partition = build.cluster.slurm.partition("gpu")
    assert (("ACME_SCRATCH", "1") in partition.nccl_env) is (provider == "azure")  # Azure's image settings, on Azure only
    assert partition.tests_dir == "/opt/acme-tests/build"  # no known node image: the profile's convention
    assert partition.image is None



def test_a_vendor_without_a_test_image_recipe_is_refused(acme_profile, tmp_path):
    """Neither NVIDIA's nor AMD's image is written for GPUs whose profile names no recipe: SPEC062 refuses."""
    accelerators.profiles()[VENDOR] = replace(acme_profile, test_image=None)
    with pytest.raises(HpcconfError) as refused:
        _build(tmp_path)
    (problem,) = refused.value.diagnostics
    assert problem.code == "SPEC062" and "accelerator profile 'acme' names no test image recipe" in problem.message
    assert problem.line == 7  # the spec's test_image key


@pytest.mark.parametrize("vendor", sorted(accelerators.profiles()))
def test_every_shipped_recipe_has_its_templates(vendor):
    """A profile's recipe names its templates: a row without them would fail the build with TemplateNotFound."""
    recipe = accelerators.profile(vendor).test_image
    assert recipe is not None, f"{vendor}: no test image recipe (SPEC062 would refuse every test image)"
    for name in (f"{recipe.recipe}.Dockerfile.j2", f"{recipe.recipe}.sh.j2"):
        assert (ROOT / "templates" / "image" / name).is_file(), name
