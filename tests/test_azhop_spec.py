"""AzHOP spec checks: each gap in az-hop's schema (research/azhop.md §2, G1-G8) is refused at the spec
line that causes it, before anything is generated: under the config.yml rule's code where both share one
judgement (AZH002/010/012/013), else under the spec rule that judges what only the spec decides (SPEC040-046)."""

from __future__ import annotations

from pathlib import Path

import pytest

from hpcconf.diagnostics import HpcconfError
from hpcconf.pipeline import compile_spec

REPO = Path(__file__).resolve().parents[1]
BASE = (REPO / "examples" / "azhop-ncv4.yaml").read_text(encoding="utf-8")


def edit(*pairs: tuple[str, str]) -> str:
    text = BASE
    for old, new in pairs:
        assert old in text, old
        text = text.replace(old, new, 1)
    return text


def where(text: str, marker: str, token: str) -> tuple[int, int]:
    """1-based line of the first line containing ``marker`` and column of ``token`` on it."""
    for number, line in enumerate(text.splitlines(), start=1):
        if marker in line:
            return number, line.index(token) + 1
    raise AssertionError(f"{marker!r} not in spec")


POOL_COUNT = "    count: 2                       # sinfo: ndv4-pg0-[1-2]"
SUBNETS = ("    address_space: 10.101.0.0/23\n",
           "    address_space: 10.101.0.0/23\n    subnets:\n      frontend: 10.101.0.0/29\n      ad: 10.101.0.8/29\n"
           "      admin: 10.101.0.16/28\n      compute: 10.101.1.0/24\n")

# name -> (edits, expected code, (marker, token) locating the reported line/column, phrase in message or hint)
CASES = {
    "G1 queue_manager value": (
        [("  queue_manager: slurm", "  queue_manager: pbspro")], "HPC005", ("queue_manager: pbspro", "pbspro"), "'pbspro' is not allowed"),
    "G2 CIDR syntax": (
        [SUBNETS, ("      admin: 10.101.0.16/28", "      admin: 10.101.0.17/28")], "HPC005", ("admin: 10.101.0.17/28", "10.101"), "host bits set"),
    "G2 subnet overlap": (
        [SUBNETS, ("      admin: 10.101.0.16/28", "      admin: 10.101.0.0/28")], "SPEC041", ("admin: 10.101.0.0/28", "10.101"), "overlaps subnet frontend"),
    "G2 subnet outside the address space": (
        [SUBNETS, ("      compute: 10.101.1.0/24", "      compute: 10.102.1.0/24")], "SPEC041", ("compute: 10.102.1.0/24", "10.102"), "outside the VNet address space"),
    "G2 compute subnet too small (carved)": (
        [(POOL_COUNT, "    count: 250")], "SPEC042", ("address_space: 10.101.0.0/23", "10.101"), "251 usable addresses"),
    "G2 compute subnet too small (explicit)": (
        [SUBNETS, ("      compute: 10.101.1.0/24", "      compute: 10.101.1.0/28")], "SPEC042", ("compute: 10.101.1.0/28", "10.101"), "Azure keeps 5"),
    "G2 no room to carve": (
        [("    address_space: 10.101.0.0/23", "    address_space: 10.101.0.0/27")], "SPEC041", ("address_space: 10.101.0.0/27", "10.101"), "has no room"),
    "G2 lustre subnet sized for AMLFS": (
        [SUBNETS, ("      compute: 10.101.1.0/24\n", "      compute: 10.101.1.0/24\n      lustre: 10.101.0.64/27\n"),
         ("      options: vers=4,minorversion=1,sec=sys\n", "      options: vers=4,minorversion=1,sec=sys\n    lustre: {sku: AMLFS-Durable-Premium-250, capacity_tib: 32}\n")],
        "SPEC045", ("lustre: 10.101.0.64/27", "10.101"), "needs /26 or larger"),
    "G3 conditional database subnet": (
        [SUBNETS, ("  slurm_accounting: false", "  slurm_accounting: true")], "SPEC043", ("    subnets:", "subnets"), "add `database: 10.101.0.32/28`"),
    "G3 conditional netapp subnet": (
        [SUBNETS, ("      type: azurefiles", "      type: anf")], "SPEC043", ("    subnets:", "subnets"), "no netapp subnet"),
    "G3 existing home needs a server": (
        [("      type: azurefiles", "      type: existing")], "SPEC044", ("type: existing", "existing"), "needs server"),
    "G3 Azure Files home needs NFS 4.1": (
        [("      options: vers=4,minorversion=1,sec=sys", "      options: rw,vers=3,tcp")], "SPEC044", ("options: rw,vers=3,tcp", "rw,"), "NFS 4.1"),
    "G4 unsupported pair": (
        [("  slurm: 20.11.9 ", "  slurm: 20.11.9\n  cyclecloud_slurm: 3.0.4 ")], "SPEC040", ("cyclecloud_slurm: 3.0.4", "3.0.4"), "does not support Slurm 20.11.9"),
    "G4 Slurm version az-hop cannot install": (
        [("  slurm: 20.11.9 ", "  slurm: 23.11.7 ")], "SPEC040", ("slurm: 23.11.7", "23.11.7"), "cannot install Slurm 23.11.7"),
    "G5 image URN with three parts": (
        [("    image: microsoft-dsvm:ubuntu-hpc:2204:22.04.2024102301\n  - name: nc48v4", "    image: microsoft-dsvm:ubuntu-hpc:2004\n  - name: nc48v4")],
        "AZH010", ("image: microsoft-dsvm:ubuntu-hpc:2004", "microsoft"), "publisher:offer:sku:version"),
    "G6 duplicate uid": (
        [("    - {name: john.john, uid: 10003}", "    - {name: john.john, uid: 10001}")], "AZH013", ("name: john.john", "10001"), "already used by users[0]"),
    "G6 undefined group": (
        [("groups: [az-hop-admins, az-hop-localadmins]", "groups: [az-hop-admins, sudoers]")], "AZH013", ("sudoers", "sudoers"), "does not define"),
    "G6 AMLFS capacity step": (
        [("      options: vers=4,minorversion=1,sec=sys\n", "      options: vers=4,minorversion=1,sec=sys\n    lustre: {sku: AMLFS-Durable-Premium-250, capacity_tib: 12}\n")],
        "SPEC045", ("capacity_tib: 12", "12"), "use 8 or 16"),
    "G6 queue idle_timeout": (
        [("      max_core_count: 20", "      max_core_count: 20\n      idle_timeout: 3600")], "AZH012", ("idle_timeout: 3600", "3600"), "not below"),
    "G7 queue name longer than 8": (
        [("  - name: nc96v4", "  - name: nc96adsv4")], "AZH002", ("name: nc96adsv4", "nc96adsv4"), "at most 8"),
    "G7 hostname longer than 15": (
        [("  - name: ndv4", "  - name: ndv4a100"), ("default_queue: ndv4", "default_queue: ndv4a100"), (POOL_COUNT, "    count: 100")],
        "AZH002", ("name: ndv4a100", "ndv4a100"), "ndv4a100-pg0-100"),
    "G7 queue name used twice": (
        [("    - name: execute", "    - name: nc48v4")], "AZH002", ("    - name: nc48v4", "nc48v4"), "used twice"),
    "G8 GPU image without a driver": (
        [("    image: microsoft-dsvm:ubuntu-hpc:2204:22.04.2024102301\n  - name: nc48v4", "    image: OpenLogic:CentOS:7_9-gen2:latest\n  - name: nc48v4")],
        "SPEC046", ("image: OpenLogic:CentOS:7_9-gen2:latest", "OpenLogic"), "no NVIDIA driver"),
    "G8 InfiniBand pool not colocated": (
        [(POOL_COUNT, POOL_COUNT + "\n    placement: {colocate: false}")], "SPEC046", ("colocate: false", "false"), "not colocated"),
    "G8 InfiniBand pool under OpenPBS": (
        [("  queue_manager: slurm", "  queue_manager: openpbs")], "SPEC046", ("queue_manager: openpbs", "openpbs"), "ignores ColocateNodes"),
}


@pytest.mark.parametrize("name", sorted(CASES))
def test_gap_is_caught_at_its_spec_line(name, tmp_path):
    edits, code, (marker, token), phrase = CASES[name]
    text = edit(*edits)
    spec = tmp_path / "azhop.yaml"
    spec.write_text(text, encoding="utf-8")
    with pytest.raises(HpcconfError) as caught:
        compile_spec(spec)
    line, column = where(text, marker, token)
    found = [d for d in caught.value.diagnostics if d.code == code]
    assert found, [f"{d.code}:{d.line}:{d.column} {d.message}" for d in caught.value.diagnostics]
    hit = [d for d in found if (d.line, d.column) == (line, column)]
    assert hit, f"expected {code} at {line}:{column}, got {[(d.line, d.column, d.message) for d in found]}"
    assert any(phrase in d.message or phrase in d.hint for d in hit), [(d.message, d.hint) for d in hit]
    assert all(d.file and d.hint for d in caught.value.diagnostics)


def test_example_passes_every_check():
    compile_spec(REPO / "examples" / "azhop-ncv4.yaml")


def test_default_azhop_section_builds(tmp_path):
    spec = tmp_path / "minimal.yaml"
    spec.write_text("apiVersion: hpcconf/v1\nkind: Cluster\nmetadata: {name: mini, location: westeurope}\n"
                    "platforms: [azhop]\npools:\n  - {name: ndv5, sku: Standard_ND96isr_H100_v5, count: 4}\n", encoding="utf-8")
    build = compile_spec(spec)
    config = next(a for a in build.artifacts if a.path == "azhop/config.yml").content
    assert 'slurm_version: "23.02.5"' in config and 'cyclecloud_slurm_version: "3.0.4"' in config
    assert 'image: "microsoft-dsvm:ubuntu-hpc:2204:22.04.2024102301"' in config


def test_defaults_problem_points_at_platforms(tmp_path):
    spec = tmp_path / "big.yaml"
    spec.write_text("apiVersion: hpcconf/v1\nkind: Cluster\nmetadata: {name: big, location: westeurope}\n"
                    "platforms: [azhop]\npools:\n  - {name: ndv5, sku: Standard_ND96isr_H100_v5, count: 300}\n", encoding="utf-8")
    with pytest.raises(HpcconfError) as caught:
        compile_spec(spec)
    [problem] = [d for d in caught.value.diagnostics if d.code == "SPEC042"]
    assert (problem.line, problem.column) == (4, 12) and "300 nodes" in problem.message
