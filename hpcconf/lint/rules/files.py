"""File-system findings of the safe reader (hpcconf/safe_io.py), registered so `hpcconf explain` knows them.

Every command reads through that reader; ``lint`` reports these as always-selected error findings
(exit 1), the other commands as located errors (exit 2).
"""

from __future__ import annotations

from ...diagnostics import Severity
from ...rules_registry import engine_rule

engine_rule(code="HPC092", name="special-file", severity=Severity.ERROR, admission=True, doc="""
    A fifo, socket or device was found where a file was expected; it is refused, never opened.

    ## What it catches
    A named pipe, a Unix socket, a character or block device (``nccl.conf`` as a fifo, say), named on
    the command line or found while walking a directory, in every command that reads files.

    ## Why is this bad?
    Reading a fifo blocks until something writes to it, and ``/dev/zero`` never ends: a lint in
    pre-commit or CI would hang with growing memory. No config hpcconf reads is ever one.

    ## Example
    ```console
    $ mkfifo t/nccl.conf && hpcconf lint t
    t/nccl.conf:1:1: error[HPC092] special-file: not read: it is a fifo (named pipe), not a regular file
    ```

    ## Fix
    Remove it, or list it in ``[tool.hpcconf] exclude``.
    """)

engine_rule(code="HPC093", name="link-outside-tree", severity=Severity.ERROR, admission=True, doc="""
    A symbolic link leads outside the tree being read, or into ``/proc``, ``/sys`` or ``/dev``; it is not followed.

    ## What it catches
    A link (or a linked directory on the way to a file) whose target lies outside the directory
    being linted (the working directory for a file named on the command line, the collection
    directory for ``sku import``, the ``--sku-dir``), or anywhere under ``/proc``, ``/sys``, ``/dev``.

    ## Why is this bad?
    Git stores links, so a pull request can carry ``mpi.env -> /proc/self/environ``: following it
    would print the CI job's environment (its secrets) in a finding, and ``nccl.conf -> /etc/passwd``
    would quote that file line by line. The target is neither read nor quoted.

    ## Example
    ```console
    $ ln -s /proc/self/environ t/mpi.env && hpcconf lint t
    t/mpi.env:1:1: error[HPC093] link-outside-tree: not read: it resolves to /proc/..., which is never read
    ```

    ## Fix
    Commit the file itself instead of a link, or point the link at a file inside the repository.
    """)

engine_rule(code="HPC094", name="file-too-large", severity=Severity.ERROR, admission=True, doc="""
    A file is larger than hpcconf reads for its kind; it is refused unread.

    ## What it catches
    A spec or SKU file over 1 MiB, a linted file over 4 MiB, an nccl-tests log or collected node
    file over 16 MiB (docs/security.md lists every limit). The size is taken from the opened file
    (``fstat``) and the read is bounded, so a file that grows while read is cut off too.

    ## Why is this bad?
    No real file of these kinds comes near the limit (a spec is a few KiB, ``nvidia-smi -q -x`` of an
    8-GPU node about 0.3 MiB); a file that does is an attack on the time and memory of the CI job.

    ## Example
    ```console
    $ hpcconf nccl-report huge.log
    huge.log:1:1: error[HPC094] file-too-large: log larger than 16,384 KiB; refused unread
    ```

    ## Fix
    Pass the file the tool wrote (an nccl-tests log holds one table per run), not a concatenation.
    """)

engine_rule(code="HPC095", name="unreadable-directory", severity=Severity.ERROR, doc="""
    A directory inside the linted tree cannot be listed, so nothing below it was checked.

    ## What it catches
    A directory without read or search permission met while walking a tree given to ``hpcconf lint``.

    ## Why is this bad?
    Skipping it would report "no findings" for files that were never looked at: a silent pass.

    ## Example
    ```console
    $ chmod 000 t/secret && hpcconf lint t
    t/secret: error[HPC095] unreadable-directory: cannot list this directory (Permission denied)
    ```

    ## Fix
    Fix its permissions, or list it in ``[tool.hpcconf] exclude``.
    """)

engine_rule(code="HPC096", name="unsafe-name", severity=Severity.ERROR, doc="""
    A name that would become a file name is not one: ``sku import`` refuses it before writing anything.

    ## What it catches
    A SKU name (``--name``, or the ``compute.vmSize`` the node's instance metadata reports) that does
    not fit the catalog's name grammar: letters, digits, ``_``, ``.``, ``-``, starting with a letter or
    digit, at most 100 characters, no ``..``; or one that is not a string at all (``5``, ``["a"]``, ``NaN``).

    ## Why is this bad?
    The SKU file is written as ``DIR/<name>.yaml``: ``"../../escaped"`` would write two directories
    above ``-o``, and a newline in the name would inject lines into the file's YAML header. The
    collection comes from a node, so its metadata is untrusted input.

    ## Example
    ```console
    $ hpcconf sku import node-facts -o skus/
    node-facts/azure-imds.json:3:1: error[HPC096] unsafe-name: the node reports compute.vmSize '../../escaped' is not a SKU name
    ```

    ## Fix
    Pass ``--name NAME`` with a name such as ``lab-h100-8x``, and collect the node's facts again.
    """)
