"""The CCWS subnet plan equals upstream's bicep-test cases (tests/data/ccws/bicep_test_cases.yaml, in our form; read
from the mirror's bicep-test/network-new-test.bicep at each tag where the mirror exists) and finds plans that cannot
be created."""

from __future__ import annotations

import re
import subprocess
from pathlib import Path

import pytest
from ruamel.yaml import YAML

from hpcconf.knowledge import ccws_network as net

ROOT = Path(__file__).resolve().parents[1]
CASES = YAML(typ="safe").load((ROOT / "tests" / "data" / "ccws" / "bicep_test_cases.yaml").read_text(encoding="utf-8"))
MIRROR = Path("/work/.mirror/Azure+cyclecloud-slurm-workspace/repo")


@pytest.mark.parametrize("exp,value", sorted(CASES["pow2_or_0"].items()))
def test_pow2_or_0_is_upstreams(exp, value):
    assert net.pow2_or_0(exp) == value


def test_pow2_or_0_past_its_table_fails_as_arm_does():
    with pytest.raises(IndexError):
        net.pow2_or_0(8)


@pytest.mark.parametrize("release", sorted(CASES["releases"]))
def test_subnet_octets_are_upstreams_bicep_test_cases(release):
    for prefix, expected in CASES["releases"][release].items():
        got = {role: [o.o3, o.o4, o.cidr] for role, o in net.subnet_octets(prefix, release).items()}
        assert got == expected, f"subnet_octets({prefix}) at {release}"


def _upstream_cases(text: str) -> dict[int, dict[str, list[int]]]:
    """subnet_octets cases of network-new-test.bicep: `var base...` objects and `assert cidrNN = ... union(base, {...})`."""
    block = re.compile(r"(\w+):\s*\{\s*o3:\s*(\d+)\s*o4:\s*(\d+)\s*cidr:\s*(\d+)\s*\}", re.S)
    text = re.sub(r"//[^\n]*", "", text)
    chunks = re.split(r"^(?=var |assert )", text, flags=re.M)
    named: dict[str, dict[str, list[int]]] = {}
    cases = {}
    for chunk in chunks:
        own = {m.group(1): [int(m.group(2)), int(m.group(3)), int(m.group(4))] for m in block.finditer(chunk)}
        base = re.search(r"union\((\w+)\s*,", chunk)
        merged = {**(named[base.group(1)] if base else {}), **own}
        if (var := re.match(r"var (\w+)", chunk)):
            named[var.group(1)] = merged
        elif (case := re.match(r"assert cidr\d+ = subnet_octets\((\d+)\)", chunk)):
            cases[int(case.group(1))] = merged
    return cases


@pytest.mark.parametrize("release", sorted(CASES["releases"]))
def test_the_cases_are_the_mirrors_test_file(release):
    if not MIRROR.is_dir():
        pytest.skip("no mirror of Azure/cyclecloud-slurm-workspace")
    text = subprocess.run(["git", "--git-dir", str(MIRROR), "show", f"{release}:bicep-test/network-new-test.bicep"],
                          capture_output=True, text=True, check=True).stdout
    assert _upstream_cases(text) == CASES["releases"][release]


def test_plan_for_the_portal_prefixes_fits():
    for prefix in net.PORTAL_PREFIXES:
        address = f"10.1.0.0/{prefix}"
        plan = net.subnet_plan(address, netapp=True, lustre=True, bastion=True)
        assert list(plan) == ["cyclecloud", "compute", "netapp", "lustre", "bastion"]
        assert net.plan_problems(address, plan) == [], address


def test_plan_is_bicep_string_arithmetic():
    assert net.subnet_plan("10.0.4.0/22", netapp=True, lustre=True) == {
        "cyclecloud": "10.0.4.0/29", "compute": "10.0.6.0/23", "netapp": "10.0.4.32/28", "lustre": "10.0.5.0/24"}
    assert net.subnet_plan("10.0.0.0/23", lustre=True, release="2025.09.15")["lustre"] == "10.0.0.128/26"


@pytest.mark.parametrize("address,problem", [
    ("10.0.1.0/23", "lies outside the address space"),  # host bits: 10.0.2.0/24 is compute, past 10.0.0.0/23
    ("10.0.0.128/24", "which is no IPv4 range"),        # 128 + 128 = 256 in the fourth octet
    ("10.0.0.0/25", "overlaps the cyclecloud subnet"),   # compute /26 at +0.0
])
def test_plans_that_cannot_be_created(address, problem):
    plan = net.subnet_plan(address, bastion=True)
    assert any(problem in p for p in net.plan_problems(address, plan)), net.plan_problems(address, plan)


def test_an_address_that_cannot_be_split_is_refused():
    with pytest.raises(net.AddressSpaceError):
        net.subnet_plan("10.0.0/24")


def test_amlfs_minimum_prefix_follows_the_portal():
    assert [net.amlfs_min_vnet_prefix(c) for c in (128, 256, 384, 512, 1024)] == [23, 23, 22, 22, 21]
