"""Write hpcconf/data/ccws/mainTemplate-<tag>.json: the JSON Schema of CycleCloud Workspace for Slurm's deployment
parameters at each release tag, in our form.

    python tools/gen_ccws_schema.py            # every release tag of the mirror that has bicep/types.bicep
    python tools/gen_ccws_schema.py --check    # exit 1 when a committed file differs from what the mirror gives

Sources, read with ``git show TAG:PATH`` from bare mirrors under /work/.mirror (``fetch github:...``):
- Azure/cyclecloud-slurm-workspace ``bicep/mainTemplate.bicep`` + ``bicep/types.bicep`` (the parameters and their
  types, read by :mod:`hpcconf.parsers.bicep`), ``uidefinitions/createUiDefinition.json`` (the Slurm versions the
  portal offers, the CIDR prefixes of a new VNet) and ``bicep/files-to-load/initial_params.json`` (the cluster's
  ``configuration_slurm_version``) at the same tag;
- Azure/cyclecloud-slurm ``project.ini``: the Slurm versions each release offers, to name the cyclecloud-slurm
  release that offers the portal's versions (the project the CCWS cluster runs).

Values only the modules refuse are carried into the schema too (each with ``x-source``): the ``@allowed`` lists of
the module parameters ``ccw.bicep`` feeds from a mainTemplate property (``amlfs.bicep`` ``sku`` <- ``lustreTier``),
the capacity step each AMLFS SKU takes (``amlfs.bicep`` ``capacity``'s ``@description``), the ANF service levels the
portal offers (``anfServiceLevel`` drop-down; ``anf.bicep`` passes the value to the capacity pool unchecked), and the
clusterInitSpecs variant ``bicep/files-to-load/create_cc_param.py`` cannot read (``x-hpcconf-refused``).

The Slurm versions a release ships are the UI's ``slurmVersion`` allowed values, never ``mainTemplate.bicep``'s
``slurmSettings`` default (stale: 23.11.7-1 at 2026.07.02, Azure/cyclecloud-slurm-workspace issue #346).
tests/test_ccws_schema.py regenerates the files from the mirror when it exists and checks the newest against
../shared's createUiDefinition.json outputs.
"""

from __future__ import annotations

import argparse
import json
import re
import subprocess
import sys
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from hpcconf.parsers.bicep import parse_bicep, to_json_schema  # noqa: E402

OUT = ROOT / "hpcconf" / "data" / "ccws"
MIRROR = Path("/work/.mirror")
CCWS = MIRROR / "Azure+cyclecloud-slurm-workspace" / "repo"
CYCLECLOUD_SLURM = MIRROR / "Azure+cyclecloud-slurm" / "repo"
RELEASE_TAG = re.compile(r"^\d{4}\.\d{1,2}\.\d{1,2}$")
_VERSION_TAG = re.compile(r"^\d+\.\d+\.\d+$")


def git(repo: Path, *args: str) -> str:
    return subprocess.run(["git", "--git-dir", str(repo), *args], capture_output=True, text=True, check=True).stdout


def has(repo: Path, tag: str, path: str) -> bool:
    return subprocess.run(["git", "--git-dir", str(repo), "cat-file", "-e", f"{tag}:{path}"],
                          capture_output=True).returncode == 0


def release_tags(repo: Path = CCWS) -> list[str]:
    """Release tags (YYYY.MM.DD) that have bicep/types.bicep, oldest first."""
    tags = [t for t in git(repo, "tag", "--sort=creatordate").split() if RELEASE_TAG.match(t)]
    return [t for t in tags if has(repo, t, "bicep/types.bicep")]


def _find(node: Any, name: str) -> dict | None:
    if isinstance(node, dict):
        if node.get("name") == name:
            return node
        children: Any = node.values()
    elif isinstance(node, list):
        children = node
    else:
        return None
    for child in children:
        found = _find(child, name)
        if found is not None:
            return found
    return None


def ui_facts(ui: dict) -> dict[str, Any]:
    """What the portal offers: Slurm versions (allowed values, default) and a new VNet's CIDR prefixes."""
    facts: dict[str, Any] = {}
    slurm = _find(ui, "slurmVersion")
    if slurm is not None:
        facts["slurm_versions"] = [v["value"] for v in slurm["constraints"]["allowedValues"]]
        facts["slurm_version_default"] = slurm.get("defaultValue")
    prefix = _find(ui, "cidrPrefix")
    if prefix is not None:  # each value is '/24' or an expression whose last literal is the prefix it offers
        found = set()
        for allowed in prefix["constraints"]["allowedValues"]:
            match = re.search(r"/(\d+)'?\)*\]?$", str(allowed["value"]))
            if match:
                found.add(int(match.group(1)))
        facts["new_vnet_prefixes"] = sorted(found)
    return facts


_MODULE_CALL = re.compile(r"^module\s+\w+\s+'([\w./-]+\.bicep)'\s*=[^\n]*$", re.M)
_PARAM_FROM_PROPERTY = re.compile(r"^\s*(\w+):\s*[\w.]*?\.\??(\w+)\s*(?:\?\?.*)?$")
_STEP_LINE = re.compile(r"^-\s*(\S+):\s*(\d+)\s*TB\b", re.M)


def _module_params(ccw: str) -> list[tuple[str, str, str, int]]:
    """(module file, module parameter, mainTemplate property it is fed from, line in ccw.bicep) of each module call
    whose parameter is a property of a filer or parameter object (``sku: additionalFilesystem.?lustreTier``)."""
    found = []
    lines = ccw.splitlines()
    for match in _MODULE_CALL.finditer(ccw):
        start = ccw.count("\n", 0, match.start())
        depth = 0
        for offset, line in enumerate(lines[start:], start):
            depth += line.count("{") - line.count("}")
            prop = _PARAM_FROM_PROPERTY.match(line)
            if prop and depth >= 2:
                found.append((match.group(1), prop.group(1), prop.group(2), offset + 1))
            if depth <= 0 and offset > start and "}" in line:
                break
    return found


def _defs_with(schema: dict[str, Any], prop: str) -> list[dict[str, Any]]:
    return [d for _, d in sorted(schema["$defs"].items()) if prop in d.get("properties", {})]


def module_constraints(tag: str, schema: dict[str, Any], ui: dict) -> None:
    """Carry into ``schema`` (in place) the values the modules, the portal's ANF drop-down and create_cc_param.py
    refuse at ``tag`` (see the module docstring)."""
    main = next((f"bicep/{name}" for name in ("ccw.bicep", "ccsw.bicep") if has(CCWS, tag, f"bicep/{name}")), None)
    ccw = git(CCWS, "show", f"{tag}:{main}") if main is not None else ""  # ccsw.bicep until 2024.12.18
    allowed_by: dict[str, list[tuple[str, list[Any]]]] = {}  # module -> (property, allowed values)
    stepped: list[tuple[str, str, dict[str, int], str]] = []  # (module, capacity property, steps, source)
    parsed: dict[str, Any] = {}
    for module, param, prop, line in _module_params(ccw):
        path = f"bicep/{module.lstrip('./')}"
        if path not in parsed:
            parsed[path] = parse_bicep(git(CCWS, "show", f"{tag}:{path}")) if has(CCWS, tag, path) else None
        declared = parsed[path].params.get(param) if parsed[path] is not None else None
        if declared is None:
            continue
        source = f"{path} param {param} (fed by {main}:{line}) @ {tag}"
        allowed = declared.decorators.get("allowed")
        if isinstance(allowed, list):
            allowed_by.setdefault(module, []).append((prop, allowed))
            for d in _defs_with(schema, prop):
                d["properties"][prop] = {**d["properties"][prop], "enum": allowed, "x-source": source}
        found = {name: int(size) for name, size in _STEP_LINE.findall(str(declared.decorators.get("description", "")))}
        if found:
            stepped.append((module, prop, found, source))
    steps: dict[str, tuple[str, dict[str, int], str]] = {}  # tier property -> (capacity property, steps, source)
    for module, capacity_prop, found, source in stepped:
        # the steps are keyed by the allowed values of another parameter of the same module (amlfs.bicep sku)
        tier = next((prop for prop, allowed in allowed_by.get(module, []) if set(found) <= set(allowed)), None)
        if tier is not None:
            steps[tier] = (capacity_prop, found, source)
    for tier, (capacity, found, source) in steps.items():
        for d in _defs_with(schema, tier):
            if capacity not in d["properties"]:
                continue
            d["allOf"] = d.get("allOf", []) + [
                {"if": {"properties": {tier: {"const": name}}, "required": [tier]},
                 "then": {"properties": {capacity: {"multipleOf": size, "x-source": source}}}}
                for name, size in found.items()]
    levels: list[str] = []
    for name in ("anfServiceLevel", "anftier"):
        for element in _find_all(ui, name):
            for allowed in element.get("constraints", {}).get("allowedValues", []):
                if allowed["value"] not in levels:
                    levels.append(allowed["value"])
    if levels:
        for d in _defs_with(schema, "anfServiceLevel"):
            d["properties"]["anfServiceLevel"] = {
                **d["properties"]["anfServiceLevel"], "enum": levels,
                "x-source": f"uidefinitions/createUiDefinition.json anfServiceLevel drop-down @ {tag} (anf.bicep passes "
                            "it to the capacity pool unchecked)"}
    loader = "bicep/files-to-load/create_cc_param.py"
    if has(CCWS, tag, loader):
        text = git(CCWS, "show", f"{tag}:{loader}")
        reads = [n for n, line in enumerate(text.splitlines(), 1) if 'record["gitHubReleaseURL"]' in line]
        for _, d in sorted(schema["$defs"].items()):
            variant = d.get("properties", {}).get("type", {}).get("const")
            if variant == "PreStaged" and reads and "PreStaged" not in text:
                d["x-hpcconf-refused"] = (
                    f"create_cc_param.py at {tag} reads record[\"gitHubReleaseURL\"] of every clusterInitSpecs entry "
                    f"({loader}:{reads[0]}): a {variant} entry raises KeyError on the CycleCloud VM, install.sh stops "
                    "before `cyclecloud create_cluster` and no Slurm cluster is created")


def _find_all(node: Any, name: str) -> list[dict]:
    found: list[dict] = []
    if isinstance(node, dict):
        if node.get("name") == name:
            found.append(node)
        children: Any = node.values()
    elif isinstance(node, list):
        children = node
    else:
        return found
    for child in children:
        found += _find_all(child, name)
    return found


def cyclecloud_slurm_offers(repo: Path = CYCLECLOUD_SLURM) -> list[tuple[str, str, list[str]]]:
    """(tag, commit date, Slurm versions in project.ini) of each cyclecloud-slurm release, oldest first."""
    out = []
    for tag in git(repo, "tag", "--sort=creatordate").split():
        if not _VERSION_TAG.match(tag) or not has(repo, tag, "project.ini"):
            continue
        versions = re.findall(r'Value="([^"]+)"', git(repo, "show", f"{tag}:project.ini"))
        out.append((tag, git(repo, "log", "-1", "--format=%cs", tag).strip(), versions))
    return out


def cyclecloud_slurm_for(slurm_versions: list[str], released: str,
                         offers: list[tuple[str, str, list[str]]]) -> str | None:
    """The newest cyclecloud-slurm release, no later than the CCWS release, whose project offers its Slurm versions."""
    fits = [tag for tag, date, versions in offers if date <= released and set(slurm_versions) <= set(versions)]
    return fits[-1] if fits else None


def schema_for(tag: str, offers: list[tuple[str, str, list[str]]] | None) -> dict[str, Any]:
    commit = git(CCWS, "rev-list", "-n1", tag).strip()
    released = git(CCWS, "log", "-1", "--format=%cs", tag).strip()
    schema = to_json_schema(parse_bicep(git(CCWS, "show", f"{tag}:bicep/mainTemplate.bicep")),
                            parse_bicep(git(CCWS, "show", f"{tag}:bicep/types.bicep")))
    facts: dict[str, Any] = {"release": tag, "commit": commit, "date": released,
                             "source": f"Azure/cyclecloud-slurm-workspace bicep/mainTemplate.bicep, bicep/types.bicep "
                                       f"@ {tag} ({commit[:12]})"}
    ui = json.loads(git(CCWS, "show", f"{tag}:uidefinitions/createUiDefinition.json"))
    facts.update(ui_facts(ui))
    module_constraints(tag, schema, ui)
    if has(CCWS, tag, "bicep/files-to-load/initial_params.json"):
        initial = json.loads(git(CCWS, "show", f"{tag}:bicep/files-to-load/initial_params.json"))
        facts["initial_params_slurm_version"] = initial.get("configuration_slurm_version")
    bicep_default = schema["properties"].get("slurmSettings", {}).get("default", {})
    if isinstance(bicep_default, dict) and "version" in bicep_default:
        facts["bicep_slurm_version_default"] = bicep_default["version"]
    if offers is not None and facts.get("slurm_versions"):
        project = cyclecloud_slurm_for(facts["slurm_versions"], released, offers)
        if project is not None:
            facts["cyclecloud_slurm"] = project
            facts["cyclecloud_slurm_source"] = (f"Azure/cyclecloud-slurm {project} project.ini: the newest release up to "
                                                f"{released} offering Slurm {', '.join(facts['slurm_versions'])}")
    return {"$schema": "https://json-schema.org/draft/2020-12/schema",
            "title": f"CycleCloud Workspace for Slurm {tag}: mainTemplate parameters",
            "x-hpcconf": facts, **schema}


def render(schema: dict[str, Any]) -> str:
    return json.dumps(schema, indent=1, sort_keys=False, ensure_ascii=False) + "\n"


def path_for(tag: str) -> Path:
    return OUT / f"mainTemplate-{tag}.json"


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--check", action="store_true", help="compare with the committed files; write nothing")
    args = parser.parse_args(argv)
    if not CCWS.is_dir():
        print(f"no mirror at {CCWS}: fetch github:Azure/cyclecloud-slurm-workspace first", file=sys.stderr)
        return 2
    offers = cyclecloud_slurm_offers() if CYCLECLOUD_SLURM.is_dir() else None
    stale = []
    for tag in release_tags():
        text = render(schema_for(tag, offers))
        target = path_for(tag)
        if args.check:
            if not target.is_file() or target.read_text(encoding="utf-8") != text:
                stale.append(target.name)
        else:
            OUT.mkdir(parents=True, exist_ok=True)
            target.write_text(text, encoding="utf-8")
    if stale:
        print("differ from the mirror (run tools/gen_ccws_schema.py): " + ", ".join(stale), file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
