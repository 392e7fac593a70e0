"""Derived values only the aks artifacts need (filled in by the aks targets' work)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from . import ResolvedCluster


@dataclass(frozen=True)
class ResolvedAks:
    pass


def resolve_aks(cluster: "ResolvedCluster") -> ResolvedAks:
    return ResolvedAks()
