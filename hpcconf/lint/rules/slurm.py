"""Slurm batch script rules (SLURM): what ``sbatch`` itself refuses before a job exists."""

from __future__ import annotations

import re
from collections.abc import Iterator

from ...artifacts import Kind
from ...diagnostics import Diagnostic, Severity
from ..context import LintContext
from ..document import Document
from ..registry import rule

_SHEBANG_LATER = re.compile(r"^#!", re.MULTILINE)


@rule(code="SLURM001", name="sbatch-no-shebang", severity=Severity.ERROR, kinds=(Kind.SBATCH_SCRIPT,))
def sbatch_no_shebang(doc: Document, ctx: LintContext) -> Iterator[Diagnostic]:
    """A batch script with ``#SBATCH`` directives does not start with ``#!``.

    ## What it catches
    A script holding ``#SBATCH`` lines whose first two bytes are not ``#!``: a licence header or a
    blank line above the shebang, a byte-order mark, or no interpreter line at all.

    ## Why is this bad?
    ``sbatch`` reads the first two bytes and refuses anything else ("This does not look like a batch
    script. The first line must start with #! followed by the path to an interpreter.";
    ``has_shebang()`` in Slurm's ``src/sbatch/sbatch.c``): no job is submitted. NVIDIA NeMo's Azure
    NCCL script (``csp_tools/azure/nccl.sh``) broke this way when a commit put the Apache licence
    header above ``#!/bin/bash``.

    ## Example
    ```bash
    # Copyright (c) 2023, ...
    #!/bin/bash
    #SBATCH --nodes=2
    ```

    ## Fix
    Put the interpreter line first (``#!/bin/bash``), and the licence header below it.
    """
    if doc.text.startswith("#!"):
        return
    later = _SHEBANG_LATER.search(doc.text)
    if doc.text.startswith("\ufeff#!"):
        message, hint = "the script starts with a byte-order mark, so its first bytes are not '#!'", \
            "save it as UTF-8 without BOM"
    elif later is not None:
        line = doc.text.count("\n", 0, later.start()) + 1
        message = f"the interpreter line is line {line}, not the first: sbatch refuses the script"
        hint = "move the #! line to the top, above the header"
    else:
        message, hint = "the script has no '#!' interpreter line: sbatch refuses it", "add #!/bin/bash as line 1"
    yield doc.at_line(1, message, hint=hint)
