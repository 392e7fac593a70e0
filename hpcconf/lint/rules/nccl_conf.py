"""NCCL config-file rules: how ``param.cc`` actually reads ``/etc/nccl.conf`` and ``~/.nccl.conf``.

NCCL reads these files with its own tiny reader (research/nccl.md §3): a line is skipped
only when it *starts* with ``#`` or has no ``=``; the key is every byte before the first
``=``, the value every byte after it. Nothing is trimmed, quoted or expanded, and each
line is applied with ``setenv(key, value, 0)``: the environment and earlier lines win.
"""

from __future__ import annotations

import re
from typing import Iterator

from ...artifacts import Kind
from ...diagnostics import Diagnostic, Severity
from ..context import LintContext
from ..document import Document
from ..registry import rule


@rule(code="NCCL001", name="nccl-conf-space-around-equals", severity=Severity.ERROR, kinds=(Kind.NCCL_CONF,))
def space_around_equals(doc: Document, ctx: LintContext) -> Iterator[Diagnostic]:
    """An nccl.conf line has spaces around ``=`` or around its value, which NCCL keeps.

    ## What it catches
    Lines such as ``NCCL_ALGO = Ring``, `` NCCL_DEBUG=WARN`` or ``NCCL_IB_HCA=mlx5_0 `` (trailing
    blank) in a file NCCL reads as its config file.

    ## Why is this bad?
    NCCL's config reader (``src/misc/param.cc``) trims nothing: ``NCCL_ALGO = Ring`` sets a
    variable named ``"NCCL_ALGO "`` to ``" Ring"``. NCCL never reads that name, so the setting is
    silently lost. The probe in research/nccl.md §9 shows it: ``NCCL_ALGO = Bogus`` in nccl.conf
    ran without error, while ``NCCL_ALGO=Bogus`` failed init. A blank inside a value is kept as
    well and breaks name matching (``mlx5_0 `` matches no HCA).

    ## Example
    ```text
    NCCL_ALGO = Ring
    NCCL_DEBUG=WARN 
    ```

    ## Fix
    Write ``KEY=VALUE`` with nothing around the ``=`` and no leading or trailing blanks:
    ```text
    NCCL_ALGO=Ring
    NCCL_DEBUG=WARN
    ```
    """
    for entry in doc.conf.entries:
        key_padded = entry.key != entry.key.strip()
        value_padded = entry.value != entry.value.strip()
        if not (key_padded or value_padded):
            continue
        shown = f"{entry.name}={entry.value.strip()}"
        where = "around the key" if key_padded else "around the value"
        effect = (f"NCCL sets a variable named {entry.key!r}, not {entry.name!r}, so this line has no effect"
                  if key_padded else f"NCCL uses the value {entry.value!r} with the blanks")
        yield doc.at_line(entry.line, f"blank {where} in {entry.raw.strip()!r}: {effect}",
                          hint=f"write `{shown}`")


@rule(code="NCCL002", name="nccl-conf-inline-comment", severity=Severity.ERROR, kinds=(Kind.NCCL_CONF,))
def inline_comment(doc: Document, ctx: LintContext) -> Iterator[Diagnostic]:
    """An nccl.conf value has a trailing ``# comment``, which NCCL reads as part of the value.

    ## What it catches
    ``KEY=VALUE # comment`` lines in nccl.conf. Only lines that *start* with ``#`` are comments there.

    ## Why is this bad?
    ``param.cc`` takes every byte after ``=`` as the value, so ``NCCL_ALGO=Ring # fast`` asks for an
    algorithm called ``"Ring # fast"``. Since NCCL 2.24 an unknown algorithm or protocol is fatal:
    the probe in research/nccl.md §9 failed init with ``NCCL_ALGO=Ring # inline comment``. Integer
    settings silently keep their leading digits (``strtoll``), names such as NCCL_SOCKET_IFNAME
    match nothing.

    ## Example
    ```text
    NCCL_ALGO=Ring # ring is faster here
    ```

    ## Fix
    Put the comment on its own line above the setting:
    ```text
    # ring is faster here
    NCCL_ALGO=Ring
    ```
    """
    for entry in doc.conf.entries:
        position = entry.value.find("#")
        if position < 0:
            continue
        column = entry.value_column + position
        value = entry.value[:position].strip()
        yield doc.at_line(entry.line, f"'#' inside the value of {entry.name}: NCCL reads the value as "
                                      f"{entry.value!r}, comment included",
                          hint=f"move the comment to its own line and write `{entry.name}={value}`",
                          column=column)


@rule(code="NCCL003", name="nccl-conf-shell-syntax", severity=Severity.ERROR, kinds=(Kind.NCCL_CONF,))
def shell_syntax(doc: Document, ctx: LintContext) -> Iterator[Diagnostic]:
    """An nccl.conf line uses shell syntax (``export``, quotes, ``$VAR``) that NCCL does not understand.

    ## What it catches
    ``export NCCL_X=1``, ``NCCL_X="1"``, ``NCCL_X='1'`` and ``NCCL_X=$OTHER`` in nccl.conf.

    ## Why is this bad?
    nccl.conf is not a shell script: NCCL has no ``export``, no quoting and no variable expansion
    (``param.cc``). ``export NCCL_DEBUG=INFO`` sets a variable literally named ``"export NCCL_DEBUG"``
    (ignored); ``NCCL_SOCKET_IFNAME="eth0"`` looks for an interface whose name starts with a quote;
    ``$HOME/topo.xml`` is opened as written.

    ## Example
    ```text
    export NCCL_DEBUG=INFO
    NCCL_SOCKET_IFNAME="eth0"
    ```

    ## Fix
    Plain ``KEY=VALUE`` with the literal value:
    ```text
    NCCL_DEBUG=INFO
    NCCL_SOCKET_IFNAME=eth0
    ```
    """
    for entry in doc.conf.entries:
        key = entry.key.strip()
        value = entry.value.strip()
        if key.startswith("export ") or key.startswith("export\t"):
            name = key.split(None, 1)[1] if len(key.split(None, 1)) > 1 else key
            yield doc.at_line(entry.line, f"'export' in nccl.conf: NCCL sets a variable named {entry.key!r}, "
                                          f"not {name}", hint=f"remove `export `: `{name}={value}`")
        elif len(value) >= 2 and value[0] == value[-1] and value[0] in "\"'":
            yield doc.at_line(entry.line, f"quotes around the value of {key}: NCCL keeps them as part of the value",
                              hint=f"write `{key}={value[1:-1]}`", column=entry.value_column)
        elif re.search(r"\$\{?[A-Za-z_]", value):
            yield doc.at_line(entry.line, f"{key} uses a shell variable: NCCL does not expand '$' in nccl.conf",
                              hint="write the literal path or value", column=entry.value_column)


@rule(code="NCCL004", name="nccl-conf-non-nccl-key", severity=Severity.WARNING, kinds=(Kind.NCCL_CONF,))
def non_nccl_key(doc: Document, ctx: LintContext) -> Iterator[Diagnostic]:
    """nccl.conf sets a variable that is not NCCL's (``CUDA_DEVICE_ORDER``, ``UCX_*``): too late to matter.

    ## What it catches
    Keys in nccl.conf that do not start with ``NCCL_``.

    ## Why is this bad?
    NCCL applies nccl.conf with ``setenv`` when it initialises (``param.cc``), long after CUDA,
    MPI and UCX have read their environment. ``CUDA_DEVICE_ORDER=PCI_BUS_ID`` there changes nothing
    for the process; Azure's HPC image put it in ``/etc/nccl.conf`` until 2022-08 (legacy conf in
    shared/upstream/nccl/azhpc-images/nccl-conf/), and seed 000's jobs pass it with ``mpirun -x``
    instead, which works.

    ## Example
    ```text
    CUDA_DEVICE_ORDER=PCI_BUS_ID
    NCCL_TOPO_FILE=/opt/microsoft/ndv4-topo.xml
    ```

    ## Fix
    Set non-NCCL variables in the job environment (``export`` in the batch script, ``-x`` for
    mpirun, ``env:`` in a Kubernetes container) and keep only ``NCCL_*`` in nccl.conf.
    """
    for entry in doc.conf.entries:
        name = entry.name
        if name.startswith("NCCL_") or name.startswith("export ") or " " in name:
            continue
        yield doc.at_line(entry.line, f"{name} in nccl.conf is applied when NCCL initialises, after CUDA/MPI/UCX "
                                      f"have read their environment: it has no effect",
                          hint=f"set {name} in the job environment instead (export, mpirun -x, container env)",
                          column=entry.key_column, end_column=entry.key_column + len(entry.key))


@rule(code="NCCL005", name="nccl-conf-line-ignored", severity=Severity.WARNING, kinds=(Kind.NCCL_CONF,))
def line_ignored(doc: Document, ctx: LintContext) -> Iterator[Diagnostic]:
    """An nccl.conf line has no ``=`` and is silently skipped.

    ## What it catches
    Non-blank lines that neither start with ``#`` nor contain ``=``, such as ``NCCL_DEBUG WARN``
    or an indented comment `` # note``.

    ## Why is this bad?
    NCCL skips any line without ``=`` without a message (``param.cc``), so a setting written with a
    blank instead of ``=`` is lost. An indented ``#`` line is not a comment to NCCL either; it is only
    harmless while it has no ``=``.

    ## Example
    ```text
    NCCL_DEBUG WARN
    ```

    ## Fix
    Write ``NCCL_DEBUG=WARN``; start comments in the first column.
    """
    for number, line in enumerate(doc.text.split("\n"), start=1):
        stripped = line.rstrip("\r")
        if not stripped.strip() or stripped.startswith("#") or "=" in stripped:
            continue
        if stripped.lstrip().startswith("#"):
            message = "indented comment: NCCL treats only lines starting with '#' as comments"
            hint = "start the comment in the first column"
        else:
            message = f"line without '=' is ignored by NCCL: {stripped.strip()!r}"
            words = stripped.split()
            hint = f"write `{words[0]}={' '.join(words[1:])}`" if len(words) > 1 else "write KEY=VALUE"
        yield doc.at_line(number, message, hint=hint)


@rule(code="NCCL006", name="nccl-conf-duplicate-key", severity=Severity.WARNING, kinds=(Kind.NCCL_CONF,))
def duplicate_key(doc: Document, ctx: LintContext) -> Iterator[Diagnostic]:
    """nccl.conf sets the same variable twice; NCCL keeps the *first* value.

    ## What it catches
    A key that appears on more than one line of one nccl.conf.

    ## Why is this bad?
    Each line is applied with ``setenv(key, value, 0)`` (``param.cc``), which never overwrites, so
    the first line wins: the opposite of a shell script, where the last assignment wins. Editing
    the value at the bottom of the file then changes nothing.

    ## Example
    ```text
    NCCL_DEBUG=WARN
    NCCL_DEBUG=INFO
    ```

    ## Fix
    Keep one line per variable.
    """
    first: dict[str, int] = {}
    for entry in doc.conf.entries:
        if entry.key in first:
            yield doc.at_line(entry.line, f"{entry.name} is already set on line {first[entry.key]}; NCCL keeps that "
                                          f"first value and ignores this one",
                              hint="delete one of the two lines")
        else:
            first[entry.key] = entry.line
