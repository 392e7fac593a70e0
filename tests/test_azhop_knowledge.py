"""hpcconf's own encoding of az-hop's config schema agrees with the upstream ``config.schema.json``.

The oracle is az-hop's draft-06 schema (../shared/upstream/azhop/az-hop, commit 826f7906) run by
jsonschema's Draft6Validator, as az-hop's validate_config.sh runs it. Both must accept and reject the
same documents and name the same places: upstream's template and examples, its failing UI-test config,
seed 000's config.yml, hpcconf's generated config, and systematic mutations of each.
"""

from __future__ import annotations

import copy
import json
from pathlib import Path
from typing import Any, Iterator

import pytest

from hpcconf.knowledge import azhop as kb
from hpcconf.yamlpos import load_document

jsonschema = pytest.importorskip("jsonschema")

REPO = Path(__file__).resolve().parents[1]
UPSTREAM_CONFIGS = ("config.tpl.yml", "examples/minimum_public_ip.yml", "examples/qinstall-config.yml",
                    "tests/configs/config_full.yml")
SEED = REPO / "tests" / "fixtures" / "seeds" / "azhop-seed000-config.yml"
KIND = {"type": "type", "enum": "enum", "pattern": "pattern", "maxLength": "max_length", "minimum": "minimum",
        "maximum": "maximum", "anyOf": "any_of"}


@pytest.fixture
def validator(shared_dir: Path):
    schema = json.loads((shared_dir / "upstream/azhop/az-hop/config.schema.json").read_text(encoding="utf-8"))
    assert schema["$schema"].startswith("http://json-schema.org/draft-06")
    return jsonschema.Draft6Validator(schema)


def _load(path: Path) -> Any:
    return load_document(path.read_text(encoding="utf-8"), str(path)).data


def upstream_errors(validator, data: Any) -> set[tuple]:
    """The schema's verdict as (path, kind): unknown keys and missing keys are named one by one."""
    found = set()
    for error in validator.iter_errors(data):
        path = tuple(error.absolute_path)
        if error.validator == "additionalProperties":
            known = set(error.schema.get("properties", {}))
            found |= {(path + (key,), "unknown_key") for key in error.instance if key not in known}
        elif error.validator == "required":
            found |= {(path + (key,), "required") for key in error.validator_value if key not in error.instance}
        else:
            found.add((path, KIND[error.validator]))
    return found


def our_errors(data: Any) -> set[tuple]:
    found = set()
    for problem in kb.validate_config(data):
        path = problem.path + ((problem.key,) if problem.kind == "required" else ())
        found.add((path, problem.kind))
    return found


def _generated_config(tmp_path: Path) -> Any:
    from hpcconf.pipeline import compile_spec

    build = compile_spec(REPO / "examples" / "azhop-ncv4.yaml")
    config = next(a for a in build.artifacts if a.path == "azhop/config.yml")
    return load_document(config.content, "config.yml").data


def documents(shared_dir: Path, tmp_path: Path) -> dict[str, Any]:
    docs = {name: _load(shared_dir / "upstream/azhop/az-hop" / name) for name in UPSTREAM_CONFIGS}
    docs["seed000"] = _load(SEED)
    docs["generated"] = _generated_config(tmp_path)
    return docs


def test_verdicts_agree_on_upstream_seed_and_generated_configs(validator, shared_dir, tmp_path):
    docs = documents(shared_dir, tmp_path)
    for name, data in docs.items():
        assert our_errors(data) == upstream_errors(validator, data), name
    # The oracle is not vacuous: the template and examples pass, the UI-test config and the seed fail.
    assert not upstream_errors(validator, docs["config.tpl.yml"])
    assert not upstream_errors(validator, docs["generated"])
    assert upstream_errors(validator, docs["tests/configs/config_full.yml"])
    assert {p for p, _ in upstream_errors(validator, docs["seed000"])} == {("guacamole",), ("enable_remote_winviz",), ("remoteviz",)}


# -- mutations ------------------------------------------------------------------------------------

def _paths(node: Any, path: tuple = ()) -> Iterator[tuple[tuple, Any]]:
    yield path, node
    if isinstance(node, dict):
        for key, value in node.items():
            yield from _paths(value, path + (key,))
    elif isinstance(node, list):
        for i, value in enumerate(node):
            yield from _paths(value, path + (i,))


def _set(data: Any, path: tuple, value: Any) -> Any:
    out = copy.deepcopy(data)
    node = out
    for step in path[:-1]:
        node = node[step]
    node[path[-1]] = value
    return out


def _delete(data: Any, path: tuple) -> Any:
    out = copy.deepcopy(data)
    node = out
    for step in path[:-1]:
        node = node[step]
    del node[path[-1]]
    return out


def _wrong_type(value: Any) -> Any:
    if isinstance(value, bool):
        return "yes"
    if isinstance(value, (int, float)):
        return "12"
    if isinstance(value, str):
        return 12
    if isinstance(value, list):
        return "a-list"
    return ["a-mapping"]


def mutations(data: dict) -> Iterator[tuple[str, Any]]:
    """Every key deleted, every value given the wrong type, an unknown key in every mapping."""
    for path, node in _paths(data):
        if isinstance(node, dict):
            yield f"unknown key under {path}", _set(data, path + ("zz_not_a_key",), 1) if path else {**data, "zz_not_a_key": 1}
        if path:
            if isinstance(path[-1], str):
                yield f"delete {path}", _delete(data, path)
            yield f"retype {path}", _set(data, path, _wrong_type(node))


def test_verdicts_agree_on_every_mutation(validator, shared_dir, tmp_path):
    docs = documents(shared_dir, tmp_path)
    checked = rejected = 0
    for name in ("config.tpl.yml", "generated"):
        for what, mutated in mutations(docs[name]):
            theirs = upstream_errors(validator, mutated)
            assert our_errors(mutated) == theirs, f"{name}: {what}"
            checked += 1
            rejected += bool(theirs)
    assert checked > 1000 and rejected > checked // 2, (checked, rejected)  # the mutations really exercise the schema


TARGETED = [
    (("queues", 0, "name"), "gpu_a100"),  # '_' breaks the pattern (#1621)
    (("queues", 0, "name"), "abcdefghij"),  # 10 > maxLength 9
    (("queues", 0, "name"), "abcdefghi"),  # 9: the schema accepts it (AZH002 does not)
    (("queues", 0, "name"), "largeviz3d"),  # special name: valid
    (("queues", 0, "name"), "GPU"),
    (("queues", 0, "type"), "batch"),
    (("slurm", "slurm_version"), "21.08.8"),
    (("slurm", "cyclecloud_slurm_version"), "3.0.5"),
    (("anf", "homefs_size_tb"), 3),
    (("anf", "homefs_size_tb"), 101),
    (("anf", "homefs_service_level"), "premium"),
    (("monitoring", "idle_threshold"), "15"),
    (("monitoring", "idle_threshold"), "100"),
    (("compute_vm_identity", "name"), "x" * 25),
    (("compute_vm_identity", "name"), "id_1"),
    (("users", 0, "name"), "u" * 21),
    (("images", 0, "publisher"), "microsoft"),
    (("images", 0, "hyper_v"), "V3"),
    (("images", 0, "version"), "8.7"),
    (("images", 0, "version"), True),
    (("scheduler", "name"), "Scheduler"),
    (("scheduler", "name"), "s" * 16),
    (("alerting", "local_volume_threshold"), 0),
    (("mounts", "home", "type"), "nfs"),
    (("lustre", "sku"), "AMLFS-Durable-Premium-120"),  # the pre-PR #1900 spelling (D4)
    (("network", "asg"), {"resource_group": "rg", "names": {"asg-mysql-client": "x"}}),  # D1
    (("authentication", "ood_auth_openidc"), {"OIDCClientID": "x"}),
    (("authentication", "user_auth"), "aad"),
    (("applications", "bc_jupyter"), {"enabled": "yes"}),
    (("applications", "bc_custom"), {"anything": 1}),  # applications is open
    (("tags", "owner"), 42),  # tags is open
]


@pytest.mark.parametrize("path,value", TARGETED, ids=[f"{'.'.join(map(str, p))}={v!r}"[:60] for p, v in TARGETED])
def test_verdicts_agree_on_enums_patterns_and_limits(validator, shared_dir, path, value):
    data = _set(_load(shared_dir / "upstream/azhop/az-hop/config.tpl.yml"), path, value)
    assert our_errors(data) == upstream_errors(validator, data)


def test_the_encoding_is_not_a_copy_of_the_schema_file():
    source = (REPO / "hpcconf" / "knowledge" / "azhop.py").read_text(encoding="utf-8")
    assert '"additionalProperties"' not in source and '"$ref"' not in source
