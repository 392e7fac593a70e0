"""Spec section `slurm:`: settings for plain Slurm clusters (e.g. Crusoe via Terraform)."""

from __future__ import annotations

from pydantic import Field

from .base import StrictModel


class SlurmSettings(StrictModel):
    partition_prefix: str = Field(default="", description="Prefix for partition names (default: the pool name as is).")
