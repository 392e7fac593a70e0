"""AzHOP ``config.yml`` storage: the home mount (AZH008) and AMLFS sizes (AZH009)."""

from __future__ import annotations

from typing import Iterator

from ...diagnostics import Diagnostic, Severity
from ...knowledge import azhop as kb
from ...rules_registry import rule
from ..azhop_config import KINDS, config_data, dig, ipv4_network, is_true, subnets_of
from ..context import LintContext
from ..document import Document

# -- AZH008 --------------------------------------------------------------------------------------------

@rule(code="AZH008", name="azhop-home-mount", severity=Severity.ERROR, kinds=KINDS)
def home_mount(doc: Document, ctx: LintContext) -> Iterator[Diagnostic]:
    """``mounts.home`` does not match the storage the config creates.

    ## What it catches
    ``type: anf`` without ``anf.create: true``; ``type: azurefiles`` without ``azurefiles.create:
    true``; an empty ``server`` or ``export``; ``existing`` (the default type) with az-hop's
    ``{{anf_home_*}}`` placeholders; an Azure Files home whose options do not ask for NFS 4.1;
    (warning) both ``anf.create`` and ``azurefiles.create``.

    ## Why is this bad?
    ``bicep/azhop.bicep`` fills ``anf_home_ip`` / ``anf_home_path`` / ``anf_home_opts`` from the
    ANF or Azure Files module chosen by the home type; with no such storage there is nothing to
    mount and every node fails its NFS mount at boot. az-hop #1200: an Azure Files home mounted with
    the wrong options timed out (``mount.nfs: Connection timed out``); Azure Files NFS is 4.1 only.

    ## Example
    ```yaml
    azurefiles: {create: true, size_gb: 1024}
    mounts:
      home:
        type: azurefiles
        mountpoint: /anfhome
        server: ''
        export: ''
    ```

    ## Fix
    ```yaml
        server: '{{anf_home_ip}}'
        export: '{{anf_home_path}}'
        options: 'vers=4,minorversion=1,sec=sys'
    ```
    """
    data = config_data(doc)
    home = dig(data, "mounts", "home")
    if not isinstance(home, dict):
        return
    kind = home.get("type", "existing")
    base = ("mounts", "home")
    type_path = base + (("type",) if "type" in home else ())
    if kind == "anf" and not is_true(dig(data, "anf", "create")):
        yield doc.at_path(type_path, "home type 'anf' but no ANF volume is created (anf.create is not true)",
                          hint="add anf: {create: true, homefs_size_tb: 4, homefs_service_level: Standard}", prefer_value=True)
    if kind == "azurefiles" and not is_true(dig(data, "azurefiles", "create")):
        yield doc.at_path(type_path, "home type 'azurefiles' but no Azure Files share is created (azurefiles.create is not true)",
                          hint="add azurefiles: {create: true, size_gb: 1024}", prefer_value=True)
    for key in ("server", "export"):
        value = home.get(key)
        if isinstance(value, str) and not value.strip():
            fill = kb.HOME_PLACEHOLDERS[key] if kind in ("anf", "azurefiles") else f"your NFS {key}"
            yield doc.at_path(base + (key,), f"mounts.home.{key} is empty: nodes would mount nothing",
                              hint=f"use '{fill}'", prefer_value=True)
        elif isinstance(value, str) and kind == "existing" and "{{anf_home" in value:
            yield doc.at_path(base + (key,), f"home type is 'existing' (the default) but {key} is az-hop's placeholder {value}",
                              hint="set type: anf or azurefiles to let az-hop create the share, or give the real NFS server/export",
                              prefer_value=True)
    options = home.get("options")
    if kind == "azurefiles" and isinstance(options, str) and "{{" not in options and not kb.nfs41_options(options):
        yield doc.at_path(base + ("options",), f"Azure Files NFS speaks only NFS 4.1; options '{options}' do not ask for it",
                          hint="use vers=4,minorversion=1,sec=sys or '{{anf_home_opts}}'", prefer_value=True)
    if is_true(dig(data, "anf", "create")) and is_true(dig(data, "azurefiles", "create")):
        yield doc.at_path(("azurefiles", "create"), "both anf.create and azurefiles.create are true; home uses one of them",
                          hint="create only the storage mounts.home uses", prefer_value=True, severity=Severity.WARNING)


# -- AZH009 --------------------------------------------------------------------------------------------

@rule(code="AZH009", name="azhop-amlfs-size", severity=Severity.ERROR, kinds=KINDS)
def amlfs_size(doc: Document, ctx: LintContext) -> Iterator[Diagnostic]:
    """The AMLFS capacity is not a whole number of its tier's steps, or the lustre subnet is too small for it.

    ## What it catches
    ``lustre.capacity`` that is below or not a multiple of the tier's step (48 TiB for
    AMLFS-Durable-Premium-40, 16 for -125, 8 for -250, 4 for -500), and a lustre subnet smaller than
    the AMLFS minimum for that capacity (4-16 TiB /27, 20-40 /26, 44-92 /25, 96-196 /24, 200-400 /23).

    ## Why is this bad?
    Azure rejects other capacities when Bicep creates the file system (``bicep/amlfs.bicep``,
    PR #1900), and an AMLFS needs one address per server: Azure's AMLFS network prerequisites ("Determining network size")
    table gives the minimum subnet per capacity. az-hop's template /26 lustre subnet caps AMLFS at
    40 TiB.

    ## Example
    ```yaml
    lustre:
      create: true
      sku: AMLFS-Durable-Premium-250
      capacity: 12
    ```

    ## Fix
    ```yaml
      capacity: 16
    ```
    """
    data = config_data(doc)
    lustre = data.get("lustre")
    if not isinstance(lustre, dict) or not is_true(lustre.get("create")):
        return
    sku, capacity = lustre.get("sku"), lustre.get("capacity")
    if not isinstance(sku, str) or not isinstance(capacity, int) or isinstance(capacity, bool):
        return
    problem = kb.amlfs_capacity_problem(sku, capacity)
    if problem:
        yield doc.at_path(("lustre", "capacity"), problem, hint="use a whole number of steps", prefer_value=True)
    net = ipv4_network(dig(subnets_of(data), "lustre", "address_prefixes"))
    need = kb.amlfs_min_prefix(capacity)
    if net is not None and (need is None or net.prefixlen > need):
        want = f"/{need} or larger" if need else "more than a /23"
        yield doc.at_path(("network", "vnet", "subnets", "lustre", "address_prefixes"),
                          f"lustre subnet {net} is too small for {capacity} TiB of AMLFS (needs {want})",
                          hint="size it from the AMLFS table: 4-16 TiB /27, 20-40 /26, 44-92 /25, 96-196 /24, 200-400 /23",
                          prefer_value=True)
