"""Spec section `azhop:`: settings only the AzHOP config.yml uses."""

from __future__ import annotations

from pydantic import Field

from .base import StrictModel


class AzhopSettings(StrictModel):
    address_space: str = Field(default="10.0.0.0/23", description="VNet address space (CIDR).")
