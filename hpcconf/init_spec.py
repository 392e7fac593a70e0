"""What `hpcconf init` does: scaffold a commented spec for a SKU and platforms (the options:
:mod:`hpcconf.commands.init`).
"""

from __future__ import annotations

import os
import re
from pathlib import Path
from types import ModuleType
from typing import Any, List, Optional

import typer

from .diagnostic_text import render_all
from .diagnostics import HpcconfError
from .exit_codes import EXIT_INVALID, usage_error
from .sku_dirs import with_settings_dirs


def _model() -> ModuleType:
    """The spec models, imported on first use: building them costs ~0.3 s that `hpcconf lint` need not pay."""
    from .spec import model

    return model

PLATFORMS = ("aks", "azhop", "slurm", "ccws")
SCHEMA_FILE = "hpcconf-spec.schema.json"  # the name the scaffold's yaml-language-server line uses

# Versions a platform's artifacts use; "*" means every platform. Only pinned fields with a default.
_VERSION_USERS = {
    "network_operator": {"aks"}, "gpu_operator": {"aks"}, "node_feature_discovery": {"aks"}, "volcano": {"aks"},
    "az_cli": {"aks", "ccws"}, "kubectl": {"aks"}, "nccl": {"*"}, "nccl_tests": {"*"}, "amd_gpu_operator": {"aks"},
}
# Pins that only one GPU vendor's artifacts read: NVIDIA's gpu-operator and nccl-tests, AMD's GPU operator
# (an AMD pool's image builds rccl-tests at the commit hpcconf.knowledge.rocm pins).
_VENDOR_ONLY = {"gpu_operator": "nvidia", "nccl_tests": "nvidia", "amd_gpu_operator": "amd"}
_PLACEHOLDER_UUID = "00000000-0000-0000-0000-000000000000"
# A well-formed OpenSSH public key line to replace (the scaffold must build; no real key is anyone's).
_PLACEHOLDER_PUBLIC_KEY = "ssh-ed25519 AAAAC3NzaC1lZDI1NTE5AAAAIReplaceWithTheContentsOfYourPublicKeyFile0000 replace-me"
# metadata.location by the SKU's provider: only an Azure size makes it an Azure region that AKS/AzHOP deploy
# to; for Crusoe the Terraform location is slurm.crusoe.location, and nodes of your own are wherever you say.
_DEFAULT_LOCATION = {"azure": "southcentralus", "crusoe": "useast1", "other": "onprem"}
_LOCATION_COMMENT = {
    "azure": "Azure region; check the VM size is offered there (az vm list-skus -l <region>)",
    "crusoe": "informational for Crusoe (the Terraform location is slurm.crusoe.location)",
    "other": "informational: the site or cloud region of your own nodes (provider: other); hpcconf deploys nothing there",
}

def _platforms(values: list[str]) -> list[str]:
    chosen: list[str] = []
    for value in values or ["aks"]:
        for item in (v.strip().lower() for v in value.split(",")):
            if item and item not in PLATFORMS:
                raise usage_error(f"--platform {item!r} is not one of {', '.join(PLATFORMS)}")
            if item and item not in chosen:
                chosen.append(item)
    return chosen


def _slug(sku_name: str) -> str:
    """Standard_ND96isr_H100_v5 -> nd96isr-h100-v5 (a valid cluster-name stem)."""
    stem = re.sub(r"^standard_", "", sku_name.lower())
    stem = re.sub(r"[^a-z0-9]+", "-", stem).strip("-")
    if not stem or not stem[0].isalpha():
        stem = "gpu-" + stem
    return stem[:30].rstrip("-")


def _scalar(value: object) -> str:
    """A YAML scalar that reads back as the same string (quote '23.03', 'yes', '8' ...)."""
    from ruamel.yaml import YAML

    text = str(value)
    loaded = YAML(typ="safe").load(text) if text else None
    if isinstance(loaded, str) and loaded == text and not text.startswith(("*", "&", "!", "{", "[")):
        return text
    return '"' + text.replace("\\", "\\\\").replace('"', '\\"') + '"'


def _versions(platforms: list[str], vendor: str = "nvidia") -> list[dict[str, str]]:
    defaults = _model().Versions()
    items = []
    for key, info in _model().Versions.model_fields.items():
        users = _VERSION_USERS.get(key)
        value = getattr(defaults, key)
        if value is None or users is None or not ("*" in users or users & set(platforms)):
            continue
        if _VENDOR_ONLY.get(key, vendor) != vendor:
            continue
        comment = (info.description or "").split(". ")[0].rstrip(".")
        items.append({"key": key, "value": _scalar(value), "comment": comment})
    return items


def _doca_driver_tag(sku: Any) -> str | None:
    """The doca-driver tag the NicClusterPolicy needs, when the pinned network-operator has no default."""
    from .knowledge.charts import doca_driver_default, network_operator_renders_ncp

    release = _model().Versions().network_operator
    if sku.infiniband is None or network_operator_renders_ncp(release):
        return None
    return doca_driver_default(release)  # the tag NVIDIA pairs with the pinned release


def _pin_nccl_of_base(versions: list[dict[str, str]], base: str) -> None:
    """The AKS job runs the base image's NCCL: pin that one, not hpcconf's default (lint HPC203)."""
    from .knowledge.compat import ngc_release

    release = ngc_release(base)
    for item in versions:
        if item["key"] == "nccl" and release is not None:
            item.update(value=_scalar(release.nccl), comment=f"NCCL that {base.rsplit('/', 1)[-1]} ships")


def _refusal(sku: Any, platforms: list[str]) -> str | None:
    """Why the SKU cannot work on one of the platforms (knowledge.compat), or None."""
    from .knowledge.compat import unsupported_reason
    from .spec.checks.hardware import hardware_refusal

    return next((f"{sku.name} cannot work on {p}: {reason}" for p in platforms
                 if (reason := unsupported_reason(sku, p) or hardware_refusal(sku, p)) is not None), None)


def _output_root(file: str) -> str:
    """Where ``hpcconf build FILE`` will write (the settings nearest the spec, else out/ beside it)."""
    from .settings.config import ConfigError
    from .spec_discovery import spec_output_root

    if file in ("", "-"):
        return "out"
    try:
        return spec_output_root(Path(file), None).as_posix()
    except ConfigError:
        return "out"  # the settings file is reported by the build itself


def init_context(sku: Any, nodes: int, platforms: list[str], name: str, location: str | None,
                 registry: str | None, file: str, command: str) -> dict[str, Any]:
    """Everything the init template lays out, computed from the SKU catalog and the model's defaults."""
    crusoe = sku.provider == "crusoe"
    ib = sku.infiniband
    from .knowledge import rocm

    amd = sku.gpu.vendor == "amd"
    base = rocm.ROCM_BASE_IMAGE if amd else _model().TestImage.model_fields["base"].default
    tag = base.rsplit(":", 1)[-1].split("-", 1)[0]
    gpus = f"{sku.gpu.count} x {sku.gpu.model}"
    context: dict[str, Any] = {
        "summary": f"{nodes} x {sku.name} ({gpus}) on {' + '.join(platforms)}",
        "command": command, "file": file, "out": _output_root(file), "cluster_name": name,
        # The editor's schema: a file beside the spec that `hpcconf schema -o` writes, so it matches the
        # installed hpcconf (a URL would name a branch that moves, and this repository publishes no tags).
        "schema_file": SCHEMA_FILE, "schema_path": (Path(file).parent / SCHEMA_FILE).as_posix(),
        "location": location or _DEFAULT_LOCATION[sku.provider],
        "location_comment": _LOCATION_COMMENT[sku.provider],
        "platforms": platforms, "pool": "gpu", "sku": sku.name, "nodes": nodes,
        "sku_comment": f"{sku.family}: {gpus}" + (f", {ib.count} x {ib.rate} InfiniBand" if ib else ", no InfiniBand"),
        "infiniband": f"{ib.count} x {ib.rate} InfiniBand per node" if ib else "",
        "versions": _versions(platforms, sku.gpu.vendor),
        "library": "RCCL" if amd else "NCCL",
        "aks": "aks" in platforms,
        "test_image": None,
        "crusoe": None,
        "sku_dirs": [],
        "ccws": None,
    }
    if amd:  # RCCL reads the NCCL_* names: the pin says which NCCL release's table the lint rules apply
        for item in context["versions"]:
            if item["key"] == "nccl":
                item["comment"] = "NCCL release whose NCCL_* variable table lint applies (RCCL reads those names)"
    if "aks" in platforms:
        doca = _doca_driver_tag(sku)
        if doca:
            context["versions"].append({"key": "doca_ofed", "value": doca,
                                        "comment": "DOCA driver network-operator deploys on the nodes"})
        _pin_nccl_of_base(context["versions"], base)
        registry = registry or f"{re.sub(r'[^a-z0-9]', '', name)[:40]}acr.azurecr.io"
        context["test_image"] = {
            "registry": registry, "tag": _scalar(tag), "base": base, "name": "rccl-tests" if amd else "nccl-tests",
            "base_comment": "ROCm image (ROCm/ROCm-docker); the image adds RCCL, Open MPI and rccl-tests" if amd
            else "NGC image with CUDA, NCCL and MPI"}
    context["pool_image"] = None
    if crusoe and "slurm" in platforms:
        from .knowledge import images

        if images.crusoe_needs_custom_image(sku.name):  # the module's README: GB200/B200 need a custom image
            context["pool_image"] = {"value": f"{sku.name.split('-')[0]}-slurm-custom:replace-me",
                                     "comment": "your custom image (crusoecloud/solutions-library slurm-custom-image)"}
        context["crusoe"] = {"project_id": _PLACEHOLDER_UUID, "location": "us-east1-a",
                             "vpc_subnet_id": _PLACEHOLDER_UUID, "ib_partition_id": _PLACEHOLDER_UUID if ib else None}
    if "ccws" in platforms:
        from .knowledge import ccws

        context["ccws"] = {"release": ccws.newest().tag, "ssh_public_key": _PLACEHOLDER_PUBLIC_KEY}
    return context


def render_init_spec(context: dict[str, Any]) -> str:
    from .templating import render_template

    return render_template("init/spec.yaml.j2", **context)


def _validate(text: str, display_name: str, spec_path: Path | None = None) -> None:
    """Compile the scaffold before writing it: init never leaves a spec that does not build.

    ``spec_path`` is where it will be written: its sku_dirs are relative to that file."""
    from .pipeline import compile_spec

    compile_spec(spec_path or Path(display_name), text=text, display_name=display_name)


def run_init(*, sku: str, nodes: int, platform: List[str], name: Optional[str], location: Optional[str],
             registry: Optional[str], output: Optional[Path], force: bool, sku_dir: List[Path]) -> None:
    """`hpcconf init`: write (or print) the scaffold after compiling it; a bad option exits 2, nothing written."""
    from .catalog import Catalog, UnknownSku

    platforms = _platforms(platform)
    # The settings' sku-dir too: the spec records every directory it needs, so it builds anywhere.
    sku_dir = list(dict.fromkeys(with_settings_dirs(sku_dir)))
    try:
        catalog = Catalog.load(extra_dirs=sku_dir)
    except HpcconfError as exc:
        typer.echo(render_all(exc.diagnostics), err=True)
        raise typer.Exit(EXIT_INVALID) from None
    try:
        found = catalog.get(sku)
    except UnknownSku as exc:
        close = ", ".join(getattr(exc, "suggestions", []) or [])
        raise usage_error(f"unknown SKU {sku!r}" + (f"; did you mean {close}?" if close else "; `hpcconf skus` lists them")) from None
    refusal = _refusal(found, platforms)
    if refusal:
        raise usage_error(refusal)
    cluster_name = name or f"{_slug(found.name)}-{platforms[0]}"
    if not re.match(_model().NAME_PATTERN, cluster_name):
        raise usage_error(f"--name {cluster_name!r}: use 2-40 lower-case letters, digits and '-', starting with a letter")
    target = output or Path(f"{cluster_name}.yaml")
    to_stdout = str(target) == "-"
    if not to_stdout and target.exists() and not force:
        raise usage_error(f"{target} exists; pass --force to overwrite it or -o to write elsewhere")
    shown_platforms = " ".join(f"--platform {p}" for p in platforms)
    command = f"hpcconf init --sku {found.name} --nodes {nodes} {shown_platforms}"
    file_name = "spec.yaml" if to_stdout else target.name
    spec_path = Path("spec.yaml") if to_stdout else target
    context_dirs = [_scalar(os.path.relpath(d.resolve(), spec_path.resolve().parent)) for d in sku_dir]
    context = init_context(found, nodes, platforms, cluster_name, location, registry,
                           "spec.yaml" if to_stdout else target.as_posix(), command)
    context["sku_dirs"] = context_dirs
    text = render_init_spec(context)
    shown = f"{file_name} (not written)"
    try:
        _validate(text, shown, spec_path)
    except HpcconfError as error:  # a bad --location/--registry value, or a bug: never write a broken spec
        from .diagnostic_text import SourceCache

        typer.echo(render_all(error.diagnostics, SourceCache({shown: text})), err=True)
        typer.echo("\nhpcconf init wrote nothing: the values above come from --name, --location or --registry; "
                   "fix the option and run it again.", err=True)
        raise typer.Exit(EXIT_INVALID) from None
    if to_stdout:
        typer.echo(text, nl=False)
        return
    target.parent.mkdir(parents=True, exist_ok=True)
    target.write_text(text, encoding="utf-8")
    typer.echo(f"wrote {target}: {nodes} x {found.name} on {', '.join(platforms)}")
    typer.echo(f"next: hpcconf build {target} && hpcconf lint {target}")
    schema = target.parent / SCHEMA_FILE
    if not schema.exists():
        typer.echo(f"editor: hpcconf schema -o {schema.as_posix()}  # the JSON Schema the spec's first line names")
