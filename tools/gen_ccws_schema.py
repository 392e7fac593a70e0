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
    facts.update(ui_facts(json.loads(git(CCWS, "show", f"{tag}:uidefinitions/createUiDefinition.json"))))
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
