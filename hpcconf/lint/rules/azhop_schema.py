"""AzHOP ``config.yml``: az-hop's own schema (AZH001), and keys it accepts but should not (AZH003, AZH014, AZH015).

``validate_config.sh`` checks the file against ``config.schema.json`` and nothing else. AZH001 is
our own encoding of that schema (:mod:`hpcconf.knowledge.azhop`); the others are values the schema
types too loosely. The config.yml reading helpers and the views are in :mod:`hpcconf.lint.azhop_config`.
"""

from __future__ import annotations

import difflib
from typing import Iterator

from ...diagnostics import Diagnostic, Severity
from ...knowledge import azhop as kb
from ...rules_registry import rule
from ..azhop_config import KINDS, as_list, config_data, dig
from ..context import LintContext
from ..document import Document

# -- AZH001 --------------------------------------------------------------------------------------------

@rule(code="AZH001", name="azhop-schema", severity=Severity.ERROR, kinds=KINDS)
def schema(doc: Document, ctx: LintContext) -> Iterator[Diagnostic]:
    """config.yml breaks az-hop's ``config.schema.json``: an unknown key, a wrong type, a value off its list.

    ## What it catches
    Everything az-hop's ``validate_config.sh`` rejects: keys the schema does not know (almost every
    object is closed), missing required keys, wrong types (``version: "7.9"`` where a number is
    expected), values outside an enum (``slurm_version``, ``homefs_service_level``, AMLFS ``sku``),
    names breaking a pattern or length (infra VM names, queue names) and numbers out of range
    (ANF 4-100 TB). Legacy keys of older az-hop releases get a hint saying what replaced them, and so
    do ASG names the schema does not list (``network.asg.names``: ``asg-pbs``, ``asg-mysql-client``).

    ## Why is this bad?
    ``build.sh`` runs ``validate_config.sh`` before every deploy and stops on the first schema error;
    without it (``--no-validate``) the typo reaches Bicep or Ansible. az-hop #1604: the deprecated
    ``monitoring.install_agent`` failed validation inside cloud-init ("Additional properties are not
    allowed"); #994: config typos kept breaking deployments until the schema landed. The rule uses
    hpcconf's own encoding of the schema (az-hop 826f7906), tested to agree with the upstream file.

    ## Example
    ```yaml
    guacamole:            # removed from az-hop
      vm_size: Standard_B2ms
    slurm:
      accounting_enabled: false
      slurm_version: 22.05   # not a version az-hop installs
    ```

    ## Fix
    Delete or rename the key as the hint says; use a value from the listed ones:
    ```yaml
    slurm:
      accounting_enabled: false
      slurm_version: "23.02.5"
      cyclecloud_slurm_version: "3.0.4"
    ```
    """
    problems = kb.validate_config(doc.data)
    mistyped = {p.path for p in problems if p.kind == "type"}
    for problem in problems:
        if problem.kind == "enum" and problem.path in mistyped:
            continue  # one finding per value: the type error already says it
        hint = _schema_hint(problem)
        if problem.kind == "required":
            yield doc.at_path(problem.path, problem.message, hint=hint)
        else:
            yield doc.at_path(problem.path, problem.message, hint=hint, prefer_value=problem.kind != "unknown_key")


def _schema_hint(problem: kb.SchemaProblem) -> str:
    if problem.kind == "unknown_key":
        key = problem.key or ""
        if key in kb.LEGACY_KEYS:
            return f"'{key}' is a legacy key: {kb.LEGACY_KEYS[key]}"
        if problem.path[:-1] == ("network", "asg", "names") and key in kb.ASG_NAME_DRIFT:
            return kb.ASG_NAME_DRIFT[key]
        allowed = kb.allowed_keys(problem.path[:-1])
        close = difflib.get_close_matches(key, allowed, n=1, cutoff=0.6)
        return f"did you mean '{close[0]}'?" if close else ("remove it; allowed here: " + ", ".join(allowed) if allowed else "remove it")
    if problem.kind == "required":
        return f"add '{problem.key}:' here"
    if problem.kind == "type":
        return "check the value's type: quote strings, leave numbers and booleans bare"
    return "use a value az-hop's schema accepts"

# -- AZH003 --------------------------------------------------------------------------------------------

@rule(code="AZH003", name="azhop-queue-manager", severity=Severity.ERROR, kinds=KINDS)
def queue_manager(doc: Document, ctx: LintContext) -> Iterator[Diagnostic]:
    """``queue_manager`` is neither ``slurm`` nor ``openpbs``.

    ## What it catches
    Any other value: ``Slurm``, ``pbs``, ``pbspro``, ``slurm `` ...

    ## Why is this bad?
    The schema types ``queue_manager`` as a plain string (az-hop ``config.schema.json``), so a typo passes
    validation. The playbooks and Bicep compare it with ``slurm`` / ``openpbs`` and fall back to
    OpenPBS (``bicep/azhop.bicep`` default ``openpbs``): a misspelt ``slurm`` silently deploys PBS.

    ## Example
    ```yaml
    queue_manager: Slurm
    ```

    ## Fix
    ```yaml
    queue_manager: slurm
    ```
    """
    value = config_data(doc).get("queue_manager")
    if isinstance(value, str) and value not in kb.QUEUE_MANAGERS:
        close = difflib.get_close_matches(value.strip().lower(), kb.QUEUE_MANAGERS, n=1, cutoff=0.5)
        hint = f"did you mean '{close[0]}'?" if close else "use slurm or openpbs"
        yield doc.at_path(("queue_manager",), f"queue_manager '{value}' is not slurm or openpbs; az-hop would deploy OpenPBS",
                          hint=hint, prefer_value=True)

# -- AZH014 / AZH015 ----------------------------------------------------------------------------------------

@rule(code="AZH014", name="azhop-deprecated-key", severity=Severity.WARNING, kinds=KINDS)
def deprecated_key(doc: Document, ctx: LintContext) -> Iterator[Diagnostic]:
    """config.yml uses a key az-hop's schema still accepts but marks deprecated.

    ## What it catches
    ``monitoring.install_agent``.

    ## Why is this bad?
    The schema flags it ``"deprecated": true``; the code no longer reads it, so the setting does
    nothing (monitoring is ``monitoring.azure_monitor_agent`` now). az-hop #1604: configs carrying
    it failed validation inside cloud-init on the deployer.

    ## Example
    ```yaml
    monitoring:
      install_agent: false
    ```

    ## Fix
    ```yaml
    monitoring:
      azure_monitor_agent: false
    ```
    """
    data = config_data(doc)
    for path, why in kb.DEPRECATED_KEYS.items():
        parent = dig(data, *path[:-1])
        if isinstance(parent, dict) and path[-1] in parent:
            yield doc.at_path(path, f"{'.'.join(path)} is deprecated", hint=why)


@rule(code="AZH015", name="azhop-image-version-float", severity=Severity.WARNING, kinds=KINDS)
def image_version_float(doc: Document, ctx: LintContext) -> Iterator[Diagnostic]:
    """An ``images[].version`` such as ``8.10`` is read as the number 8.1.

    ## What it catches
    Image definition versions written as a decimal whose minor part ends in 0 (``8.10``, ``20.10``).

    ## Why is this bad?
    The schema types ``version`` as a number and the template says "Pattern is major.minor where minor
    is mandatory" (az-hop's config.tpl.yml). YAML reads ``8.10`` as the float 8.1, so the image definition gets version 8.1 and
    no longer matches the packer file's 8.10.

    ## Example
    ```yaml
    images:
      - {name: azhop-compute-almalinux-8_10, publisher: azhop, offer: almalinux, sku: 8_10-hpc-gen2, hyper_v: V2, os_type: Linux, version: 8.10}
    ```

    ## Fix
    Use a minor version that survives as a number, or name the minor version without a trailing zero
    in both the packer file and here (e.g. ``version: 8.1`` for both).
    """
    data = config_data(doc)
    images = as_list(data.get("images"))
    for i, image in enumerate(images):
        if not isinstance(image, dict) or not isinstance(image.get("version"), float) or doc.yaml is None:
            continue
        span = doc.yaml.value_spans.get(("images", i, "version"))
        if span is None or not (0 < span.line <= len(doc.lines)):
            continue
        token = doc.lines[span.line - 1][span.column - 1:].split("#")[0].strip().rstrip(",}").strip()
        if "." in token and token.split(".")[-1].endswith("0") and token.replace(".", "").isdigit():
            yield doc.at_path(("images", i, "version"), f"version {token} is read as the number {image['version']}",
                              hint="pick a version whose minor part has no trailing zero, the same in the packer file", prefer_value=True)
