"""NCCL config-file rules: how ``param.cc`` actually reads ``/etc/nccl.conf`` and ``~/.nccl.conf``.

NCCL reads these files with its own tiny reader (NVIDIA/nccl ``src/misc/param.cc``): a line is skipped
only when it *starts* with ``#`` or has no ``=``; the key is every byte before the first
``=``, the value every byte after it. Nothing is trimmed, quoted or expanded, and each
line is applied with ``setenv(key, value, 0)``: the environment and earlier lines win.
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import TYPE_CHECKING, Iterable, Iterator

from ...artifacts import Kind
from ...diagnostics import Diagnostic, Severity
from ...rules_registry import rule
from ..context import LintContext
from ..document import Document, DocumentSet

if TYPE_CHECKING:
    from ...catalog import Sku
    from ...parsers.nccl_conf import ConfFile, ConfProblem


def _parsed(doc: Document) -> ConfFile:
    """The file as ``hpcconf.parsers.nccl_conf`` (a port of NCCL's param.cc) reads it, parsed once."""
    parsed = doc.__dict__.get("_nccl_conf")
    if parsed is None:
        from ...parsers.nccl_conf import parse_nccl_conf

        parsed = doc.__dict__["_nccl_conf"] = parse_nccl_conf(doc.text)
    return parsed


def _problems(doc: Document, *kinds: str) -> list[ConfProblem]:
    """The traps the parser found in this file, of the given kinds."""
    return [p for p in _parsed(doc).problems if p.kind in kinds]


def _yield(doc: Document, problems: Iterable[ConfProblem]) -> Iterator[Diagnostic]:
    for problem in problems:
        yield doc.at_line(problem.line, problem.message, hint=problem.hint, column=problem.column,
                          end_column=problem.end_column)


@rule(code="NCCL001", name="nccl-conf-space-around-equals", severity=Severity.ERROR, kinds=(Kind.NCCL_CONF,))
def space_around_equals(doc: Document, ctx: LintContext) -> Iterator[Diagnostic]:
    """An nccl.conf line has spaces around ``=`` or around its value, which NCCL keeps.

    ## What it catches
    Lines such as ``NCCL_ALGO = Ring``, `` NCCL_DEBUG=WARN`` or ``NCCL_IB_HCA=mlx5_0 `` (trailing
    blank) in a file NCCL reads as its config file.

    ## Why is this bad?
    NCCL's config reader (``src/misc/param.cc``) trims nothing: ``NCCL_ALGO = Ring`` sets a
    variable named ``"NCCL_ALGO "`` to ``" Ring"``. NCCL never reads that name, so the setting is
    silently lost. Measured with NCCL 2.28.9 on 2 x H200: ``NCCL_ALGO = Bogus`` in nccl.conf
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
    yield from _yield(doc, _problems(doc, "spaces-around-eq", "leading-space", "trailing-space"))


@rule(code="NCCL002", name="nccl-conf-inline-comment", severity=Severity.ERROR, kinds=(Kind.NCCL_CONF,))
def inline_comment(doc: Document, ctx: LintContext) -> Iterator[Diagnostic]:
    """An nccl.conf value has a trailing ``# comment``, which NCCL reads as part of the value.

    ## What it catches
    ``KEY=VALUE # comment`` lines in nccl.conf. Only lines that *start* with ``#`` are comments there.

    ## Why is this bad?
    ``param.cc`` takes every byte after ``=`` as the value, so ``NCCL_ALGO=Ring # fast`` asks for an
    algorithm called ``"Ring # fast"``. Since NCCL 2.24 an unknown algorithm or protocol is fatal:
    NCCL 2.28.9 (measured on 2 x H200) failed init with ``NCCL_ALGO=Ring # inline comment``. Integer
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
    yield from _yield(doc, _problems(doc, "inline-comment"))


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
    yield from _yield(doc, _problems(doc, "export", "quoted"))
    for entry in _parsed(doc).entries:
        if re.search(r"\$\{?[A-Za-z_]", entry.value):
            yield doc.at_line(entry.line, f"{entry.key.strip()} uses a shell variable: NCCL does not expand '$' in "
                                          f"nccl.conf", hint="write the literal path or value",
                              column=entry.value_column, end_column=entry.value_end_column)


@rule(code="NCCL004", name="nccl-conf-non-nccl-key", severity=Severity.WARNING, kinds=(Kind.NCCL_CONF,))
def non_nccl_key(doc: Document, ctx: LintContext) -> Iterator[Diagnostic]:
    """nccl.conf sets a variable that is not NCCL's (``CUDA_DEVICE_ORDER``, ``UCX_*``): too late to matter.

    ## What it catches
    Keys in nccl.conf that do not start with ``NCCL_``.

    ## Why is this bad?
    NCCL applies nccl.conf with ``setenv`` when it initialises (``param.cc``), long after CUDA,
    MPI and UCX have read their environment. ``CUDA_DEVICE_ORDER=PCI_BUS_ID`` there changes nothing
    for the process; Azure's HPC image put it in ``/etc/nccl.conf`` until 2022-08 (Azure/azhpc-images
    history), and the jobs of jingchaozhang.github.io's NDm A100 v4 AKS walkthrough (2023) pass it with ``mpirun -x``
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
    yield from _yield(doc, _problems(doc, "not-nccl-key"))


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
    yield from _yield(doc, _problems(doc, "no-equals"))


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
    yield from _yield(doc, _problems(doc, "duplicate"))


@rule(code="NCCL007", name="nccl-conf-misread", severity=Severity.ERROR, kinds=(Kind.NCCL_CONF,))
def misread(doc: Document, ctx: LintContext) -> Iterator[Diagnostic]:
    """An nccl.conf line that NCCL reads differently from how it looks (CRLF, bad name, over-long).

    ## What it catches
    Windows line endings (the ``\\r`` stays in the value), keys that are not valid variable
    names or are empty (``=value``), keys or values longer than 1023 bytes (cut), and lines longer
    than 4095 bytes (split by NCCL builds that read with a 4096-byte buffer).

    ## Why is this bad?
    ``param.cc`` strips only the ``\\n``: a file saved on Windows sets ``NCCL_SOCKET_IFNAME`` to
    ``"eth0\\r"``, which matches no interface, and NCCL falls back to another one or fails to
    bootstrap. Over-long fields are silently truncated into a different value.

    ## Example
    ```text
    NCCL_SOCKET_IFNAME=eth0\r
    NCCL-DEBUG=INFO
    ```

    ## Fix
    Save the file with LF line endings, use ``[A-Za-z_][A-Za-z0-9_]*`` names, keep values short.
    """
    yield from _yield(doc, _problems(doc, "crlf", "invalid-key", "empty-key", "truncated", "long-line"))


def _conf_role(doc: Document) -> str:
    """'user' for ~/.nccl.conf-style files (NCCL_CONF_FILE or .nccl.conf), else 'system' (/etc/nccl.conf)."""
    name = doc.origin.name
    return "user" if name.startswith(".") else "system"


def _same_pool(a: Document, b: Document) -> bool:
    """In hpcconf's output tree per-pool files sit in ``<family>/<pool>/``: different pools are different nodes."""
    root = a.cluster_root
    if root is None or root != b.cluster_root:
        return True
    return Path(a.source_path).parent.name == Path(b.source_path).parent.name


@rule(code="NCCL008", name="nccl-conf-setting-shadowed", severity=Severity.WARNING, kinds=(Kind.NCCL_CONF,),
      scope="set")
def setting_shadowed(docs: DocumentSet, ctx: LintContext) -> Iterator[Diagnostic]:
    """An nccl.conf line that never takes effect: the job environment or an earlier file sets it too.

    ## What it catches
    Among files linted together (for the same SKU): an ``NCCL_*`` key in ``/etc/nccl.conf`` or
    ``~/.nccl.conf`` that a host-side job environment (env file, ``export`` or ``mpirun -x`` in a
    shell or batch script) sets to another value, and a key of ``/etc/nccl.conf`` that
    ``~/.nccl.conf`` (any ``.nccl.conf``, the ``NCCL_CONF_FILE`` form) sets differently.
    Container environments are left out: a container reads its image's nccl.conf, not the host's.

    ## Why is this bad?
    NCCL applies the user file, then ``/etc/nccl.conf``, each line with ``setenv(key, value, 0)``
    (``param.cc``): whatever is already set wins. NCCL 2.28.9 (measured on 2 x H200) ran fine with ``NCCL_ALGO=Bogus`` in
    nccl.conf because the environment had ``NCCL_ALGO=Ring``. Editing the
    conf file then changes nothing, which is how a topology file "fix" in ``/etc/nccl.conf`` goes
    unnoticed while every job still passes the old path with ``-x``.

    ## Example
    ```text
    # /etc/nccl.conf
    NCCL_TOPO_FILE=/opt/microsoft/ndv4/topo.xml
    # job.sbatch
    export NCCL_TOPO_FILE=/shared/ndv4-topo.xml
    ```

    ## Fix
    Set each variable in one place: keep node defaults in ``/etc/nccl.conf`` and only
    deliberate overrides in jobs, or delete the dead line.
    """
    from ..settings import env_settings

    conf_docs = docs.of_kind(Kind.NCCL_CONF)
    # Host-side environments only: a container (Kubernetes env, Dockerfile ENV) does not read the
    # host's nccl.conf, so its settings cannot shadow it.
    env_docs = docs.of_kind(Kind.ENV_FILE, Kind.SHELL_SCRIPT, Kind.SBATCH_SCRIPT)
    for conf in conf_docs:
        sku = conf.context_or(ctx).sku
        def same_target(other: Document, conf: Document = conf, sku: Sku | None = sku) -> bool:
            return other.context_or(ctx).sku is sku and _same_pool(conf, other)

        earlier: dict[str, tuple[str, str]] = {}
        for env_doc in filter(same_target, env_docs):
            for setting in env_settings(env_doc, "NCCL_"):
                earlier.setdefault(setting.name, (setting.value, f"{env_doc.path}:{setting.line} (job environment)"))
        if _conf_role(conf) == "system":
            for user in (d for d in conf_docs if _conf_role(d) == "user" and same_target(d)):
                for setting in env_settings(user, "NCCL_"):
                    earlier.setdefault(setting.name, (setting.value, f"{user.path}:{setting.line} (user nccl.conf)"))
        seen: set[str] = set()
        for setting in env_settings(conf, "NCCL_"):
            if setting.name in seen or setting.name not in earlier:
                continue
            seen.add(setting.name)
            value, where = earlier[setting.name]
            if value != setting.value:
                yield conf.at_line(setting.line, f"{setting.name}={setting.value} never takes effect: {where} sets "
                                                 f"{setting.name}={value}, and NCCL keeps the value set first",
                                   hint="set it in one place, or delete this line")
