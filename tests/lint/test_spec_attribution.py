"""Findings caused by a spec's nccl_env / mpi_env point at the spec line, where the user fixes or suppresses them."""

from __future__ import annotations

import json
import textwrap

from typer.testing import CliRunner

from hpcconf.cli import app

SPEC = textwrap.dedent("""\
    apiVersion: hpcconf/v1
    kind: Cluster
    metadata: {name: nc48-test, location: eastus}
    platforms: [slurm]
    pools:
      - {name: nc48, sku: Standard_NC48ads_A100_v4, count: 1}
    nccl_env:
      NCCL_GRAPH_FILE: /opt/microsoft/ncv4/graph.xml
      NCCL_DEBUG: INFO
    """)


def _lint(path) -> tuple[int, list[dict]]:
    result = CliRunner().invoke(app, ["lint", str(path), "--format", "json"])
    return result.exit_code, json.loads(result.stdout)["findings"]


def test_graph_file_from_nccl_env_is_reported_once_at_the_spec_line(tmp_path):
    spec = tmp_path / "nc48.yaml"
    spec.write_text(SPEC)
    code, findings = _lint(spec)
    graph = [f for f in findings if f["code"] == "NCCL015"]
    assert code == 1
    # The generated nccl.conf and the sbatch script both carry it: one finding, on the spec's value.
    assert [(f["file"], f["line"], f["column"]) for f in graph] == [(str(spec), 8, 20)]
    assert "set by nccl_env.NCCL_GRAPH_FILE" in graph[0]["message"]
    assert "57.5" in graph[0]["message"]  # the seed's measured loss travels with it


def test_inline_suppression_on_the_spec_line_silences_it(tmp_path):
    spec = tmp_path / "nc48.yaml"
    spec.write_text(SPEC.replace("graph.xml\n", "graph.xml   # hpcconf: ignore[NCCL015] reproducing the 2023 run\n"))
    code, findings = _lint(spec)
    assert code == 0
    assert [f for f in findings if f["code"] in ("NCCL015", "HPC011")] == []


def test_sku_defaults_are_not_blamed_on_the_spec(tmp_path):
    spec = tmp_path / "ok.yaml"
    spec.write_text(SPEC.replace("  NCCL_GRAPH_FILE: /opt/microsoft/ncv4/graph.xml\n", ""))
    code, findings = _lint(spec)
    assert code == 0 and [f for f in findings if f["severity"] != "info"] == []


def test_an_internal_error_is_one_line_not_a_traceback(tmp_path, monkeypatch):
    import subprocess
    import sys

    script = ("import hpcconf.cli as c, hpcconf.pipeline as p\n"
              "def boom(*a, **k): raise RuntimeError('kaboom')\n"
              "p.compile_spec = boom\n"
              "import hpcconf.build_command as b; b.compile_spec = boom\n"
              "import sys; sys.argv = ['hpcconf', 'build', sys.argv[1], '--out', sys.argv[2]]\n"
              "c.main()\n")
    spec = tmp_path / "nc48.yaml"
    spec.write_text(SPEC)
    monkeypatch.delenv("HPCCONF_DEBUG", raising=False)
    done = subprocess.run([sys.executable, "-c", script, str(spec), str(tmp_path / "o")], capture_output=True, text=True)
    assert done.returncode == 70
    assert "internal error: RuntimeError: kaboom" in done.stderr
    assert "Traceback" not in done.stderr + done.stdout
