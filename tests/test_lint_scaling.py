"""lint's time grows linearly with the input: no per-setting or per-finding rescan of the file.

Measured in CPU time and compared between two sizes, so a slow shared machine does not fail it:
a quadratic step shows as a ratio near 4 when the input doubles; linear is near 2.
"""

from __future__ import annotations

import time
from pathlib import Path

from typer.testing import CliRunner

from hpcconf.cli import app

REPO = Path(__file__).resolve().parents[1]


def _lint_cpu_seconds(path: Path) -> float:
    start = time.process_time()
    result = CliRunner().invoke(app, ["lint", str(path), "--format", "json"])
    assert result.exception is None or isinstance(result.exception, SystemExit), result.output
    return time.process_time() - start


def test_a_spec_with_a_long_flow_line_of_env_settings_lints_in_linear_time(tmp_path):
    spec = (REPO / "examples" / "ndmv4-aks.yaml").read_text()
    times = []
    for n in (1500, 3000):
        path = tmp_path / f"s{n}.yaml"
        path.write_text(spec + "nccl_env: {" + ", ".join(f"NCCL_X{i}: a" for i in range(n)) + "}\n")
        _lint_cpu_seconds(path)  # warm caches (tables, templates) before timing
        times.append(min(_lint_cpu_seconds(path) for _ in range(2)))
    assert times[1] / times[0] < 3.0, times
