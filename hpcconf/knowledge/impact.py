"""What applying a change to a generated file means on a running cluster, and version-boundary notes.

The impact table is ``hpcconf/data/impact.yaml`` (one row per artifact family and cause, each
with its public source). :func:`impact_of` picks the row for one changed file and one spec field;
:func:`migration_notes` says what else a version change needs when it crosses a boundary the
knowledge tables know (network-operator's NicClusterPolicy move at 24.10, the az CLI GPU-driver
opt-out flag, chart values keys removed or added between two chart versions).
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path
from typing import Any, Optional

from .. import data_tables
from .charts import AZ_GPU_DRIVER_FLAG_SINCE, NCP_FROM_VALUES_UNTIL, chart
from .versions import Version

DATA_FILE = Path(__file__).resolve().parents[1] / "data" / "impact.yaml"
DISRUPTIONS = ("none", "drains", "deletes-nodes", "replaces-nodes", "ib-network", "network")
DISRUPTION_TEXT = {
    "drains": "drains nodes",
    "deletes-nodes": "deletes nodes",
    "replaces-nodes": "replaces nodes",
    "ib-network": "changes the InfiniBand network",
    "network": "moves the workspace's subnets",
}
# Spec fields that pin a Helm chart version, by chart name in data/chart_keys.yaml.
CHART_VERSION_FIELDS = {
    "versions.network_operator": "network-operator",
    "versions.gpu_operator": "gpu-operator",
    "versions.node_feature_discovery": "node-feature-discovery",
}
MAX_KEYS_LISTED = 8


@dataclass(frozen=True)
class Impact:
    action: str
    effect: str
    disruptive: str  # one of DISRUPTIONS
    source: str

    @property
    def is_disruptive(self) -> bool:
        return self.disruptive != "none"

    def to_json(self) -> dict[str, Any]:
        return {"action": self.action, "effect": self.effect, "disruptive": self.disruptive, "source": self.source}


@dataclass(frozen=True)
class ImpactRow:
    artifact: re.Pattern[str]
    fields: tuple[re.Pattern[str], ...]
    when: Optional[str]
    impact: Impact


@dataclass(frozen=True)
class MigrationNote:
    field: str
    title: str
    text: str
    source: str

    def to_json(self) -> dict[str, str]:
        return {"field": self.field, "title": self.title, "text": self.text, "source": self.source}


def _glob(pattern: str) -> re.Pattern[str]:
    """Only ``*`` is special (matching ``/`` too): field globs contain ``[]`` literally."""
    return re.compile("".join(".*" if part == "*" else re.escape(part) for part in re.split(r"(\*)", pattern)) + r"\Z")


@lru_cache(maxsize=1)
def impact_rows() -> tuple[ImpactRow, ...]:
    rows = data_tables.load(DATA_FILE)
    table = []
    for row in rows:
        if row["disruptive"] not in DISRUPTIONS:
            raise ValueError(f"{DATA_FILE.name}: {row['artifact']}: disruptive must be one of {DISRUPTIONS}")
        impact = Impact(action=row["action"], effect=" ".join(row["effect"].split()), disruptive=row["disruptive"],
                        source=row["source"])
        table.append(ImpactRow(_glob(row["artifact"]), tuple(_glob(f) for f in row.get("fields") or ()),
                               row.get("when"), impact))
    return tuple(table)


def field_key(label: str) -> str:
    """An explain-diff label as the table names fields: ``pools[2].count`` -> ``pools[].count``,
    ``pools[1] ('cpu' added)`` -> ``pools[+]``, ``... removed`` -> ``pools[-]``."""
    key = re.sub(r"\[\d+\] \('[^']*' added\)", "[+]", label)
    key = re.sub(r"\[\d+\] \('[^']*' removed\)", "[-]", key)
    return re.sub(r"\[\d+\]", "[]", key)


def _direction(old: Any, new: Any) -> Optional[str]:
    if isinstance(old, (int, float)) and isinstance(new, (int, float)) and not isinstance(old, bool):
        return "decrease" if new < old else "increase" if new > old else None
    return None


def impact_of(artifact_path: str, field: Optional[str] = None, old: Any = None, new: Any = None) -> Optional[Impact]:
    """The impact of changing ``artifact_path`` (relative to the cluster's output directory)
    through spec field ``field`` (an explain-diff label), or through no single field (None)."""
    key = field_key(field) if field is not None else None
    direction = _direction(old, new)
    for row in impact_rows():
        if not row.artifact.match(artifact_path):
            continue
        if row.fields and (key is None or not any(f.match(key) for f in row.fields)):
            continue
        if row.when is not None and row.when != direction:
            continue
        return row.impact
    return None


# -- version boundaries -----------------------------------------------------------------------------

def _crosses(old: Any, new: Any, boundary: str) -> bool:
    """True when ``old`` and ``new`` lie on different sides of ``boundary`` (either direction)."""
    old_v, new_v = Version.parse_or_none(str(old)), Version.parse_or_none(str(new))
    if old_v is None or new_v is None:
        return False
    return old_v.at_least(boundary) != new_v.at_least(boundary)


def _network_operator_note(old: Any, new: Any) -> Optional[MigrationNote]:
    if not _crosses(old, new, NCP_FROM_VALUES_UNTIL):
        return None
    upward = Version.parse(str(new)).at_least(NCP_FROM_VALUES_UNTIL)
    if upward:
        text = (f"network-operator {new} no longer renders the NicClusterPolicy from Helm values (removed in "
                f"{NCP_FROM_VALUES_UNTIL}): `helm upgrade` deletes the chart-rendered policy, so the OFED/DOCA driver "
                "and device-plugin pods go away until aks/nicclusterpolicy.yaml is applied. Apply it right after the "
                "upgrade (provision.sh does), and upgrade the CRDs first (`helm upgrade` does not update CRDs).")
    else:
        text = (f"network-operator {new} renders the NicClusterPolicy from Helm values again (before "
                f"{NCP_FROM_VALUES_UNTIL}): delete the separately applied NicClusterPolicy before the downgrade, "
                "or the two fight over the same operands.")
    return MigrationNote("versions.network_operator", f"network-operator crosses {NCP_FROM_VALUES_UNTIL}", text,
                         "https://github.com/Mellanox/network-operator/commit/8fc96f20")


def _az_cli_note(old: Any, new: Any) -> Optional[MigrationNote]:
    if not _crosses(old, new, AZ_GPU_DRIVER_FLAG_SINCE):
        return None
    if Version.parse(str(new)).at_least(AZ_GPU_DRIVER_FLAG_SINCE):
        text = (f"az CLI {new} spells the AKS GPU-driver opt-out `--gpu-driver none` (from {AZ_GPU_DRIVER_FLAG_SINCE}) "
                "instead of the SkipGPUDriverInstall=true tag. The opt-out is fixed when a pool is created: pools "
                "created with the tag since AKS stopped honouring it (2025-07-14) run the AKS-managed driver and must "
                "be recreated to get gpu-operator's.")
    else:
        text = (f"az CLI {new} has no --gpu-driver flag (added in {AZ_GPU_DRIVER_FLAG_SINCE}): the script falls back "
                "to the SkipGPUDriverInstall=true tag, which AKS no longer honours (2025-07-14): new pools get the "
                "AKS-managed driver.")
    return MigrationNote("versions.az_cli", f"az CLI crosses {AZ_GPU_DRIVER_FLAG_SINCE}", text,
                         "https://github.com/Azure/AKS/issues/4925")


def _chart_keys_note(field: str, old: Any, new: Any) -> Optional[MigrationNote]:
    name = CHART_VERSION_FIELDS[field]
    old_v, new_v = Version.parse_or_none(str(old)), Version.parse_or_none(str(new))
    if old_v is None or new_v is None:
        return None
    keys = chart(name).keys.values()
    removed = sorted(k.name for k in keys if k.present_in(str(old)) and not k.present_in(str(new)))
    added = sorted(k.name for k in keys if k.present_in(str(new)) and not k.present_in(str(old)))
    if not removed and not added:
        return None

    def listed(names: list[str]) -> str:
        more = f" and {len(names) - MAX_KEYS_LISTED} more" if len(names) > MAX_KEYS_LISTED else ""
        return ", ".join(names[:MAX_KEYS_LISTED]) + more

    parts = []
    if removed:
        parts.append(f"keys removed: {listed(removed)}")
    if added:
        parts.append(f"keys added: {listed(added)}")
    text = (f"{name} values between {old} and {new}: " + "; ".join(parts) + ". Helm ignores a key the chart no "
            "longer has without a word: move any values kept outside hpcconf to their new keys.")
    return MigrationNote(field, f"{name} values keys change", text, f"https://github.com/{chart(name).repo}")


def migration_notes(field: str, old: Any, new: Any) -> list[MigrationNote]:
    """Notes for one changed spec field (an explain-diff label); empty when it crosses no known boundary."""
    notes: list[Optional[MigrationNote]] = []
    if field == "versions.network_operator":
        notes.append(_network_operator_note(old, new))
    if field == "versions.az_cli":
        notes.append(_az_cli_note(old, new))
    if field in CHART_VERSION_FIELDS:
        notes.append(_chart_keys_note(field, old, new))
    return [n for n in notes if n is not None]
