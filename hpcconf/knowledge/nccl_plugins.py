"""``NCCL_*`` variables read by NCCL's network plugins, not by NCCL itself.

NCCL loads a net plugin (``libnccl-net.so``: Mellanox's nccl-rdma-sharp-plugins from HPC-X, AWS's
aws-ofi-nccl) and the plugin reads its own ``NCCL_*`` variables with ``getenv`` or its copy of
``NCCL_PARAM``. A name absent from NCCL's release table is therefore not a dead setting when a plugin
reads it. The table (``hpcconf/data/nccl_plugin_env.tsv``) lists each such name with the plugin and the
source file, at a pinned commit, that reads it.
"""

from __future__ import annotations

import csv
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path

DATA_FILE = Path(__file__).resolve().parents[1] / "data" / "nccl_plugin_env.tsv"


@dataclass(frozen=True)
class PluginVariable:
    name: str
    plugin: str
    source: str  # URL of the file that reads it, at a commit


@lru_cache(maxsize=1)
def plugin_variables() -> dict[str, PluginVariable]:
    with DATA_FILE.open(encoding="utf-8", newline="") as handle:
        rows = csv.DictReader(handle, delimiter="\t")
        return {row["name"]: PluginVariable(row["name"], row["plugin"], row["source"]) for row in rows}


def read_by_plugin(name: str) -> PluginVariable | None:
    """The plugin that reads ``name``, or None when no known plugin does."""
    return plugin_variables().get(name)
