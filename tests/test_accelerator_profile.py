"""A new accelerator is a row of data/accelerators.yaml: a fictitious vendor builds on Slurm and AKS.

The profile is added here only (the fixture extends the table in memory); nothing under hpcconf/targets/
knows the vendor, so the build passing shows the targets read the profile instead of comparing vendors.
"""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path

import pytest

from hpcconf.knowledge import accelerators
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
gpu: {vendor: acme, model: ACME X1, count: 8, memory_gb: 96, collective: nccl, pci_vendor: "0x1eac"}
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


@pytest.fixture
def acme_profile(monkeypatch):
    """The table plus a fictitious vendor: NVIDIA's operator kind, its own device resource and visible-devices variable."""
    table = dict(accelerators.profiles())
    table[VENDOR] = replace(table["nvidia"], vendor=VENDOR, device_resource="acme.example/gpu",
                            visible_devices_env="ACME_VISIBLE_DEVICES", operator_label="the ACME operator",
                            pci_vendor="0x1eac", cuda_compute_capability=False)
    accelerators.profiles.cache_clear()
    monkeypatch.setattr(accelerators, "profiles", lambda: table)
    monkeypatch.setattr("hpcconf.catalog.accelerator_profiles", lambda: table)
    # the other row a vendor needs: the health-check image its nodes run (data/nhc.yaml upstream.images)
    monkeypatch.setitem(load_nhc_data().images, VENDOR, "acmeacr.azurecr.io/health:1.0")
    yield table[VENDOR]


def test_fictitious_accelerator_builds_on_slurm_and_aks(acme_profile, tmp_path):
    skus = tmp_path / "skus"
    skus.mkdir()
    (skus / "Standard_ACME8_v1.yaml").write_text(SKU, encoding="utf-8")
    spec = tmp_path / "acme.yaml"
    spec.write_text(SPEC, encoding="utf-8")
    build = compile_spec(spec, [skus])
    assert build.cluster.pools[0].accelerator is acme_profile
    texts = {a.path: a.content for a in build.artifacts}
    platforms = {a.target for a in build.artifacts}
    assert {"aks", "slurm"} <= platforms
    aks_text = "\n".join(t for p, t in texts.items() if p.startswith("aks/"))
    assert "acme\\.example/gpu" in aks_text or "acme.example/gpu" in aks_text  # the device plugin's resource
    assert "ACME_VISIBLE_DEVICES" in aks_text  # the health-check pods name the profile's variable
    assert "NVIDIA_VISIBLE_DEVICES" not in aks_text
    assert any(p.startswith("slurm/") for p in texts)


def test_unknown_vendor_is_refused(tmp_path):
    skus = tmp_path / "skus"
    skus.mkdir()
    (skus / "Standard_ACME8_v1.yaml").write_text(SKU, encoding="utf-8")
    spec = tmp_path / "acme.yaml"
    spec.write_text(SPEC, encoding="utf-8")
    with pytest.raises(Exception, match="acme"):
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
