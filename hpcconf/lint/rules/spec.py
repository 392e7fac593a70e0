"""Findings of the spec loader, registered so `hpcconf explain` knows them.

The loader (hpcconf/spec/load.py) reports these while it validates a spec field by field, in
`hpcconf build` (exit 2) and in `hpcconf lint SPEC` (as always-selected error findings, exit 1).
The cross-field checks are rules of their own in hpcconf/spec/checks/ (HPC006, HPC008, HPC009, SPEC*).
"""

from __future__ import annotations

from ...diagnostics import Severity
from ...rules_registry import engine_rule

engine_rule(code="HPC000", name="unreadable-file", severity=Severity.ERROR, admission=True, doc="""
    A spec or SKU file cannot be read: it does not exist, is a directory, or is not UTF-8 text.

    ## What it catches
    A path given to ``hpcconf build`` or ``--sku-dir`` that is not a readable file or directory.

    ## Why is this bad?
    Nothing can be validated or generated from it; hpcconf stops before writing anything so a
    typo in a path never produces a half-updated ``out/``.

    ## Example
    ```console
    $ hpcconf build specs/h100.yml      # the file is specs/h100.yaml
    ```

    ## Fix
    Correct the path. ``hpcconf init`` writes a new spec.
    """)

engine_rule(code="HPC003", name="unknown-key", severity=Severity.ERROR, doc="""
    The spec has a key hpcconf does not know; the message suggests the closest valid key.

    ## What it catches
    Any key that is not a field of the spec at that place, e.g. ``placment`` for ``placement``.

    ## Why is this bad?
    A misspelt key is the error that costs days elsewhere: Helm ignores unknown values keys
    without a word (network-operator 24.10 dropped ``deployCR`` from its chart, and values that
    still set it are ignored), so the setting you wrote never takes effect. hpcconf refuses
    instead of ignoring.

    ## Example
    ```yaml
    pools:
      - name: gpu
        sku: Standard_ND96amsr_A100_v4
        count: 2
        placment: {colocate: true}
    ```

    ## Fix
    Use the suggested key; ``hpcconf schema`` lists every field, and the examples' modeline
    (``# yaml-language-server: $schema=...``) makes editors flag it as you type.
    """)

engine_rule(code="HPC004", name="missing-field", severity=Severity.ERROR, doc="""
    A required field is missing from the spec.

    ## What it catches
    Fields without a default (``metadata.location``, a pool's ``sku`` and ``count``). Sections a
    platform needs (``test_image`` for AKS, ``slurm.crusoe`` on Crusoe, ...) reported HPC004
    before 0.2.0 and have their own codes now (``hpcconf explain HPC004`` lists them).

    ## Why is this bad?
    hpcconf would otherwise have to guess values that decide cost and placement (the region,
    the VM size) or emit a job that pulls an image nobody built.

    ## Example
    ```yaml
    metadata:
      name: demo          # no location
    ```

    ## Fix
    Add the field the message names; the hint shows its shape.
    """)

engine_rule(code="HPC005", name="invalid-value", severity=Severity.ERROR, doc="""
    A spec value has the wrong type, format or range.

    ## What it catches
    Numbers out of range (``count: -1``), strings in the wrong format (cluster and pool names
    that Azure or Kubernetes would reject), CIDR ranges that do not parse, unpinned base
    images, non-NCCL keys in ``nccl_env``, values that are not one of a field's choices: each
    field on its own. Checks that relate several fields reported HPC005 before 0.2.0 and have
    their own codes now (``hpcconf explain HPC005`` lists them); ``--ignore HPC005`` and
    ``# hpcconf: ignore[HPC005]`` still name them.

    ## Why is this bad?
    Each of these fails later and further away: a pool name with capitals fails ``az aks
    nodepool add`` after the cluster was created; ``nvcr.io/nvidia/pytorch:latest`` builds a
    different NCCL next month; ``CUDA_DEVICE_ORDER`` in nccl.conf is read too late to matter
    (NCCL reads nccl.conf after CUDA has enumerated the devices).

    ## Example
    ```yaml
    test_image:
      base: nvcr.io/nvidia/pytorch:latest
    ```

    ## Fix
    Change the value as the hint says (here: a dated tag such as ``:24.05-py3`` or a digest).
    """)

engine_rule(code="HPC007", name="unsupported-api-version", severity=Severity.ERROR, doc="""
    The spec's ``apiVersion`` is not one this hpcconf reads.

    ## What it catches
    Any ``apiVersion`` other than ``hpcconf/v1``.

    ## Why is this bad?
    Reading a spec of another format version as if it were this one would silently change
    what the fields mean. hpcconf refuses rather than guesses.

    ## Example
    ```yaml
    apiVersion: hpcconf/v2
    ```

    ## Fix
    Use ``apiVersion: hpcconf/v1``. When a new format exists, ``hpcconf migrate`` converts
    specs and keeps their comments.
    """)

engine_rule(code="HPC100", name="sku-invalid", severity=Severity.ERROR, doc="""
    A SKU catalog file (``skus/*.yaml`` or a ``sku_dirs`` file) does not validate.

    ## What it catches
    Unknown keys, wrong types, facts that contradict each other (NUMA CPUs beyond ``vcpus``,
    ``nvls`` without NVSwitch, a graph without a topology) and a file name that differs from
    the SKU's name.

    ## Why is this bad?
    The catalog is where every generated value starts; one wrong fact (Azure's own ndv4 file
    had NUMA nodes swapped until c3e42913) reaches every artifact of every pool of that size.

    ## Example
    ```yaml
    name: Standard_ND96asr_v4
    nvlink: {present: false, nvswitch: true, description: x}
    ```

    ## Fix
    Start from the package's file for a similar size and change only what differs.
    """)

engine_rule(code="HPC101", name="sku-dir-missing", severity=Severity.ERROR, doc="""
    A SKU directory given with ``sku_dirs`` or ``--sku-dir`` does not exist.

    ## What it catches
    A path in ``sku_dirs`` (relative to the spec) or ``--sku-dir`` that is not a directory.

    ## Why is this bad?
    The SKUs the spec relies on would be missing, or the package's facts used instead of your
    overrides without a word.

    ## Example
    ```yaml
    sku_dirs: [my-skus]    # the directory is ./skus-local
    ```

    ## Fix
    Correct the path; it is relative to the spec file.
    """)
