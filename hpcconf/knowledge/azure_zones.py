"""Which Azure regions have availability zones (``hpcconf/data/azure_zones.yaml``, from Microsoft Learn's regions
list): what CCWS's portal reads before it gives a new Azure Managed Lustre the zone ``["1"]``. A region in neither
list is unknown: callers ask for the zone instead of guessing."""

from __future__ import annotations

from functools import lru_cache
from pathlib import Path
from typing import Any, Optional

from .. import data_tables

DATA_FILE = Path(__file__).resolve().parents[1] / "data" / "azure_zones.yaml"


@lru_cache(maxsize=1)
def _table() -> dict[str, Any]:
    return data_tables.load(DATA_FILE)


def has_zones(region: str) -> Optional[bool]:
    """True where the region has availability zones, False where it has none, None where hpcconf does not know."""
    table = _table()
    if region in table["zonal"]:
        return True
    if region in table["no_zones"]:
        return False
    return None


def source() -> str:
    return str(_table()["source"])


def check_command(region: str) -> str:
    """The command that shows the region's zones for the user's subscription (what the portal reads)."""
    return str(_table()["check"]).replace("REGION", region)
