"""CCWS mainTemplate parameter schemas: the bicep reader, the generated files against the upstream tags (mirror),
and the newest schema against the portal's own outputs (../shared createUiDefinition.json at bc0fc1b = 2026.07.02)."""

from __future__ import annotations

import copy
import importlib.util
import json
import re
from pathlib import Path

import jsonschema
import pytest

from hpcconf.knowledge import ccws
from hpcconf.parsers.bicep import BicepSyntaxError, parse_bicep, to_json_schema

ROOT = Path(__file__).resolve().parents[1]
SHARED_CCWS = ROOT.parent / "shared" / "upstream" / "azhop" / "cyclecloud-slurm-workspace"
SHARED_UI = SHARED_CCWS / "uidefinitions" / "createUiDefinition.json"
SHARED_INITIAL = SHARED_CCWS / "bicep" / "files-to-load" / "initial_params.json"
SHARED_RELEASE = "2026.07.02"  # ../shared/upstream/azhop/SOURCES.md: commit bc0fc1b, the tag 2026.07.02 points at


def _tool():
    spec = importlib.util.spec_from_file_location("gen_ccws_schema", ROOT / "tools" / "gen_ccws_schema.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


# -- the reader ---------------------------------------------------------------------------------------

TYPES = """
@export()
type zone_t = '1' | '2' | '3'
type a_t = {
  type: 'a'
  size: int
}
type b_t = {
  type: 'b'
  @minValue(1)
  @maxValue(8)
  count: int?   // optional
  zones: zone_t[]?
}
/* a discriminated union */
@discriminator('type')
@export()
type ab_t = a_t | b_t
type tags_t = {
  *: string
}
"""
TEMPLATE = """targetScope = 'subscription'
import * as types from './types.bicep'
@secure()
param password string
@allowed([
  'x'
  'y'
])
param choice string = 'x'
@minLength(3)
param name string = 'ccw'
param ab types.ab_t = { type: 'a', size: 2 }
param tags types.tags_t
param address string = network.?addressSpace
var skipped = { a: [1, 2], b: '${name}-x' }
module m 'm.bicep' = if (choice == 'x') {
  name: 'm'
  params: { a: 'b' }
}
"""


def _schema() -> dict:
    return to_json_schema(parse_bicep(TEMPLATE), parse_bicep(TYPES))


def test_reader_takes_params_with_decorators_and_defaults():
    schema = _schema()
    props = schema["properties"]
    assert list(props) == ["password", "choice", "name", "ab", "tags", "address"]
    assert schema["required"] == ["password", "tags"]
    assert props["password"] == {"type": "string", "x-secure": True}
    assert props["choice"] == {"type": "string", "enum": ["x", "y"], "default": "x"}
    assert props["name"]["minLength"] == 3
    assert props["ab"]["default"] == {"type": "a", "size": 2}
    assert props["address"]["x-bicep-default"] == "network.?addressSpace"
    assert schema["additionalProperties"] is False


def test_reader_types_discriminated_unions_optional_and_bounds():
    defs = _schema()["$defs"]
    assert defs["zone_t"] == {"enum": ["1", "2", "3"]}
    assert defs["ab_t"]["properties"]["type"] == {"enum": ["a", "b"]}
    assert defs["b_t"]["properties"]["count"] == {"type": ["integer", "null"], "minimum": 1, "maximum": 8}
    assert defs["b_t"]["required"] == ["type"]
    assert defs["tags_t"]["additionalProperties"] == {"type": "string"}
    validator = jsonschema.Draft202012Validator(_schema())
    good = {"password": "p", "tags": {"x": "y"}, "ab": {"type": "b", "count": 3, "zones": ["1"]}}
    assert not list(validator.iter_errors(good))
    missing = {"password": "p", "tags": {}, "ab": {"type": "a"}}
    assert [e.message for e in validator.iter_errors(missing)] == ["'size' is a required property"]
    bounds = {"password": "p", "tags": {}, "ab": {"type": "b", "count": 9}}
    assert [e.message for e in validator.iter_errors(bounds)] == ["9 is greater than the maximum of 8"]
    unknown = {"password": "p", "tags": {}, "extra": 1}
    assert "Additional properties are not allowed ('extra' was unexpected)" in [e.message for e in validator.iter_errors(unknown)]


def test_reader_says_where_it_cannot_read():
    with pytest.raises(BicepSyntaxError, match="line 2"):
        parse_bicep("type a = {\n  x: int = 3\n}")
    with pytest.raises(BicepSyntaxError, match="unterminated string"):
        parse_bicep("param a string = 'x")


# -- the generated files --------------------------------------------------------------------------------

def test_generated_schemas_are_the_mirrors_tags():
    tool = _tool()
    if not tool.CCWS.is_dir():
        pytest.skip("no mirror of Azure/cyclecloud-slurm-workspace (fetch github:Azure/cyclecloud-slurm-workspace)")
    tags = tool.release_tags()
    assert tags and tags == list(ccws.releases()), "a release tag has no schema: run tools/gen_ccws_schema.py"
    offers = tool.cyclecloud_slurm_offers() if tool.CYCLECLOUD_SLURM.is_dir() else None
    for tag in tags:
        assert tool.path_for(tag).read_text(encoding="utf-8") == tool.render(tool.schema_for(tag, offers)), \
            f"hpcconf/data/ccws/mainTemplate-{tag}.json differs from the tag: run tools/gen_ccws_schema.py"


def test_newest_release_is_the_default_and_names_what_it_ships():
    newest = ccws.newest()
    assert newest.tag == max(ccws.releases(), key=lambda t: tuple(map(int, t.split("."))))
    assert ccws.release(None) is newest
    rel = ccws.release(SHARED_RELEASE)
    assert rel is not None and rel.commit.startswith("bc0fc1b")
    assert rel.slurm_versions == ("25.11.5",)
    assert rel.bicep_slurm_version_default == "23.11.7-1"  # issue #346: never what the release ships
    assert rel.cyclecloud_slurm == "4.0.9"
    assert ccws.slurm_version_problem("25.11.5", rel) is None
    assert "stale default" in (ccws.slurm_version_problem("23.11.7-1", rel) or "")


# -- the portal's outputs (../shared) ---------------------------------------------------------------------

def _shared_ui() -> dict:
    if not SHARED_UI.is_file():
        pytest.skip("../shared/upstream/azhop/cyclecloud-slurm-workspace is absent")
    return json.loads(SHARED_UI.read_text(encoding="utf-8"))


def _ui_find(node, name):
    if isinstance(node, dict):
        if node.get("name") == name:
            return node
        node = list(node.values())
    if isinstance(node, list):
        for child in node:
            found = _ui_find(child, name)
            if found is not None:
                return found
    return None


def _split_args(text: str) -> list[str]:
    args, depth, start, quoted = [], 0, 0, False
    for i, c in enumerate(text):
        if c == "'":
            quoted = not quoted
        elif not quoted and c == "(":
            depth += 1
        elif not quoted and c == ")":
            depth -= 1
        elif not quoted and c == "," and depth == 0:
            args.append(text[start:i])
            start = i + 1
    args.append(text[start:])
    return [a.strip() for a in args]


# Keys the portal gives that types.bicep does not declare at 2026.07.02, and why the deployment still reads them:
# ARM passes undeclared object keys through, and bicep/ccw.bicep reads this one with `filer.value.?anfFlexThroughputMiBps`
# for every ANF filer (types.bicep declares it for sched/shared, not for additional_anf_new_t).
UNDECLARED_BUT_READ = {"additionalFilesystem.anfFlexThroughputMiBps"}
_BOOLEAN_FUNCTIONS = ("equals(", "and(", "or(", "not(", "bool(", "greater(", "less(", "contains(", "empty(")


def _expression_types(expr: str) -> set[str] | None:
    """JSON types an ARM/UI expression yields; None when it cannot be told offline (a control's value)."""
    if expr.startswith("if(") and expr.endswith(")"):
        _, then, otherwise = _split_args(expr[3:-1])
        a, b = _expression_types(then), _expression_types(otherwise)
        return None if a is None or b is None else a | b
    if expr == "basics('nullValue')":
        return {"null"}
    if expr.startswith("int("):
        return {"integer"}
    if expr.startswith(_BOOLEAN_FUNCTIONS):
        return {"boolean"}
    if expr.startswith(("concat(", "string(", "first(", "'")):
        return {"string"}
    if expr.startswith("parse("):  # parse(concat('["', ...)) is an array, parse(concat('{', ...)) an object
        first = re.match(r"parse\(concat\(\s*'(.)", expr)
        return {"array"} if first and first.group(1) == "[" else {"object"} if first and first.group(1) == "{" else None
    return None


def _json_type(value) -> set[str] | None:
    if isinstance(value, str):
        match = re.fullmatch(r"\[(.*)\]", value, re.S)
        return _expression_types(match.group(1)) if match else {"string"}
    return {bool: "boolean", int: "integer", dict: "object", list: "array"}.get(type(value), None) and \
        {{bool: "boolean", int: "integer", dict: "object", list: "array"}[type(value)]}


def _allows(schema: dict, root: dict, json_type: str) -> bool:
    schema = ccws.resolve_ref(schema, root)
    if "else" in schema:  # optional: null or the inner type
        return json_type == "null" or _allows(schema["else"], root, json_type)
    if "const" in schema or "enum" in schema:
        values = [schema["const"]] if "const" in schema else schema["enum"]
        return any(_json_type(v) == {json_type} for v in values)
    declared = schema.get("type")
    return declared is None or json_type in (declared if isinstance(declared, list) else [declared])


def _variant_properties(schema: dict, root: dict) -> dict:
    """Properties of an object schema, over every variant of a discriminated union."""
    schema = ccws.resolve_ref(schema, root)
    props = dict(schema.get("properties", {}))
    for branch in schema.get("allOf", []):
        props.update(ccws.resolve_ref(branch["then"], root).get("properties", {}))
    return props


def test_every_ui_output_is_a_parameter_of_the_schema_and_types_agree():
    outputs = _shared_ui()["parameters"]["outputs"]
    rel = ccws.release(SHARED_RELEASE)
    assert rel is not None
    root = rel.schema
    missing = [key for key in outputs if key not in rel.parameters]
    assert not missing, f"the portal outputs parameters the schema does not know: {missing}"
    assert set(rel.required) <= set(outputs), "the schema requires a parameter the portal never gives"
    disagree = []
    for key, value in outputs.items():
        schema = rel.parameters[key]
        nested = value if isinstance(value, dict) else {}
        props = _variant_properties(schema, root) if nested else {}
        for sub, sub_value in nested.items():
            if sub not in props:
                if f"{key}.{sub}" in UNDECLARED_BUT_READ:
                    continue
                disagree.append(f"{key}.{sub}: no variant of {key} has it")
                continue
            types = _json_type(sub_value) or set()
            disagree += [f"{key}.{sub}: the portal gives {t}" for t in types
                         if t != "null" and not _allows(props[sub], root, t)]
        for t in (_json_type(value) or set()) - {"null", "object"} if not nested else ():
            if not _allows(schema, root, t):
                disagree.append(f"{key}: the portal gives {t}")
    assert not disagree, disagree


def test_release_ships_the_slurm_the_portal_offers():
    slurm = _ui_find(_shared_ui(), "slurmVersion")
    rel = ccws.release(SHARED_RELEASE)
    assert rel is not None and slurm is not None
    assert list(rel.slurm_versions) == [v["value"] for v in slurm["constraints"]["allowedValues"]]
    initial = json.loads(SHARED_INITIAL.read_text(encoding="utf-8"))
    assert initial["configuration_slurm_version"] in rel.slurm_versions


def _parameter_values() -> dict:
    """A full set of values as the portal would give them for a new VNet, NFS and ANF filers."""
    image = "almalinux:almalinux-hpc:8_10-hpc-gen2:latest"
    return {
        "location": "eastus", "adminUsername": "hpcadmin", "adminPassword": "x" * 12,
        "key": {"type": "entered", "value": "ssh-rsa AAAA"}, "ccVMName": "ccw-cyclecloud-vm", "ccVMSize": "Standard_D4as_v5",
        "resourceGroup": "ccw-rg", "schedFilesystem": {"type": "nfs-new", "nfsCapacityInGb": 1024},
        "sharedFilesystem": {"type": "anf-new", "anfServiceLevel": "Premium", "anfCapacityInTiB": 2},
        "network": {"type": "new", "addressSpace": "10.0.0.0/24"}, "storagePrivateDnsZone": {"type": "new"},
        "slurmSettings": {"startCluster": True, "version": "25.11.5", "healthCheckEnabled": False},
        "schedulerNode": {"sku": "Standard_D4as_v5", "osImage": image},
        "loginNodes": {"sku": "Standard_D2as_v5", "osImage": image, "initialNodes": 1, "maxNodes": 1},
        "htc": {"sku": "Standard_F2s_v2", "osImage": image, "maxNodes": 10},
        "hpc": {"sku": "Standard_HB176rs_v4", "osImage": image, "maxNodes": 2},
        "gpu": {"sku": "Standard_ND96isr_H100_v5", "osImage": image, "maxNodes": 2}, "tags": {},
    }


def test_a_portal_like_parameter_set_validates_and_mutations_are_refused():
    rel = ccws.release(SHARED_RELEASE)
    assert rel is not None
    validator = jsonschema.Draft202012Validator(rel.schema)
    good = _parameter_values()
    assert not [e.message for e in validator.iter_errors(good)]
    no_capacity = copy.deepcopy(good)
    del no_capacity["sharedFilesystem"]["anfCapacityInTiB"]
    assert [e.message for e in validator.iter_errors(no_capacity)] == ["'anfCapacityInTiB' is a required property"]
    wrong_variant = copy.deepcopy(good)
    wrong_variant["schedFilesystem"]["type"] = "aml-new"
    assert any("'aml-new' is not one of" in e.message for e in validator.iter_errors(wrong_variant))
    unknown = copy.deepcopy(good)
    unknown["d64d"] = {"sku": "Standard_D64d_v5"}  # a parameter of 2025.06.03, gone at 2026.07.02
    assert any("'d64d' was unexpected" in e.message for e in validator.iter_errors(unknown))


def test_reader_reads_every_bicep_file_of_the_oldest_and_newest_release():
    tool = _tool()
    if not tool.CCWS.is_dir():
        pytest.skip("no mirror of Azure/cyclecloud-slurm-workspace (fetch github:Azure/cyclecloud-slurm-workspace)")
    tags = tool.release_tags()
    for tag in (tags[0], tags[-1]):
        files = [f for f in tool.git(tool.CCWS, "ls-tree", "-r", "--name-only", tag).split() if f.endswith(".bicep")]
        assert files
        for name in files:
            parse_bicep(tool.git(tool.CCWS, "show", f"{tag}:{name}"))  # raises BicepSyntaxError with the line


def test_placement_group_size_is_the_releases_own():
    if not SHARED_INITIAL.is_file():
        pytest.skip("../shared/upstream/azhop/cyclecloud-slurm-workspace is absent")
    initial = json.loads(SHARED_INITIAL.read_text(encoding="utf-8"))
    assert initial["HPCMaxScalesetSize"] == ccws.PLACEMENT_GROUP_NODES
    assert not ccws.releases_knowing({"HPCMaxScalesetSize"})  # no mainTemplate parameter sets it


# -- values only the modules refuse (issue #26 review r26, B3) ------------------------------------------

def _module_refusals(values: dict) -> list[str]:
    rel = ccws.release(SHARED_RELEASE)
    assert rel is not None
    return sorted(e.message for e in ccws.validator(rel.schema).iter_errors(values))


def test_module_allowed_lists_and_amlfs_steps_are_in_the_schema():
    good = _parameter_values()
    aml = {"type": "aml-new", "lustreTier": "AMLFS-Durable-Premium-500", "lustreCapacityInTib": 16, "mountPath": "/data"}
    assert _module_refusals({**good, "additionalFilesystem": aml}) == []
    bad_tier = {**aml, "lustreTier": "AMLFS-Durable-Premium-1000"}  # amlfs.bicep @allowed (r26 m13)
    assert any("'AMLFS-Durable-Premium-1000' is not one of" in m
               for m in _module_refusals({**good, "additionalFilesystem": bad_tier}))
    off_step = {**aml, "lustreTier": "AMLFS-Durable-Premium-40"}  # 48 TiB steps (r26 m14)
    assert _module_refusals({**good, "additionalFilesystem": off_step}) == ["16 is not a multiple of 48"]
    assert _module_refusals({**good, "additionalFilesystem": {**off_step, "lustreCapacityInTib": 96}}) == []
    platinum = {**good, "sharedFilesystem": {**good["sharedFilesystem"], "anfServiceLevel": "Platinum"}}  # r26 m17
    assert any("'Platinum' is not one of" in m for m in _module_refusals(platinum))
    prestaged = {**good, "clusterInitSpecs": [{"type": "PreStaged", "version": "1.0.0", "target": ["gpu"]}]}  # m11
    assert [m for m in _module_refusals(prestaged) if "create_cc_param.py" in m and "KeyError" in m]
    github = {**good, "clusterInitSpecs": [{"type": "gitHubReleaseURL", "target": ["gpu"],
                                            "gitHubReleaseURL": "https://github.com/o/r/releases/tag/v1"}]}
    assert _module_refusals(github) == []


def test_module_constraints_come_from_the_upstream_files_at_the_tag():
    tool = _tool()
    if not tool.CCWS.is_dir():
        pytest.skip("no mirror of Azure/cyclecloud-slurm-workspace (fetch github:Azure/cyclecloud-slurm-workspace)")
    tag = SHARED_RELEASE
    amlfs = parse_bicep(tool.git(tool.CCWS, "show", f"{tag}:bicep/amlfs.bicep"))
    schema = ccws.release(tag).schema  # type: ignore[union-attr]
    aml = schema["$defs"]["additional_aml_new_t"]
    assert aml["properties"]["lustreTier"]["enum"] == amlfs.params["sku"].decorators["allowed"]
    steps = {rule["if"]["properties"]["lustreTier"]["const"]: rule["then"]["properties"]["lustreCapacityInTib"]["multipleOf"]
             for rule in aml["allOf"]}
    for tier, size in steps.items():
        assert f"{tier}: {size}TB" in amlfs.params["capacity"].decorators["description"]
    loader = tool.git(tool.CCWS, "show", f"{tag}:bicep/files-to-load/create_cc_param.py").splitlines()
    refused = schema["$defs"]["prestaged_cluster_init_t"][ccws.REFUSED_KEYWORD]
    line = int(re.search(r"create_cc_param\.py:(\d+)", refused).group(1))  # type: ignore[union-attr]
    assert 'record["gitHubReleaseURL"]' in loader[line - 1]
    ui = json.loads(tool.git(tool.CCWS, "show", f"{tag}:uidefinitions/createUiDefinition.json"))
    offered = [v["value"] for v in tool._find_all(ui, "anfServiceLevel")[0]["constraints"]["allowedValues"]]
    assert schema["$defs"]["shared_anf_new_t"]["properties"]["anfServiceLevel"]["enum"] == offered


def test_boot_check_timeouts_are_the_upstream_files():
    """The numbers the CCWS boot check states (review26 D4): run-health-checks.sh's TIMEOUT at the pinned commit and
    cyclecloud-slurm 4.0.9's ResumeTimeout."""
    import subprocess

    from hpcconf.knowledge import aznhc, nhc

    mirrors = Path("/work/.mirror")
    nhc_repo, slurm_repo = mirrors / "Azure+azurehpc-health-checks" / "repo", mirrors / "Azure+cyclecloud-slurm" / "repo"
    if not (nhc_repo.is_dir() and slurm_repo.is_dir()):
        pytest.skip("no mirrors of Azure/azurehpc-health-checks and Azure/cyclecloud-slurm")

    def show(repo: Path, ref: str) -> str:
        return subprocess.run(["git", "--git-dir", str(repo), "show", ref], capture_output=True, text=True,
                              check=True).stdout

    runner = show(nhc_repo, f"{nhc.load_nhc_data().commit}:run-health-checks.sh")
    assert f"\nTIMEOUT={aznhc.CHECK_TIMEOUT_S}\n" in runner
    template = show(slurm_repo, "4.0.9:azure-slurm-install/templates/slurm.conf.template")
    assert f"\nResumeTimeout={ccws.RESUME_TIMEOUT_S}\n" in template
