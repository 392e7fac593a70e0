"""Derived values only the slurm artifacts need (filled in by the slurm targets' work)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from . import ResolvedCluster


@dataclass(frozen=True)
class ResolvedSlurm:
    pass


def resolve_slurm(cluster: "ResolvedCluster") -> ResolvedSlurm:
    return ResolvedSlurm()
