"""Defects found running hpcconf's output against today's upstream (issue "Artifacts that work on
today's upstream"): each test failed before its fix."""

from __future__ import annotations

from pathlib import Path

import pytest

from hpcconf.parsers.nccl_conf import parse_nccl_conf
from hpcconf.pipeline import compile_spec

HEAD = "apiVersion: hpcconf/v1\nkind: Cluster\nmetadata: {name: demo, location: eastus}\n"


def _build(tmp_path: Path, body: str) -> dict[str, str]:
    spec = tmp_path / "s.yaml"
    spec.write_text(HEAD + body, encoding="utf-8")
    return {a.path: a.content for a in compile_spec(spec).artifacts}


def _conf(text: str) -> dict[str, str]:
    return {e.key: e.value for e in parse_nccl_conf(text).entries}


@pytest.mark.parametrize("first, second", [("Standard_ND96asr_v4", "Standard_ND96amsr_A100_v4"),
                                           ("Standard_ND96isr_H100_v5", "Standard_ND96isr_H200_v5")])
def test_two_skus_of_one_topology_family_build(tmp_path, first, second):
    """Both used to write nccl/<family>-topo.xml with different content: exit 70."""
    artifacts = _build(tmp_path, f"platforms: [slurm]\npools:\n  - {{name: a, sku: {first}, count: 2}}\n"
                                 f"  - {{name: b, sku: {second}, count: 2}}\n")
    topo_a = _conf(artifacts["nccl/a/nccl.conf"])["NCCL_TOPO_FILE"]
    topo_b = _conf(artifacts["nccl/b/nccl.conf"])["NCCL_TOPO_FILE"]
    assert topo_a != topo_b
    for path in (topo_a, topo_b):
        assert f"nccl/{Path(path).name}" in artifacts


def test_nc96_graph_is_never_cluster_wide(tmp_path):
    """A 4-GPU graph in /etc/nccl.conf kills every job given fewer GPUs ("dev N not found")."""
    artifacts = _build(tmp_path, "platforms: [slurm]\npools: [{name: nc, sku: Standard_NC96ads_A100_v4, count: 1}]\n")
    conf = artifacts["nccl/nc/nccl.conf"]
    assert "NCCL_GRAPH_FILE" not in _conf(conf)
    assert "NCCL_GRAPH_FILE" not in artifacts["slurm/nc/all_reduce_perf.sbatch"]
    graph = "/opt/hpcconf/nccl/nc96ads-a100-v4-graph.xml"
    assert f"# Graph file: opt in per job that gets all 4 GPUs (export NCCL_GRAPH_FILE={graph})" in conf
    assert graph in artifacts["slurm/nc/install-nccl-files.sh"]  # installed, for the opt-in


def test_aks_image_ships_no_graph_nothing_points_at(tmp_path):
    artifacts = _build(tmp_path, "platforms: [aks]\npools: [{name: nc, sku: Standard_NC96ads_A100_v4, count: 1}]\n"
                                 "test_image: {registry: myacr.azurecr.io, tag: '25.10', base: 'nvcr.io/nvidia/pytorch:25.10-py3'}\n")
    assert not any(path.endswith("-graph.xml") for path in artifacts)
    assert "graph" not in artifacts["image/Dockerfile"]
    assert "NCCL_GRAPH_FILE" not in artifacts["aks/volcano-job.yaml"]


# --------------------------------------------------------------------------- Crusoe module versions

REPO = Path(__file__).resolve().parents[1]
CRUSOE = REPO / "examples" / "crusoe-h100-slurm.yaml"
# crusoecloud/slurm variables.tf, the variables hpcconf may write (all of them, per version):
MODULE_VARIABLES = {
    # tag v3.0.0 (87aa39c): compute nodes only through `partitions`
    "v3.0.0": {"location", "project_id", "ssh_public_key_path", "vpc_subnet_id", "partitions", "slurm_users"},
    # 9f57d5e (last commit before v3): slurm_compute_node_type/_count/_ib_partition_id
    "9f57d5e": {"location", "project_id", "ssh_public_key_path", "vpc_subnet_id", "slurm_compute_node_type",
                "slurm_compute_node_count", "slurm_compute_node_ib_partition_id", "slurm_users"},
    # b115d0c (2024-06-16): slurm_compute_node_ib_network_id
    "b115d0c": {"location", "project_id", "ssh_public_key_path", "vpc_subnet_id", "slurm_compute_node_type",
                "slurm_compute_node_count", "slurm_compute_node_ib_network_id", "slurm_users"},
}
# v3.0.0's partitions element: object({name, count, type, imex_support, ib_partition_id, image, custom_image,
# reservation_id, extra_args}); none optional, so Terraform rejects an element missing one.
PARTITION_ATTRIBUTES = {"name", "count", "type", "imex_support", "ib_partition_id", "image", "custom_image",
                        "reservation_id", "extra_args"}


def _crusoe(tmp_path: Path, version: str) -> dict[str, str]:
    import re
    text = CRUSOE.read_text(encoding="utf-8").replace("module_version: v3.0.0", f"module_version: {version}")
    if version == "b115d0c":
        text = re.sub(r"    ib_partition_ids:.*\n      h100: 7a1d3c52-9e84-4b6f-a2d0-5c8e1f3b9a64.*\n", "", text)
    spec = tmp_path / "crusoe.yaml"
    spec.write_text(text, encoding="utf-8")
    return {a.path: a.content for a in compile_spec(spec).artifacts}


def _top_level_names(tfvars: str) -> set[str]:
    import re
    return set(re.findall(r"^([a-z_]+) = ", tfvars, re.MULTILINE))


@pytest.mark.parametrize("version", sorted(MODULE_VARIABLES))
def test_tfvars_use_only_the_pinned_module_versions_variables(tmp_path, version):
    artifacts = _crusoe(tmp_path, version)
    names = _top_level_names(artifacts["slurm/terraform.tfvars"])
    assert names == MODULE_VARIABLES[version]
    partition = "h100" if version == "v3.0.0" else "batch"  # pre-v3 slurm.conf: PartitionName=batch
    assert f"#SBATCH -p {partition}\n" in artifacts["slurm/h100/all_reduce_perf.sbatch"]


def test_v3_partitions_element_has_every_attribute_and_the_ib_partition(tmp_path):
    import re
    tfvars = _crusoe(tmp_path, "v3.0.0")["slurm/terraform.tfvars"]
    block = tfvars[tfvars.index("partitions = ["):tfvars.index("]\n", tfvars.index("partitions = ["))]
    assert set(re.findall(r"^    ([a-z_]+)\s+= ", block, re.MULTILINE)) == PARTITION_ATTRIBUTES
    assert 'count           = 2' in block and 'type            = "h100-80gb-sxm-ib.8x"' in block
    assert 'ib_partition_id = "7a1d3c52-9e84-4b6f-a2d0-5c8e1f3b9a64"' in block


def test_ib_partition_ids_refused_for_the_module_that_creates_the_partition():
    from pydantic import ValidationError

    from hpcconf.spec.slurm import CrusoeSlurm
    base = {"project_id": "5f0e8a52-3c1d-4b7e-9a26-8d4c2e1f7b90", "location": "us-east1-a",
            "vpc_subnet_id": "80cf6356-da22-42c8-8925-d5fb1e3e55ad"}
    with pytest.raises(ValidationError, match="b115d0c"):
        CrusoeSlurm(**base, module_version="b115d0c", ib_partition_ids={"h100": "7a1d3c52-9e84-4b6f-a2d0-5c8e1f3b9a64"})
    with pytest.raises(ValidationError, match="not an IB partition id"):
        CrusoeSlurm(**base, ib_partition_ids={"h100": "nope"})
    assert CrusoeSlurm(**base).module_version == "v3.0.0"


# --------------------------------------------------------------------------- offline topology evidence

def _pci_devices(xml: str) -> tuple[dict[str, int], dict[str, int]]:
    """NUMA node of each GPU (PCI class 0x03xx) and InfiniBand HCA (0x0207) in a topology file."""
    from lxml import etree
    gpus, hcas = {}, {}
    for cpu in etree.fromstring(xml.encode()).iter("cpu"):
        for pci in cpu.iter("pci"):
            cls = pci.get("class", "")
            if cls.startswith("0x03"):
                gpus[pci.get("busid")] = int(cpu.get("numaid"))
            elif cls.startswith("0x0207"):
                hcas[pci.get("busid")] = int(cpu.get("numaid"))
    return gpus, hcas


@pytest.mark.parametrize("name", ["Standard_ND96asr_v4", "Standard_ND96amsr_A100_v4", "Standard_ND96isr_H100_v5",
                                  "Standard_ND96isr_H200_v5", "Standard_ND40rs_v2", "Standard_NC96ads_A100_v4"])
def test_each_skus_topology_file_carries_its_catalog_bus_ids(name):
    """The acceptance machine (2 x H200) cannot check bus ids or NUMA placement; this does, offline, per SKU."""
    from hpcconf.catalog import Catalog
    from hpcconf.resolve.sku import resolve_sku
    from hpcconf.targets.nccl_topology import render_topology_xml
    sku = Catalog.load().get(name)
    gpus, hcas = _pci_devices(render_topology_xml(resolve_sku(sku)))
    assert gpus == {busid: node.numaid for node in sku.topology.numa for busid in node.gpus}
    assert len(gpus) == sku.gpu.count
    assert hcas == {busid: node.numaid for node in sku.topology.numa for busid in node.hcas}


# --------------------------------------------------------------------------- spec values that built silently

def test_min_bytes_above_max_bytes_is_refused_with_its_location(tmp_path):
    from hpcconf.diagnostics import HpcconfError
    spec = tmp_path / "s.yaml"
    spec.write_text(HEAD + "platforms: [slurm]\npools: [{name: a, sku: Standard_ND96asr_v4, count: 2}]\n"
                    "nccl_test:\n  min_bytes: 8G\n  max_bytes: 1M\n", encoding="utf-8")
    with pytest.raises(HpcconfError) as caught:
        compile_spec(spec)
    problem = caught.value.diagnostics[0]
    assert "min_bytes 8G is larger than max_bytes 1M" in problem.message and problem.line == 7


def test_message_bytes_reads_sizes_as_nccl_tests_does():
    from hpcconf.spec.model import NcclTest, message_bytes
    assert (message_bytes("8"), message_bytes("1K"), message_bytes("2G")) == (8, 1024, 2 << 30)
    assert NcclTest(min_bytes="1G", max_bytes="1G").max_bytes == "1G"  # equal is a one-size run


def test_ipam_overlap_with_the_aks_ranges():
    from hpcconf.knowledge.network import ipam_overlaps
    assert ipam_overlaps("192.168.0.0/16") == []  # the spec default
    [overlap] = ipam_overlaps("10.0.128.0/17")
    assert (overlap.name, overlap.cidr, overlap.shared) == ("service CIDR", "10.0.0.0/16", "10.0.128.0/17")
    assert [o.name for o in ipam_overlaps("10.0.0.0/8")] == ["service CIDR", "pod CIDR"]
    [overlap] = ipam_overlaps("10.244.10.0/24")
    assert overlap.name == "pod CIDR" and overlap.shared == "10.244.10.0/24"
    assert "overlaps the AKS pod CIDR 10.244.0.0/16" in overlap.message("10.244.10.0/24")
    assert ipam_overlaps("10.1.0.0/16", service_cidr="10.1.0.0/24")[0].shared == "10.1.0.0/24"
    with pytest.raises(ValueError):
        ipam_overlaps("not-a-cidr")


def test_ipam_overlap_is_a_spec_error_and_custom_cidrs_reach_provision_sh(tmp_path):
    """SPEC017 judges the IPAM range against the spec's own cluster ranges, which provision.sh passes to az."""
    from hpcconf.diagnostics import HpcconfError
    from hpcconf.pipeline import compile_spec

    base = ("apiVersion: hpcconf/v1\nkind: Cluster\nmetadata: {name: demo, location: eastus}\nplatforms: [aks]\n"
            "pools:\n  - {name: gpu, sku: Standard_ND96asr_v4, count: 2}\n"
            "test_image: {registry: myacr.azurecr.io, tag: \"24.05\"}\n")
    spec = tmp_path / "s.yaml"
    spec.write_text(base + "network:\n  infiniband: {ipam_range: 10.244.0.0/24}\n")
    with pytest.raises(HpcconfError) as info:
        compile_spec(spec)
    assert [d.code for d in info.value.diagnostics] == ["SPEC017"]
    assert "pod CIDR 10.244.0.0/16" in info.value.diagnostics[0].message
    spec.write_text(base + "network:\n  infiniband: {ipam_range: 10.244.0.0/24}\n"
                    "aks: {service_cidr: 172.16.0.0/16, pod_cidr: 172.17.0.0/16}\n")
    provision = next(a.content for a in compile_spec(spec).artifacts if a.path == "aks/provision.sh")
    assert "SERVICE_CIDR='172.16.0.0/16'" in provision and "DNS_SERVICE_IP='172.16.0.10'" in provision
    create = [line.strip() for line in provision.splitlines()]
    at = create.index('--service-cidr "$SERVICE_CIDR" \\')  # `az aks create` passes all three, in a row
    assert create[at + 1:at + 3] == ['--dns-service-ip "$DNS_SERVICE_IP" \\', '--pod-cidr "$POD_CIDR" \\']
    spec.write_text(base)
    default = next(a.content for a in compile_spec(spec).artifacts if a.path == "aks/provision.sh")
    assert "--service-cidr" not in default and "--pod-cidr" not in default  # AKS's defaults, as before
