"""Provider profiles: platform facts a rule may assert only on the platform where they hold.

``hpcconf/data/providers.yaml`` holds one profile per provider (Azure, CoreWeave, AWS, GCP, Crusoe, OCI,
Nebius, on-prem): the locked-memory limit unprivileged pods get, the GPU fabrics and the Kubernetes
resources that hand them to a pod, and the signals (label keys, resource names, registries) that tell
from a file which provider it targets. A fact left out of a profile is unknown: rules then say info and
name the context instead of asserting it.
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path

from .. import data_tables

DATA_FILE = Path(__file__).resolve().parents[1] / "data" / "providers.yaml"


@dataclass(frozen=True)
class Provider:
    name: str
    title: str
    pod_memlock: str | None  # "limited", "unlimited" or None (unknown)
    pod_memlock_source: str
    fabrics: tuple[str, ...]
    device_resources: tuple[str, ...]
    socket_ifnames: tuple[str, ...]
    signals: tuple[str, ...]
    refines: str = ""
    socket_exclude: tuple[str, ...] = ()
    socket_exclude_source: str = ""
    mellanox_ethernet: bool | None = None  # a Mellanox Ethernet function beside the fabric's; None: not known


@lru_cache(maxsize=1)
def providers() -> dict[str, Provider]:
    data = data_tables.load(DATA_FILE)["providers"]
    return {name: Provider(name, entry["title"], entry.get("pod_memlock"), entry.get("pod_memlock_source", ""),
                           tuple(entry.get("fabrics") or ()), tuple(entry.get("device_resources") or ()),
                           tuple(entry.get("socket_ifnames") or ()), tuple(entry.get("signals") or ()),
                           entry.get("refines", ""), tuple(entry.get("socket_exclude") or ()),
                           entry.get("socket_exclude_source", ""), entry.get("mellanox_ethernet"))
            for name, entry in data.items()}


def names() -> list[str]:
    return sorted(providers())


def lookup(name: str) -> Provider | None:
    return providers().get(name.strip().lower())


def detect(text: str) -> Provider | None:
    """The provider whose signal the file's text carries (the first in the table's order), or None.

    Signals match case-insensitively. Only one provider's signals may appear (a profile and the one it
    refines count as one: the narrower wins); a file naming two (a multi-cloud example) is left unknown."""
    lowered = text.lower()
    found = [p for p in providers().values() if any(signal.lower() in lowered for signal in p.signals)]
    refined = {p.refines for p in found if p.refines}
    found = [p for p in found if p.name not in refined]
    return found[0] if len(found) == 1 else None
