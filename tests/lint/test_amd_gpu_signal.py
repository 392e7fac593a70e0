"""NCCL060 on AMD (review20y: MLPerf's config_MI325X_1x8x1_8b.sh, AMD's copyright, NCCL_NVLS_ENABLE=0): RCCL on
MI325X has no NVLink, NVLS or MNNVL to lose, and the file says where it runs by its name and its copyright."""

from __future__ import annotations

from pathlib import Path

import pytest

from hpcconf.lint.context import LintContext
from hpcconf.lint.engine import lint_paths

CONFIG = "export NCCL_MIN_P2P_NCHANNELS=32\nexport NCCL_NVLS_ENABLE=0\n"


@pytest.mark.parametrize("name, header, found", [
    ("config_MI325X_1x8x1_8b.sh", "", set()),
    ("config.sh", "# Copyright (c) 2025, Advanced Micro Devices, Inc. All rights reserved.\n", set()),
    ("config_DGXH100_1x8x1_8b.sh", "", {(2, "info")}),  # NVIDIA, VM unnamed: info, as before
])
def test_nvls_off_is_no_loss_where_the_file_shows_amd_gpus(tmp_path: Path, monkeypatch, name, header, found):
    (tmp_path / name).write_text("#!/bin/bash\n" + header + CONFIG if header else CONFIG)
    monkeypatch.chdir(tmp_path)
    findings = lint_paths([name], LintContext()).findings
    offset = 2 if header else 0
    assert {(f.line - offset, f.severity.value) for f in findings if f.code == "NCCL060"} == found
