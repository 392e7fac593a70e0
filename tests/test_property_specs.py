"""Property: a generated or mutated spec either compiles into safe files or is refused, located.

Mutations replace, delete or rename any node of the example specs, and plant payloads in the
string fields that reach a shell line, a Dockerfile, YAML or nccl.conf. For every case:
no exception but :class:`HpcconfError` (an internal error is a bug), every diagnostic has a
file and line, and when the spec compiles, no payload escaped its quoting: no generated line
starts with it, no YAML artifact fails to parse or gains a key, every nccl.conf line is one
KEY=VALUE, and shell command substitutions only appear inside single quotes.
"""

from __future__ import annotations

import copy
import json
import re
from io import StringIO
from pathlib import Path

from fuzz_profiles import examples, tree_paths
from hypothesis import given, settings
from hypothesis import strategies as st
from ruamel.yaml import YAML

from hpcconf.diagnostics import HpcconfError
from hpcconf.pipeline import compile_spec

REPO = Path(__file__).resolve().parents[1]
SPECS = sorted((REPO / "examples").glob("*.yaml"))
MARK = "INJECTED"
PAYLOADS = [f"x\n{MARK}", f"x\r{MARK}", f"x\r\n{MARK} y", f"$({MARK})", f"`{MARK}`", f"x; {MARK}", f"x' {MARK} '",
            f'x" {MARK} "', f"x\u2028{MARK}", f"x\x85{MARK}", f"x\x00{MARK}", f"x\n- {MARK}: 1", f"x\nRUN {MARK}",
            f"x}}\n{MARK}", f"x && {MARK}", f"{{{{ {MARK} }}}}", f"x\\n{MARK}", f"#{MARK}", f"x\t{MARK}"]
SCALARS = st.one_of(st.none(), st.booleans(), st.integers(-(2 ** 66), 2 ** 66), st.floats(), st.text(max_size=10),
                    st.sampled_from(PAYLOADS), st.sampled_from(["2.18.1", "Standard_ND96asr_v4", "aks", "slurm", "azhop",
                                                                "-1", "", "1.2.3.4.5", "v", "9" * 30]))
VALUES = st.recursive(SCALARS, lambda inner: st.lists(inner, max_size=2) | st.dictionaries(st.text(max_size=6), inner, max_size=2),
                      max_leaves=4)
TARGETED = [("nccl_env", "NCCL_DEBUG"), ("nccl_env", "NCCL_IB_HCA"), ("mpi_env", "UCX_TLS"), ("slurm", "modules"),
            ("slurm", "nccl_tests_dir"), ("test_image", "base"), ("metadata", "description"), ("slurm", "time_limit"),
            ("test_image", "tag"), ("versions", "nccl"), ("slurm", "partitions")]


def _mutate(spec: dict, draw) -> dict:
    if draw(st.booleans()):  # plant a payload where it reaches a consumer
        section, key = draw(st.sampled_from(TARGETED))
        payload = draw(st.sampled_from(PAYLOADS))
        value = [payload] if key == "modules" else ({"gpu": payload} if key == "partitions" else payload)
        node = spec.setdefault(section, {}) if isinstance(spec.get(section, {}), dict) else {}
        node[key] = value
        return spec
    paths = [p for p in tree_paths(spec) if p]
    path = draw(st.sampled_from(paths))
    parent = spec
    for step in path[:-1]:
        parent = parent[step]
    op = draw(st.sampled_from(["replace", "replace", "delete", "rename"]))
    if op == "replace":
        parent[path[-1]] = draw(VALUES)
    elif op == "delete":
        del parent[path[-1]]
    elif isinstance(parent, dict):
        parent[draw(st.text(max_size=8) | st.sampled_from(PAYLOADS))] = parent.pop(path[-1])
    return spec


def _dump(data) -> str:
    stream = StringIO()
    yaml = YAML(typ="safe", pure=True)
    yaml.dump(data, stream)
    return stream.getvalue()


def _outside_single_quotes(line: str, index: int) -> bool:
    return line[:index].count("'") % 2 == 0


def _assert_no_injection(artifacts) -> None:
    for artifact in artifacts:
        lines = artifact.content.splitlines()
        heredoc_end = None  # inside <<'END' ... END the shell expands nothing: the payload is data there
        for number, line in enumerate(lines, 1):
            if heredoc_end is not None:
                heredoc_end = None if line == heredoc_end else heredoc_end
                continue
            quoted_heredoc = re.search(r"<<-?'([^']+)'", line)
            if quoted_heredoc:
                heredoc_end = quoted_heredoc.group(1)
            stripped = line.lstrip(" -#\t\"'")
            assert not stripped.startswith(MARK) and not stripped.startswith(f"RUN {MARK}"), \
                f"{artifact.path}:{number}: a payload starts a line: {line!r}"
            for pattern in (f"$({MARK}", f"`{MARK}"):
                at = line.find(pattern)
                if at >= 0 and artifact.path.endswith((".sh", ".sbatch", ".env", "Dockerfile")) and not line.lstrip().startswith("#"):
                    assert not _outside_single_quotes(line, at), f"{artifact.path}:{number}: unquoted {pattern!r}: {line!r}"
        if artifact.path.endswith((".yaml", ".yml")):
            list(YAML(typ="safe", pure=True).load_all(artifact.content))
        if artifact.path.endswith("nccl.conf"):
            for line in lines:
                assert not line or line.startswith("#") or re.fullmatch(r"[A-Z_][A-Z0-9_]*=.*", line), line
        assert not any(ch in artifact.content for ch in "\r\x00\x85\u2028\u2029"), artifact.path


def _compile(spec_path: Path, text: str):
    try:
        build = compile_spec(spec_path, text=text, display_name=spec_path.name)
    except HpcconfError as error:
        assert error.diagnostics
        for diag in error.diagnostics:
            assert diag.file and diag.line and diag.line >= 1, diag
            json.dumps(diag.to_json())
        return None
    return build


@settings(max_examples=examples(250))
@given(st.data())
def test_mutated_specs_compile_safely_or_are_refused_located(data):
    spec_path = data.draw(st.sampled_from(SPECS))
    spec = YAML(typ="safe", pure=True).load(spec_path.read_text())
    for _ in range(data.draw(st.integers(1, 3))):
        spec = _mutate(copy.deepcopy(spec), data.draw)
    try:
        text = _dump(spec)
    except Exception:  # a value YAML cannot write
        return
    build = _compile(spec_path, text)
    if build is not None:
        _assert_no_injection(build.artifacts)


@settings(max_examples=examples(100))
@given(st.data())
def test_mutated_spec_text_is_refused_located(data):
    """Byte-level damage (the YAML itself broken, non-UTF-8, deep nesting) is still located."""
    spec_path = data.draw(st.sampled_from(SPECS))
    text = spec_path.read_text()
    at = data.draw(st.integers(0, len(text)))
    noise = data.draw(st.sampled_from(["[" * 200, "{a: " * 80, "\t", ": :", "&a [*a]", "*x", "\x00", "\ufeff", "---\n",
                                       "%YAML 1.1\n", "!!python/object:os.system x", "? [a]\n", "\udcff"[:0] + "é"])
                      | st.text(max_size=5))
    _compile(spec_path, text[:at] + noise + text[at:])


def test_the_examples_compile_without_injection_findings():
    for spec in SPECS:
        build = _compile(spec, spec.read_text())
        assert build is not None
        _assert_no_injection(build.artifacts)
