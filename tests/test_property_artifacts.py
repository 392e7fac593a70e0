"""Property: lint never crashes on a mutated artifact of any kind, and every finding is located.

Each generated file under out/ (every kind hpcconf writes and lints) is mutated: YAML documents
by replacing, deleting or renaming a node anywhere in the tree (with values of other types,
other apiVersions and kinds, huge or odd numbers); text files (nccl.conf, Dockerfile, env,
sbatch, XML) line by line (random, control and separator characters, truncation, CRLF).
lint must answer with findings, never an internal error, and JSON/SARIF must stay valid.
"""

from __future__ import annotations

import json
from io import StringIO
from pathlib import Path

import pytest
from fuzz_profiles import examples, tree_paths
from hypothesis import given, settings
from hypothesis import strategies as st
from ruamel.yaml import YAML

from hpcconf.diagnostics import HpcconfError
from hpcconf.lint.engine import lint_text
from hpcconf.lint.formats import render

REPO = Path(__file__).resolve().parents[1]
FILES = sorted(p for p in (REPO / "out").rglob("*") if p.is_file() and p.name != ".hpcconf-manifest.json")
YAML_FILES = [p for p in FILES if p.suffix in (".yaml", ".yml")]
TEXT_FILES = [p for p in FILES if p not in YAML_FILES]

INTERESTING = ["mellanox.com/v1alpha1", "batch.volcano.sh/v1alpha1", "v1", "k8s.cni.cncf.io/v1", "nv-ipam.nvidia.com/v1alpha1",
               "rbac.authorization.k8s.io/v1", "NicClusterPolicy", "HostDeviceNetwork", "Job", "IPPool", "ServiceAccount",
               "RoleBinding", "Pod", "NCCL_IB_HCA", "NCCL_TOPO_FILE", "UCX_TLS", "mlx5_0:1", "=", "${X}", "$(id)", "",
               "0", "-1", "1e999", "nan", "true", "~", "\u2028", "\x00", "\r", "\x85", "é", "a" * 300, "{{ x }}"]
SCALARS = st.one_of(st.none(), st.booleans(), st.integers(min_value=-(2 ** 70), max_value=2 ** 70),
                    st.floats(allow_nan=True, allow_infinity=True), st.text(max_size=12), st.sampled_from(INTERESTING))
VALUES = st.recursive(SCALARS, lambda inner: st.one_of(st.lists(inner, max_size=3),
                                                       st.dictionaries(st.sampled_from(INTERESTING) | st.text(max_size=8),
                                                                       inner, max_size=3)), max_leaves=6)


def _parent(data, path):
    node = data
    for step in path[:-1]:
        node = node[step]
    return node


def _mutate_tree(data, draw):
    paths = [p for p in tree_paths(data) if p]
    if not paths:
        return draw(VALUES)
    path = draw(st.sampled_from(paths))
    parent, last = _parent(data, path), path[-1]
    op = draw(st.sampled_from(["replace", "replace", "delete", "rename", "insert"]))
    if op == "replace":
        parent[last] = draw(VALUES)
    elif op == "delete":
        del parent[last]
    elif op == "rename" and isinstance(parent, dict):
        parent[draw(st.sampled_from(INTERESTING) | st.text(max_size=8))] = parent.pop(last)
    elif isinstance(parent, dict):
        parent[draw(st.sampled_from(INTERESTING))] = draw(VALUES)
    else:
        parent.insert(last, draw(VALUES))
    return data


def _dump(docs) -> str:
    yaml = YAML(typ="safe", pure=True)
    yaml.representer.ignore_aliases = lambda *a: True
    stream = StringIO()
    yaml.dump_all(docs, stream)
    return stream.getvalue()


def _check(text: str, name: str):
    """Lint ``text``: a refusal says where; findings are located and every report format renders.
    The lint result, or None for a refusal."""
    try:
        result = lint_text(text, name)
    except HpcconfError as error:  # a refusal: it must say where
        assert all(d.file and d.line for d in error.diagnostics), error.diagnostics
        return None
    for finding in result.findings:
        assert finding.file and isinstance(finding.line, int) and finding.line >= 1, finding
    json.loads(render(result, "json"))
    sarif = json.loads(render(result, "sarif"))
    assert sarif["version"] == "2.1.0"
    render(result, "text")
    render(result, "github")
    return result


@settings(max_examples=examples(500))
@given(st.data())
def test_lint_survives_mutated_yaml_artifacts(data):
    path = data.draw(st.sampled_from(YAML_FILES))
    docs = [d for d in YAML(typ="safe", pure=True).load_all(path.read_text()) if d is not None]
    for _ in range(data.draw(st.integers(1, 3))):
        index = data.draw(st.integers(0, len(docs) - 1))
        docs[index] = _mutate_tree(docs[index], data.draw)
    try:
        text = _dump(docs)
    except Exception:  # a value YAML cannot represent (a float key that is NaN...): nothing to lint
        return
    _check(text, path.name)


LINE_NOISE = st.one_of(st.text(max_size=40), st.sampled_from([
    "NCCL_IB_HCA=mlx5_0:1", "NCCL_SOCKET_IFNAME==eth0", "FROM", "FROM a b c", "ENV A", "ARG", "RUN \\", "export X=",
    "<system>", "</gpu>", "<cpu numaid=\"x\"/>", "#!/bin/bash", "UCX_TLS=\u2028rc", "\x00", "\r", "'", '"', "\\",
    "mpirun -x NCCL_ALGO=Ring", "srun --mpi=pmix", "=" * 50, "a" * 2000]))


@settings(max_examples=examples(1000))
@given(st.data())
def test_lint_survives_mutated_text_artifacts(data):
    path = data.draw(st.sampled_from(TEXT_FILES))
    lines = path.read_text().splitlines()
    for _ in range(data.draw(st.integers(1, 4))):
        op = data.draw(st.sampled_from(["replace", "insert", "delete", "truncate", "char"]))
        at = data.draw(st.integers(0, max(len(lines) - 1, 0)))
        if op == "replace" and lines:
            lines[at] = data.draw(LINE_NOISE)
        elif op == "insert":
            lines.insert(at, data.draw(LINE_NOISE))
        elif op == "delete" and lines:
            del lines[at]
        elif op == "truncate":
            lines = lines[:at]
        elif lines:
            col = data.draw(st.integers(0, len(lines[at])))
            lines[at] = lines[at][:col] + data.draw(st.sampled_from(["\x00", "\r", "\u2028", "\x85", "\t", "é", "\ufeff"])) + lines[at][col:]
    newline = data.draw(st.sampled_from(["\n", "\r\n"]))
    _check(newline.join(lines) + newline, path.name)


@pytest.mark.parametrize("path", FILES, ids=lambda p: p.relative_to(REPO / "out").as_posix())
def test_every_generated_file_lints_without_error(path):
    result = _check(path.read_text(), path.name)
    assert result is not None, f"{path} was refused"
    crashes = [f for f in result.findings if f.code == "HPC090"]
    errors = [f"{f.line}: {f.code} {f.message}" for f in result.findings if f.severity.value == "error"]
    assert not crashes and not errors, (crashes, errors)


CLUSTERS = sorted(p for p in (REPO / "out").iterdir() if p.is_dir())


@settings(max_examples=examples(20))
@given(data=st.data())
def test_lint_survives_a_cluster_directory_with_mutated_files(data, tmp_path_factory):
    """Cross-file rules see every document of a directory together: mutate one or two of them."""
    from hpcconf.lint.context import LintContext
    from hpcconf.lint.engine import lint_paths

    cluster = data.draw(st.sampled_from(CLUSTERS))
    work = tmp_path_factory.mktemp("cluster")
    files = [p for p in cluster.rglob("*") if p.is_file()]
    for path in files:
        target = work / path.relative_to(cluster)
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_bytes(path.read_bytes())
    yaml_files = [work / p.relative_to(cluster) for p in files if p.suffix == ".yaml"]
    for _ in range(data.draw(st.integers(1, 2))):
        if not yaml_files:
            break
        path = data.draw(st.sampled_from(yaml_files))
        docs = [d for d in YAML(typ="safe", pure=True).load_all(path.read_text()) if d is not None]
        if docs:
            index = data.draw(st.integers(0, len(docs) - 1))
            docs[index] = _mutate_tree(docs[index], data.draw)
            try:
                path.write_text(_dump(docs))
            except Exception:
                continue
    result = lint_paths([str(work)], LintContext())
    for finding in result.findings:
        assert finding.file and isinstance(finding.line, int) and finding.line >= 1, finding
    json.loads(render(result, "sarif"))
