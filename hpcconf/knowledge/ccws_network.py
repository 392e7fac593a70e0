"""The subnets CycleCloud Workspace for Slurm carves out of a new VNet, computed as ``bicep/network-new.bicep`` does.

``network-new.bicep`` takes the VNet's ``addressSpace`` (``network.addressSpace``, e.g. ``10.0.0.0/22``), splits it
into octets and its prefix length, and places each subnet at fixed offsets (``subnet_octets``): cyclecloud ``+0.0/29``,
scheduler ``+0.16/28`` (computed, never created), netapp ``+0.32`` (/29 in a /24, else /28), bastion ``+0.64/26``,
database ``+0.40/29`` or ``+0.224/28``, compute the upper half (``/prefix+1`` at ``+2^(23-prefix).0``, or ``+0.128/25``
in a /24) and lustre a quarter below it. Offsets are added to the octets as written, without carrying, so an
address with host bits or a prefix outside /16../24 gives subnets that overlap or are no IPv4 range at all.
``pow2_or_0`` indexes ``[0, 1, 2, ..., 128]``: a prefix shorter than /16 indexes past its end and the deployment fails.

Rules by release (``git log bicep/network-new.bicep``): the lustre subnet was fixed (``+0.128/26``, ``+0.48/28`` in
a /24) up to 2025.09.15 and scales with the VNet from 2025.12.01 (commit f6ff6c1, PR #307, "Synchronize
auto-created AMLFS subnets with network size chosen in UI"); the compute subnet's offset for /18 and /19 was fixed by
commit 1ae88c2 (PR #237) before the first release we hold a schema for (2024.08.30). Upstream tests the rules in
``bicep-test/network-new-test.bicep`` (tests/data/ccws/bicep_test_cases.yaml holds its cases in our form).
"""

from __future__ import annotations

import ipaddress
from dataclasses import dataclass

SOURCE = "Azure/cyclecloud-slurm-workspace bicep/network-new.bicep"
SCALED_LUSTRE_SINCE = "2025.12.01"  # f6ff6c1 (PR #307)
# Order of vnet.subnets in network-new.bicep (union of the created subnets); scheduler is computed, never created.
SUBNET_ORDER = ("cyclecloud", "compute", "netapp", "lustre", "bastion", "database")
# Address space prefixes the portal offers for a new VNet (createUiDefinition.json cidrPrefix at 2026.07.02).
PORTAL_PREFIXES = (20, 21, 22, 23, 24)
_POW2 = (0, 1, 2, 4, 8, 16, 32, 64, 128)


@dataclass(frozen=True)
class Octets:
    o3: int
    o4: int
    cidr: int


def _tag_key(tag: str) -> tuple[int, ...]:
    return tuple(int(part) for part in tag.split("."))


def pow2_or_0(exp: int) -> int:
    """``pow2_or_0``: 2^exp for 0 <= exp <= 7, 0 for exp < 0; IndexError past 7 (ARM's index out of range)."""
    return _POW2[max(exp + 1, 0)]


def subnet_octets(cidr: int, release: str = SCALED_LUSTRE_SINCE) -> dict[str, Octets]:
    """``subnet_octets(cidr)``: each subnet's third- and fourth-octet offsets and prefix length."""
    is24 = cidr == 24
    if _tag_key(release) >= _tag_key(SCALED_LUSTRE_SINCE):
        lustre = Octets(0 if is24 else pow2_or_0(22 - cidr), 48 if is24 else 128 if cidr == 23 else 0,
                        28 if is24 else cidr + 2)
    else:
        lustre = Octets(0, 48 if is24 else 128, 28 if is24 else 26)
    return {
        "cyclecloud": Octets(0, 0, 29),
        "scheduler": Octets(0, 16, 28),
        "netapp": Octets(0, 32, 29 if is24 else 28),
        "bastion": Octets(0, 64, 26),
        "lustre": lustre,
        "database": Octets(0, 40 if is24 else 224, 29 if is24 else 28),
        "compute": Octets(pow2_or_0(23 - cidr), 128 if is24 else 0, cidr + 1),
    }


class AddressSpaceError(ValueError):
    """The address space is not ``a.b.c.d/n`` with integer parts: network-new.bicep's int() fails."""


def subnet_plan(address: str, *, netapp: bool = False, lustre: bool = False, bastion: bool = False,
                database: bool = False, release: str = SCALED_LUSTRE_SINCE) -> dict[str, str]:
    """The subnets network-new.bicep creates for ``address``, as the strings it writes (octets added, not carried).

    ``netapp``: an ``anf-new`` filer (sched, shared or additional); ``lustre``: ``additionalFilesystem.type`` is
    ``aml-new``; ``bastion``: ``network.bastion``; ``database`` is never created at 2026.07.02 (``createDatabase =
    false``). Raises AddressSpaceError when the address cannot be split, IndexError past pow2_or_0's table.
    """
    try:
        ip, prefix = address.split("/")
        o1, o2, o3, o4 = (int(part) for part in ip.split("."))
        cidr = int(prefix)
    except ValueError as exc:
        raise AddressSpaceError(f"'{address}' is not an IPv4 address/prefix") from exc
    octets = subnet_octets(cidr, release)
    wanted = {"cyclecloud": True, "compute": True, "netapp": netapp, "lustre": lustre, "bastion": bastion,
              "database": database}
    return {role: f"{o1}.{o2}.{o3 + octets[role].o3}.{o4 + octets[role].o4}/{octets[role].cidr}"
            for role in SUBNET_ORDER if wanted[role]}


def plan_problems(address: str, plan: dict[str, str]) -> list[str]:
    """Why the subnets of ``plan`` cannot all be created in the VNet ``address`` (empty when they can)."""
    problems = []
    try:
        space: ipaddress.IPv4Network | None = ipaddress.IPv4Network(address, strict=False)
    except ValueError:
        space = None
        problems.append(f"the address space '{address}' is not an IPv4 network")
    if space is not None and str(space) != address:
        problems.append(f"the address space '{address}' has host bits set (the network is {space}); network-new.bicep "
                        "adds its offsets to the octets as written")
    nets: list[tuple[str, ipaddress.IPv4Network]] = []
    for role, cidr in plan.items():
        try:
            net = ipaddress.IPv4Network(cidr, strict=True)
        except ValueError:
            problems.append(f"the {role} subnet would be '{cidr}', which is no IPv4 range")
            continue
        if space is not None and not net.subnet_of(space):
            problems.append(f"the {role} subnet {net} lies outside the address space {space}")
        problems += [f"the {role} subnet {net} overlaps the {other_role} subnet {other}"
                     for other_role, other in nets if net.overlaps(other)]
        nets.append((role, net))
    return problems


def amlfs_min_vnet_prefix(capacity_tib: int) -> int:
    """The longest new-VNet prefix the portal allows for a new AMLFS of ``capacity_tib`` (createUiDefinition
    ``lustreInfoBoxNew`` at 2026.07.02: /23 up to 256 TiB, /22 up to 512, else /21)."""
    return 23 if capacity_tib <= 256 else 22 if capacity_tib <= 512 else 21
