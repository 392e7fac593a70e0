"""nccl.conf read as NCCL's setEnvFile reads it; rendering that NCCL cannot misread."""

from __future__ import annotations

import importlib.util
import json
import re
from pathlib import Path

import pytest

from hpcconf.knowledge.grammars import check_env_value
from hpcconf.knowledge.nccl_env import is_read_by
from hpcconf.parsers.nccl_conf import effective_nccl_settings, parse_nccl_conf, render_nccl_conf


def _conf_files(shared: Path) -> list[Path]:
    files = sorted((shared / "upstream/nccl/azhpc-images/nccl-conf").glob("*.conf"))
    assert len(files) == 6
    return files


def test_azure_confs_parse_to_their_lines(shared_dir):
    for path in _conf_files(shared_dir):
        text = path.read_text()
        conf = parse_nccl_conf(text)
        expected = dict(line.split("=", 1) for line in text.splitlines() if line)
        assert conf.effective() == expected, path.name
        for entry in conf.entries:
            line = text.splitlines()[entry.line - 1]
            assert line[entry.key_column - 1:entry.key_end_column - 1] == entry.key
            assert line[entry.value_column - 1:entry.value_end_column - 1] == entry.value
        kinds = {p.kind for p in conf.problems}
        if path.name.startswith("legacy"):
            # Azure's pre-2022-08 image put CUDA_DEVICE_ORDER here, too late for CUDA
            assert kinds == {"not-nccl-key"}
            assert [p.line for p in conf.problems] == [2]
        else:
            assert kinds == set(), path.name
            assert all(is_read_by(k, "2.28.9") for k in conf.effective())


def _probe_inputs(shared: Path, tmp: Path, monkeypatch) -> dict:
    monkeypatch.chdir(Path(__file__).resolve().parents[1])
    path = shared / "upstream/nccl/probe/nccl_file_probe.py"
    spec = importlib.util.spec_from_file_location("nccl_file_probe", path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module.make_inputs(str(tmp))


def _nccl_outcome(env: dict[str, str], conf_text: str | None, version: str) -> bool:
    """Would NCCL init succeed? Env wins over the file (setenv(..., 0)); then the grammar decides."""
    effective = dict(parse_nccl_conf(conf_text).effective()) if conf_text is not None else {}
    effective.update({k: v for k, v in env.items() if k != "NCCL_CONF_FILE"})
    for name, value in effective.items():
        if any(p.fatal for p in check_env_value(name, value, nccl_version=version)):
            return False
    return True


def test_probe_conf_and_env_cases_match_nccl(shared_dir, tmp_path, monkeypatch):
    _probe_inputs(shared_dir, tmp_path, monkeypatch)
    results = json.loads((shared_dir / "upstream/nccl/probe/results-config-cases.json").read_text())
    version = results["env"]["nccl"]
    checked = 0
    for case in results["cases"]:
        env = case["env"]
        if any(k in env for k in ("NCCL_TOPO_FILE", "NCCL_GRAPH_FILE")):
            continue  # XML cases: tests/test_parse_nccl_xml.py
        conf_text = None
        if "NCCL_CONF_FILE" in env:
            conf_text = (tmp_path / Path(env["NCCL_CONF_FILE"]).name).read_text()
        assert _nccl_outcome(env, conf_text, version) == case["result"]["ok"], case["case"]
        checked += 1
    assert checked == 9  # baseline, 4 conf-file cases, 4 NCCL_ALGO/PROTO env cases


def test_probe_conf_traps_are_reported(shared_dir, tmp_path, monkeypatch):
    inputs = _probe_inputs(shared_dir, tmp_path, monkeypatch)
    spaces = parse_nccl_conf(Path(inputs["conf_spaces"]).read_text())
    assert spaces.effective() == {"NCCL_ALGO ": " Bogus"}  # probe: silently ignored
    assert {p.kind for p in spaces.problems} == {"spaces-around-eq"}
    inline = parse_nccl_conf(Path(inputs["conf_inline"]).read_text())
    assert inline.effective() == {"NCCL_ALGO": "Ring # inline comment"}  # probe: fatal
    problem = next(p for p in inline.problems if p.kind == "inline-comment")
    assert (problem.line, problem.column) == (1, 16)
    plain = parse_nccl_conf(Path(inputs["conf_plain"]).read_text())
    assert plain.comment_lines == [1] and plain.effective() == {"NCCL_ALGO": "Bogus"}


def test_crusoe_seed_conf(shared_dir):
    seed = next((shared_dir / "seeds").glob("002_*.txt")).read_text().splitlines()
    start = next(i for i, line in enumerate(seed) if line.startswith("NCCL_SOCKET_NTHREADS"))
    block = "\n".join(seed[start:start + 7]) + "\n"
    conf = parse_nccl_conf(block)
    assert conf.comment_lines == [6]  # '# NCCL_DEBUG=WARN # for more verbose logging' sets nothing
    assert conf.effective()["NCCL_IB_HCA"] == "^mlx5_0:1"
    assert conf.effective()["NCCL_ALGO"] == "NVLSTree"
    assert "NCCL_DEBUG" not in conf.effective()
    assert conf.problems == []


def test_crlf_and_other_traps():
    conf = parse_nccl_conf("NCCL_ALGO=Ring\r\nexport NCCL_X=1\n NCCL_Y=2\nNCCL_Z=\"q\"\nNCCL_W=a  \ngarbage\n")
    kinds = [(p.kind, p.line) for p in conf.problems]
    assert ("crlf", 1) in kinds and ("export", 2) in kinds and ("leading-space", 3) in kinds
    assert ("quoted", 4) in kinds and ("trailing-space", 5) in kinds and ("no-equals", 6) in kinds
    assert conf.effective()["NCCL_ALGO"] == "Ring\r"  # getline strips only the \n
    assert conf.skipped_lines == [6]


def test_first_line_wins_and_duplicates_are_reported():
    conf = parse_nccl_conf("NCCL_ALGO=Ring\nNCCL_ALGO=Tree\n")
    assert conf.effective() == {"NCCL_ALGO": "Ring"}
    assert [(p.kind, p.line) for p in conf.problems] == [("duplicate", 2)]


def test_long_fields_are_truncated_like_nccl():
    conf = parse_nccl_conf("NCCL_TOPO_FILE=" + "x" * 2000 + "\n")
    assert len(conf.effective()["NCCL_TOPO_FILE"]) == 1023
    assert {"truncated"} <= {p.kind for p in conf.problems}


def test_render_round_trips_through_the_parser():
    values = {"NCCL_IB_PCI_RELAXED_ORDERING": "1", "NCCL_TOPO_FILE": "/opt/microsoft/ndv5/topo.xml",
              "NCCL_IB_HCA": "^=mlx5_an0", "NCCL_ALGO": "ring;allreduce:tree,ring"}
    text = render_nccl_conf(values, ["generated by hpcconf", ""])
    assert text.endswith("\n") and text.startswith("# generated by hpcconf\n#\n")
    conf = parse_nccl_conf(text)
    assert conf.effective() == values and conf.problems == [] and conf.comment_lines == [1, 2]
    assert list(conf.effective()) == list(values)


@pytest.mark.parametrize("key, value", [
    ("NCCL_ALGO ", "Ring"), ("NCCL_ALGO", " Ring"), ("NCCL_ALGO", "Ring "), ("NCCL_ALGO", "Ring # c"),
    ("NCCL_ALGO", "Ring\nNCCL_PROTO=LL"), ("NCCL_ALGO", "Ring\r"), ("CUDA_DEVICE_ORDER", "PCI_BUS_ID"),
    ("export NCCL_ALGO", "Ring"), ("NCCL_TOPO_FILE", "x" * 1024),
])
def test_render_refuses_what_nccl_would_misread(key, value):
    with pytest.raises(ValueError):
        render_nccl_conf({key: value})


def test_render_non_nccl_key_when_allowed():
    assert render_nccl_conf({"CUDA_DEVICE_ORDER": "PCI_BUS_ID"}, allow_non_nccl=True) == "CUDA_DEVICE_ORDER=PCI_BUS_ID\n"
    with pytest.raises(ValueError):
        render_nccl_conf({"NCCL_X": "1"}, ["two\nlines"])


def test_positions_point_into_the_line():
    text = "# header\nNCCL_ALGO=Ring # note\n"
    entry = parse_nccl_conf(text).entry("NCCL_ALGO")
    line = text.splitlines()[entry.line - 1]
    assert entry.line == 2 and line[entry.value_column - 1:] == "Ring # note"
    assert re.match(r"NCCL_ALGO$", line[:entry.key_end_column - 1])


def test_precedence_env_then_user_file_then_etc(shared_dir):
    system = parse_nccl_conf((shared_dir / "upstream/nccl/azhpc-images/nccl-conf/ndv5.nccl.conf").read_text())
    user = parse_nccl_conf("NCCL_TOPO_FILE=/home/me/topo.xml\nNCCL_ALGO=Ring\n")
    merged = effective_nccl_settings({"NCCL_ALGO": "Tree"}, user, system)
    assert merged["NCCL_ALGO"] == ("Tree", "environment")  # probe: env beats the conf file
    assert merged["NCCL_TOPO_FILE"] == ("/home/me/topo.xml", "user")
    assert merged["NCCL_IB_PCI_RELAXED_ORDERING"] == ("1", "system")


# Observed 2026-11-30 with torch 2.11.0+cu130 (NCCL 2.28.9), 2 ranks on 2 H200s, NCCL_CONF_FILE set to
# each text below (hpcconf parser probe). None: init and all_reduce succeeded; otherwise NCCL's
# "Last error". Settles two points: a CRLF line keeps its '\r' (getline strips only '\n'), and a
# 4100-byte comment line is not split at 4095 bytes.
REAL_NCCL_2_28_9_CONF = {
    "NCCL_ALGO=Ring\r\n": 'Unrecognized element token "Ring\r" when parsing "Ring\r"',
    "#" + "x" * 4094 + "NCCL_ALGO=Bogus\n": None,
    " NCCL_ALGO=Bogus\n": None,
    "export NCCL_ALGO=Bogus\n": None,
    'NCCL_ALGO="Ring"\n': 'Unrecognized element token ""Ring"" when parsing ""Ring""',
    "NCCL_ALGO=Ring \n": 'Unrecognized element token "Ring " when parsing "Ring "',
    " # NCCL_ALGO=Bogus\n": None,
    "\ufeffNCCL_ALGO=Bogus\n": None,
}


@pytest.mark.parametrize("text", list(REAL_NCCL_2_28_9_CONF), ids=range(len(REAL_NCCL_2_28_9_CONF)))
def test_real_nccl_2_28_9_conf_verdicts(text):
    expected = REAL_NCCL_2_28_9_CONF[text]
    conf = parse_nccl_conf(text)
    problems = [p for name, value in conf.effective().items()
                for p in check_env_value(name, value, nccl_version="2.28.9")]
    fatal = [p for p in problems if p.fatal]
    assert (not fatal) == (expected is None)
    if expected is not None:
        assert fatal[0].message.startswith(expected)
    else:
        # what NCCL ignored, we still report: the line does not do what it says
        assert conf.problems or conf.comment_lines
