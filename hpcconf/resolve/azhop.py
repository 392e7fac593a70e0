"""Derived values only the azhop artifacts need (filled in by the azhop targets' work)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from . import ResolvedCluster


@dataclass(frozen=True)
class ResolvedAzhop:
    pass


def resolve_azhop(cluster: "ResolvedCluster") -> ResolvedAzhop:
    return ResolvedAzhop()
