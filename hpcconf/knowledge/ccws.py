"""CycleCloud Workspace for Slurm (CCWS, Azure/cyclecloud-slurm-workspace): its releases and the parameters of
``bicep/mainTemplate.bicep`` at each.

The schemas in hpcconf/data/ccws/ are written by tools/gen_ccws_schema.py from the release tags (types from
``bicep/types.bicep``, parameters from ``bicep/mainTemplate.bicep``; each file's ``x-hpcconf`` names the tag and
commit). What a release ships is read from its portal definition (``uidefinitions/createUiDefinition.json``): the
Slurm versions its ``slurmVersion`` drop-down allows, the CIDR prefixes of a new VNet. ``mainTemplate.bicep``'s own
``slurmSettings`` default is stale (23.11.7-1 at every tag from 2024.08.30 to 2026.07.02, issue #346 of the
repository) and is never taken as what a release ships.
"""

from __future__ import annotations

import functools
import json
import re
from dataclasses import dataclass
from pathlib import Path
from typing import Any

DATA_DIR = Path(__file__).resolve().parents[1] / "data" / "ccws"
REPOSITORY = "Azure/cyclecloud-slurm-workspace"
# The $schema of an ARM deployment parameters file (any API date): the kind of file `az deployment ... --parameters`
# reads, https://learn.microsoft.com/azure/azure-resource-manager/templates/parameter-files.
PARAMETERS_SCHEMA = re.compile(r"^https?://schema\.management\.azure\.com/schemas/[0-9-]+/deploymentParameters\.json#?$",
                               re.I)


@dataclass(frozen=True)
class Release:
    tag: str
    commit: str
    schema: dict[str, Any]  # JSON Schema of the parameter values: {name: value}
    slurm_versions: tuple[str, ...]  # what the portal's slurmVersion drop-down allows
    slurm_version_default: str | None
    new_vnet_prefixes: tuple[int, ...]  # prefix lengths the portal offers for a new VNet
    cyclecloud_slurm: str | None  # the cyclecloud-slurm release offering the same Slurm versions (derived)
    bicep_slurm_version_default: str | None  # mainTemplate's stale default: never what the release ships

    @property
    def parameters(self) -> dict[str, Any]:
        return self.schema["properties"]

    @property
    def required(self) -> tuple[str, ...]:
        return tuple(self.schema["required"])

    @property
    def source(self) -> str:
        return f"{REPOSITORY} @ {self.tag} ({self.commit[:12]})"


def tag_key(tag: str) -> tuple[int, ...]:
    return tuple(int(part) for part in tag.split("."))


@functools.lru_cache(maxsize=1)
def releases() -> dict[str, Release]:
    """Every release we hold a schema for, oldest first."""
    found = {}
    for path in DATA_DIR.glob("mainTemplate-*.json"):
        schema = json.loads(path.read_text(encoding="utf-8"))
        facts = schema["x-hpcconf"]
        found[facts["release"]] = Release(
            tag=facts["release"], commit=facts["commit"], schema=schema,
            slurm_versions=tuple(facts.get("slurm_versions", ())), slurm_version_default=facts.get("slurm_version_default"),
            new_vnet_prefixes=tuple(facts.get("new_vnet_prefixes", ())), cyclecloud_slurm=facts.get("cyclecloud_slurm"),
            bicep_slurm_version_default=facts.get("bicep_slurm_version_default"))
    return {tag: found[tag] for tag in sorted(found, key=tag_key)}


# From this release on ccw.bicep sets `registerOODApp = false // ood.?registerEntraIDApp ?? false` ("Temporary
# deprecation of automatic registration of Entra app registration", bicep/ccw.bicep at 2025.12.01 .. 2026.07.02):
# Open OnDemand then needs an existing Entra ID application, or it gets an empty client id and no one signs in.
OOD_APP_REGISTRATION_OFF_FROM = "2025.12.01"


def registers_ood_app(tag: str | None) -> bool:
    """Whether the release's ccw.bicep still registers an Entra ID application for Open OnDemand."""
    chosen = release(tag)
    return chosen is None or tag_key(chosen.tag) < tag_key(OOD_APP_REGISTRATION_OFF_FROM)


def newest() -> Release:
    return list(releases().values())[-1]


def release(tag: str | None) -> Release | None:
    """The release of ``tag`` (None: the newest); None when we hold no schema for the tag."""
    return newest() if tag is None else releases().get(tag)


def resolve_ref(schema: dict[str, Any], root: dict[str, Any]) -> dict[str, Any]:
    """``schema`` with a ``$ref`` to ``#/$defs/<name>`` followed (its siblings, e.g. ``default``, kept)."""
    while "$ref" in schema:
        name = schema["$ref"].rsplit("/", 1)[-1]
        rest = {k: v for k, v in schema.items() if k != "$ref"}
        schema = {**root["$defs"][name], **rest}
    return schema


REFUSED_KEYWORD = "x-hpcconf-refused"


def _refused(validator: Any, message: Any, instance: Any, schema: dict[str, Any]) -> Any:
    import jsonschema

    yield jsonschema.ValidationError(str(message))


def validator(schema: dict[str, Any]) -> Any:
    """A JSON Schema validator of a release's parameters that also reports a variant the release's own scripts
    cannot read (``x-hpcconf-refused``, written by tools/gen_ccws_schema.py with the upstream line as evidence)."""
    import jsonschema  # lazily: only a CCWS build or lint validates parameters

    cls = jsonschema.validators.extend(jsonschema.Draft202012Validator, {REFUSED_KEYWORD: _refused})
    return cls(schema)


def slurm_version_problem(version: str, rel: Release) -> str | None:
    """Why ``version`` is not a Slurm the release ships (None when it is one)."""
    if not rel.slurm_versions or version in rel.slurm_versions:
        return None
    shipped = ", ".join(rel.slurm_versions)
    stale = (f" ({version} is mainTemplate.bicep's stale default, not a version the release's portal offers)"
             if version == rel.bicep_slurm_version_default else "")
    return f"CCWS {rel.tag} ships Slurm {shipped}, not {version}{stale}"


def release_for(parameters: dict[str, Any]) -> tuple[Release, str]:
    """The release a parameters file (``parameters``: its ``parameters`` object) is judged against, and how it was
    chosen, from what the file shows: its ``projectVersion`` when that names a release we hold; else the newest
    release that declares every parameter the file gives and requires none it lacks (or, failing that, only
    declares them all), preferring one that ships its ``slurmSettings.version``; else the newest."""
    value = parameters.get("projectVersion", {}).get("value") if isinstance(parameters.get("projectVersion"), dict) \
        else None
    if isinstance(value, str) and value in releases():
        return releases()[value], f"CCWS {value} (its projectVersion)"
    names = set(parameters)
    newest_first = list(reversed(releases().values()))
    known = [rel for rel in newest_first if names <= set(rel.parameters)]
    complete = [rel for rel in known
                if all(name in names or rel.parameters[name].get("x-secure") for name in rel.required)]
    fits = complete or known
    if not fits:
        rel = newest_first[0]
        return rel, f"CCWS {rel.tag} (the newest release; no release declares every parameter the file gives)"
    settings = parameters.get("slurmSettings", {}).get("value") if isinstance(parameters.get("slurmSettings"), dict) \
        else None
    version = settings.get("version") if isinstance(settings, dict) else None
    rel = next((r for r in fits if version in r.slurm_versions), fits[0])
    if rel is newest_first[0]:
        return rel, f"CCWS {rel.tag}"
    return rel, f"CCWS {rel.tag} (the newest release whose parameters the file gives)"


def releases_knowing(names: set[str]) -> list[str]:
    """Releases whose mainTemplate declares every parameter of ``names``, newest first."""
    return [tag for tag, rel in reversed(releases().items()) if names <= set(rel.parameters)]


# The cluster's scale-set size for its hpc and gpu arrays: initial_params.json's HPCMaxScalesetSize (100 at 2026.07.02),
# which cyclecloud-slurm's template applies as Azure.MaxScalesetSize to both (templates/slurm.txt at 4.0.9) and no
# mainTemplate parameter sets. Each scale set is one placement group; azslurm splits an array into
# ceil(maxNodes / 100) of them (azure-slurm/slurmcc/cli.py _generate_gres_conf).
PLACEMENT_GROUP_NODES = 100
PLACEMENT_GROUP_SOURCE = ("Azure/cyclecloud-slurm-workspace bicep/files-to-load/initial_params.json HPCMaxScalesetSize "
                          "@ 2026.07.02; Azure/cyclecloud-slurm 4.0.9 templates/slurm.txt (Azure.MaxScalesetSize of "
                          "the hpc and gpu arrays)")

# How long slurmctld waits for a resumed node to register before it marks it DOWN: cyclecloud-slurm's
# azure-slurm-install/templates/slurm.conf.template ResumeTimeout=1800 at 4.0.9 (the project CCWS 2026.07.02 runs).
RESUME_TIMEOUT_S = 1800
RESUME_TIMEOUT_SOURCE = "Azure/cyclecloud-slurm 4.0.9 azure-slurm-install/templates/slurm.conf.template"

# What mainTemplate's ``tags`` (resource_tags_t: {resource type: {name: value}}) is keyed by: the resource types
# the portal's TagsByResource offers (createUiDefinition.json "tagsByResource" at 2026.07.02), which ccw.bicep reads
# with getTags('<type>', tags) ('Resource group' in mainTemplate.bicep, 'Node Array' for the CycleCloud nodes).
TAGGED_RESOURCES = ("Microsoft.Storage/storageAccounts", "Microsoft.Compute/virtualMachines",
                    "Microsoft.Network/networkInterfaces", "Microsoft.Network/virtualNetworks",
                    "Microsoft.Network/networkSecurityGroups", "Microsoft.Network/natGateways",
                    "Microsoft.StorageCache/amlFileSystems", "Microsoft.NetApp/netAppAccounts",
                    "Microsoft.Network/bastionHosts", "Resource group", "Node Array",
                    "Microsoft.ManagedIdentity/userAssignedIdentities")
