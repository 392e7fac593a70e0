"""Package build hook: compile hpcconf's data tables (hpcconf/data/**/*.yaml) to JSON inside the wheel.

hpcconf/data_tables.py explains why (the YAML reader is ~100x slower) and reads them; the YAML stays the one
source and is shipped too. Editable installs get no compiled tables (a source checkout reads its YAML).
"""

from __future__ import annotations

import importlib.util
import shutil
import tempfile
from pathlib import Path
from typing import Any

from hatchling.builders.hooks.plugin.interface import BuildHookInterface


class DataTablesHook(BuildHookInterface):
    PLUGIN_NAME = "custom"

    def initialize(self, version: str, build_data: dict[str, Any]) -> None:
        if self.target_name != "wheel" or version == "editable":
            return
        root = Path(self.root)
        spec = importlib.util.spec_from_file_location("_hpcconf_data_tables", root / "hpcconf" / "data_tables.py")
        assert spec is not None and spec.loader is not None
        tables = importlib.util.module_from_spec(spec)
        spec.loader.exec_module(tables)  # by path: hpcconf's own dependencies are not installed at build time
        self._out = Path(tempfile.mkdtemp(prefix="hpcconf-tables-"))
        for written, inside in tables.compile_tables(root / "hpcconf" / "data", self._out).items():
            build_data["force_include"][str(written)] = inside

    def finalize(self, version: str, build_data: dict[str, Any], artifact_path: str) -> None:
        out = getattr(self, "_out", None)
        if out is not None:
            shutil.rmtree(out, ignore_errors=True)
