"""Dockerfile rules for NCCL test / training images (hadolint-style, NCCL-aware)."""

from __future__ import annotations

import posixpath
import re
from typing import Iterator

from ...artifacts import Kind
from ...diagnostics import Diagnostic, Severity
from ...knowledge.base_images import BaseImageRole, base_image_role, base_may_set
from ...parsers.dockerfile import Instruction, copied_files, expand, parse_env_arguments, workdir_copies
from ...parsers.shell_words import split_words
from ...rules_registry import rule
from ..context import LintContext
from ..document import Document, DocumentSet
from ..settings import SETTING_KINDS, env_settings

_APT_INSTALL = re.compile(r"\bapt(?:-get)?\s+(?:[^&|;]*\s)?install\b")
_APT_UPDATE = re.compile(r"\bapt(?:-get)?\s+(?:-\S+\s+)*update\b")
_APT_CLEAN = re.compile(r"rm\s+-(?:rf|fr|r)\s+[^&|;]*?/var/lib/apt/lists")
# A script that installs packages itself (and so uses the lists an update in the same RUN fetched).
_RUNS_INSTALLER = re.compile(r"(?:^|[\s;&|(/])(?:\S*install\S*\.sh|mlnxofedinstall|doca-\S*install\S*|\./\S+\.sh)\b")
_BARE_APT = re.compile(r"(?:^|[;&|]\s*|\s)apt\s+(?:-\S+\s+)*(?:update|install|upgrade|dist-upgrade|remove)\b")


def _line_of(doc: Document, instruction: Instruction, needle: str) -> tuple[int, int]:
    """Line and column of ``needle`` inside a (possibly continued) instruction."""
    for number in range(instruction.line, instruction.end_line + 1):
        column = doc.lines[number - 1].find(needle)
        if column >= 0:
            return number, column + 1
    return instruction.line, instruction.column


def _at(doc: Document, instruction: Instruction, message: str, hint: str, needle: str | None = None,
        severity: Severity | None = None) -> Diagnostic:
    line, column = _line_of(doc, instruction, needle) if needle else (instruction.line, instruction.column)
    end = column + len(needle) if needle else None
    if severity is None:
        return doc.at_line(line, message, hint=hint, column=column, end_column=end)
    return doc.at_line(line, message, hint=hint, column=column, end_column=end, severity=severity)


def _stages(instructions: list[Instruction]) -> list[tuple[str, str, list[Instruction]]]:
    """(name, base image, instructions) per build stage, in order; the name is "" when unnamed."""
    stages: list[tuple[str, str, list[Instruction]]] = []
    for instruction in instructions:
        if instruction.keyword == "FROM":
            words = [w for w in instruction.arguments.split() if not w.startswith("--")]
            named = len(words) >= 3 and words[1].lower() == "as"
            stages.append((words[2].lower() if named else "", words[0].lower() if words else "", [instruction]))
        elif stages:
            stages[-1][2].append(instruction)
    return stages


def final_image_runs(doc: Document) -> list[Instruction]:
    """The RUN instructions whose layers end up in the image that is built: those of the last stage and of
    the stages it is built ``FROM`` in turn. A builder stage's layers are discarded (``COPY --from`` takes
    files, not layers), so what they leave behind costs nothing."""
    stages = _stages(doc.dockerfile.instructions)
    if not stages:
        return []
    by_name = {name: (base, body) for name, base, body in stages if name}
    chain: list[list[Instruction]] = []
    _, base, body = stages[-1]
    seen: set[str] = set()
    while True:
        chain.insert(0, body)
        if base not in by_name or base in seen:
            break
        seen.add(base)
        base, body = by_name[base]
    return [i for body in chain for i in body if i.keyword == "RUN"]


@rule(code="DKR001", name="dockerfile-base-image-unpinned", severity=Severity.WARNING, kinds=(Kind.DOCKERFILE,))
def base_image_unpinned(doc: Document, ctx: LintContext) -> Iterator[Diagnostic]:
    """``FROM`` uses an image without a tag, or ``:latest`` (after expanding ``ARG`` defaults).

    ## What it catches
    ``FROM image`` and ``FROM image:latest``, also through ``ARG FROM_IMAGE_NAME=...`` defaults;
    a digest (``@sha256:...``) or a versioned tag passes. Stage names (``FROM build``) are skipped.

    ## Why is this bad?
    The NCCL version, CUDA and MPI inside the image come from the base image. With ``latest``
    every rebuild can bring another NCCL, so busbw numbers (e.g. the ~186-189 GB/s expected on two
    NDm A100 v4 nodes in the published 2023 AKS walkthroughs) stop being comparable, and version-specific settings
    (``NCCL_ALGO`` tokens, fatal since 2.24) break without a change in your files. Those
    walkthroughs (jingchaozhang.github.io and the Azure HPC blog) pin ``nvcr.io/nvidia/pytorch:23.03-py3`` through an ``ARG`` default (hadolint DL3006/DL3007).

    ## Severity
    Warning where the base decides the collective stack (``hpcconf/knowledge/base_images.py``): NVIDIA's,
    AMD's and framework images, or an OS image the Dockerfile installs NCCL/CUDA/MPI on. The build works,
    but every rebuild may bring another NCCL/CUDA/MPI, so the busbw measured and the version-specific
    settings stop holding (Docker resolves `latest` at build time). Info for a base that carries no
    stack (distroless, static: reproducibility only) and for a bare name no registry serves
    (``pplx-garden-dev:latest``: usually built locally one step earlier, nothing to pin).

    ## Example
    ```dockerfile
    FROM nvcr.io/nvidia/pytorch:latest
    ```

    ## Fix
    Pin a release tag or digest: ``FROM nvcr.io/nvidia/pytorch:23.03-py3``.
    """
    model = doc.dockerfile
    defaults = model.arg_defaults()
    stages: set[str] = set()
    for instruction in model.of("FROM"):
        words = [w for w in instruction.arguments.split() if not w.startswith("--")]
        if not words:
            continue
        image = expand(words[0], defaults)
        if len(words) >= 3 and words[1].lower() == "as":
            stages.add(words[2].lower())
        if image.lower() in stages or image == "scratch" or "$" in image:
            continue
        name, _, digest = image.partition("@")
        tag = name.rsplit(":", 1)[1] if ":" in name.rsplit("/", 1)[-1] else ""
        if digest:
            continue
        if not tag or tag == "latest":
            shown = f"{image} (from ARG default {words[0]})" if image != words[0] else image
            role = base_image_role(image, doc.text)
            moving = f"{'no tag means latest' if not tag else 'latest'} changes under you"
            if role is BaseImageRole.DECIDES_STACK:
                yield _at(doc, instruction, f"base image {shown} is not pinned: {moving}",
                          hint="pin a release tag or a digest, e.g. nvcr.io/nvidia/pytorch:23.03-py3")
            elif role is BaseImageRole.NO_STACK:
                yield _at(doc, instruction, f"base image {shown} is not pinned: {moving} (it carries no "
                                            "collective stack: reproducibility only)",
                          hint="pin a release tag or a digest", severity=Severity.INFO)
            else:
                yield _at(doc, instruction, f"base image {shown} is not pinned, unless it is built locally "
                                            "by the same recipe (no registry serves a bare name like this)",
                          hint="pin the tag that the build of this image writes", severity=Severity.INFO)


@rule(code="DKR002", name="dockerfile-apt-lists-not-cleaned", severity=Severity.INFO, kinds=(Kind.DOCKERFILE,))
def apt_lists_not_cleaned(doc: Document, ctx: LintContext) -> Iterator[Diagnostic]:
    """A ``RUN`` that installs apt packages leaves ``/var/lib/apt/lists`` in the layer.

    ## What it catches
    A ``RUN`` of the built image that runs ``apt-get update`` and ``apt-get install`` (or ``apt``)
    but does not also remove ``/var/lib/apt/lists/*``; reported once per image, at the first such
    layer. The lists are written by ``update``: a ``RUN`` that only installs adds none, and an
    ``update`` in a layer of its own is DKR003's finding. Layers of builder stages that the final
    image does not build ``FROM`` are discarded and not judged.

    ## Why is this bad?
    The package lists (tens of MB) stay in that layer forever, in every pull to every GPU node;
    removing them in a later ``RUN`` does not shrink the image (hadolint DL3009).

    ## Severity
    Info: nothing fails and nothing on the GPU nodes runs slower; the image is larger (hadolint DL3009).

    ## Example
    ```dockerfile
    RUN apt-get update && apt-get -y install infiniband-diags
    ```

    ## Fix
    Update, install and clean in one ``RUN``:
    ```dockerfile
    RUN apt-get update && apt-get install -y --no-install-recommends infiniband-diags \\
        && rm -rf /var/lib/apt/lists/*
    ```
    """
    for instruction in final_image_runs(doc):
        command = instruction.arguments
        if _APT_UPDATE.search(command) and _APT_INSTALL.search(command) and not _APT_CLEAN.search(command):
            yield _at(doc, instruction, "apt package lists are left in this layer of the image",
                      hint="end the same RUN with `&& rm -rf /var/lib/apt/lists/*`")
            return  # one finding per image: the fix is the same wherever the lists were written


def _installs(command: str) -> bool:
    return bool(_APT_INSTALL.search(command) or _RUNS_INSTALLER.search(command))


def _reuses_lists(later_runs: list[Instruction]) -> bool:
    """Whether the first later RUN that installs does so from the cached lists (it updates none itself)."""
    for run in later_runs:
        if _installs(run.arguments):
            return not _APT_UPDATE.search(run.arguments)
    return False


@rule(code="DKR003", name="dockerfile-apt-update-alone", severity=Severity.WARNING, kinds=(Kind.DOCKERFILE,))
def apt_update_alone(doc: Document, ctx: LintContext) -> Iterator[Diagnostic]:
    """``apt-get update`` runs in its own ``RUN``, apart from the ``install`` that needs it.

    ## What it catches
    A ``RUN`` of the built image (not of a discarded builder stage) that updates the package lists
    and leaves them in its layer without using them: no ``install`` in the same command (an ``upgrade`` there
    still leaves the lists for a later install),
    no installer script run there (``efa_installer.sh``, ``./install.sh``, ``mlnxofedinstall``: they
    install with apt-get themselves), and the lists not removed (``rm -rf /var/lib/apt/lists``) before
    the layer is committed, when the next ``RUN`` that installs does not update the lists itself (it is the
    one that reuses the cached lists).
    Reported once per image.

    ## Why is this bad?
    Docker caches the update layer: after the first build, a changed ``install`` line reuses
    package lists from whenever that layer was built, and fails with 404s or installs outdated
    packages. Docker's Dockerfile best practices therefore put update and install in one ``RUN``
    ("cache busting"); the published 2023 NDm A100 v4 AKS walkthroughs start with ``RUN apt update`` on its own.

    ## Severity
    Warning: Docker's layer cache serves the old lists to a later install, which then fails with 404s or
    installs outdated packages (Docker's Dockerfile best practices, "cache busting").

    ## Example
    ```dockerfile
    RUN apt update
    RUN apt-get -y install build-essential
    ```

    ## Fix
    ``RUN apt-get update && apt-get install -y build-essential && rm -rf /var/lib/apt/lists/*``.
    """
    runs = final_image_runs(doc)
    for index, instruction in enumerate(runs):
        command = instruction.arguments
        if _APT_UPDATE.search(command) and not _installs(command) \
                and not _APT_CLEAN.search(command) and _reuses_lists(runs[index + 1:]):
            yield _at(doc, instruction, "package lists are updated in a layer of their own; later installs "
                                        "reuse the cached, ageing lists",
                      hint="combine: RUN apt-get update && apt-get install -y ... && rm -rf /var/lib/apt/lists/*")
            return  # one finding per image


@rule(code="DKR004", name="dockerfile-apt-in-script", severity=Severity.INFO, kinds=(Kind.DOCKERFILE,))
def apt_in_script(doc: Document, ctx: LintContext) -> Iterator[Diagnostic]:
    """``RUN apt ...`` uses the interactive ``apt`` front end instead of ``apt-get``.

    ## What it catches
    ``apt update`` / ``apt install`` / ``apt upgrade`` in ``RUN`` instructions.

    ## Why is this bad?
    ``apt`` warns "does not have a stable CLI interface. Use with caution in scripts" and may
    change behaviour between releases (hadolint DL3027). It is info: the build works today (apt(8)
    only prints the warning); nothing is lost on the platform until a release changes the CLI. The published 2023 NDm A100 v4 AKS walkthroughs
    run ``RUN apt update``.

    ## Severity
    Info: apt(8) only warns that its CLI is not stable in scripts; the build works today.

    ## Example
    ```dockerfile
    RUN apt update
    ```

    ## Fix
    Use ``apt-get`` (``apt-get update``, ``apt-get install -y``).
    """
    for instruction in doc.dockerfile.of("RUN"):
        match = _BARE_APT.search(instruction.arguments)
        if match:
            yield _at(doc, instruction, "`apt` is meant for interactive use; its CLI is not stable in scripts",
                      hint="use apt-get", needle="apt ")


def _looks_like_topology(path: str) -> bool:
    name = posixpath.basename(path).lower()
    return name.endswith(".xml") and ("topo" in name or "graph" in name)


@rule(code="DKR005", name="dockerfile-topo-file-path", severity=Severity.WARNING, kinds=(Kind.DOCKERFILE,),
      scope="set")
def topo_file_path(docs: DocumentSet, ctx: LintContext) -> Iterator[Diagnostic]:
    """The topology file the image ships and the ``NCCL_TOPO_FILE`` that should point at it do not meet.

    ## What it catches
    ``ENV NCCL_TOPO_FILE=/path`` with no ``COPY``/``ADD`` putting a file at that path (a missing
    topology file is silently ignored), and a copied ``*topo*.xml`` that nothing points at: no
    ``ENV`` in the image and no job, script or conf file linted with it (Volcano ``mpirun -x``,
    container ``env:``, nccl.conf) sets ``NCCL_TOPO_FILE`` to where the file lands; worst when the
    destination is relative and only the base image's ``WORKDIR`` decides where that is.

    ## Why is this bad?
    NCCL treats a missing ``NCCL_TOPO_FILE`` as "detect it yourself" with an INFO line only
    (NCCL 2.28.9 on 2 x H200: 326 GB/s, no error), so a path typo costs the tuning the file
    was meant to give. The published 2023 NDm A100 v4 AKS walkthroughs ``COPY ndv4-topo.xml .`` without ``WORKDIR`` and rely on
    every job passing ``-x NCCL_TOPO_FILE=/workspace/ndv4-topo.xml``, which holds only while the
    NGC base image keeps ``WORKDIR /workspace``.

    ## Severity
    Warning: NCCL ignores a missing topology file with an INFO line and detects the topology itself
    (NVIDIA/nccl `src/graph/topo.cc`); the job runs without the tuning the file gives. Info where the file
    is copied relative to the base image's WORKDIR and a consumer of the deployment uses it at a path
    in one directory (a job's ``NCCL_TOPO_FILE``, or Azure NHC's ``check_nccl_allreduce ... /workspace/ndv4-topo.xml``
    in a conf shipped beside it, which sets ``NCCL_TOPO_FILE`` from that argument): it is found exactly
    when the base's WORKDIR is that directory, which the Dockerfile does not show.

    ## Example
    ```dockerfile
    FROM nvcr.io/nvidia/pytorch:23.03-py3
    COPY ndv4-topo.xml .
    ```

    ## Fix
    Copy to an absolute path and point NCCL at it in the image:
    ```dockerfile
    COPY ndv4-topo.xml /opt/nccl/topo.xml
    ENV NCCL_TOPO_FILE=/opt/nccl/topo.xml
    ```
    """
    elsewhere = {setting.value.strip(): f"{doc.path}:{setting.line}" for doc in docs.of_kind(*SETTING_KINDS)
                 if doc.kind != Kind.DOCKERFILE
                 for setting in env_settings(doc, "NCCL_TOPO_FILE") if setting.name == "NCCL_TOPO_FILE"}
    passed = _topology_paths_passed(docs)
    for doc in docs.of_kind(Kind.DOCKERFILE):
        yield from _topo_file_path(doc, elsewhere, passed)


# An absolute path to a topology file written as a command's argument (an NHC check's, a script's).
_PASSED_TOPOLOGY = re.compile(r"(?<![\w./$-])(/[\w./-]*(?:topo|graph)[\w.-]*\.xml)\b", re.IGNORECASE)


def _topology_paths_passed(docs: DocumentSet) -> dict[str, str]:
    """Topology paths the deployment's NHC confs and scripts pass as arguments (Azure's NHC
    ``check_nccl_allreduce 228.0 10 /workspace/ndv4-topo.xml 8G`` sets NCCL_TOPO_FILE from it), with where."""
    found: dict[str, str] = {}
    for doc in docs.of_kind(Kind.NHC_CONF, Kind.SHELL_SCRIPT, Kind.SBATCH_SCRIPT):
        for number, line in enumerate(doc.lines, start=1):
            if not line.lstrip().startswith("#"):
                for match in _PASSED_TOPOLOGY.finditer(line):
                    found.setdefault(match.group(1), f"{doc.path}:{number}")
    return found


def _topo_file_path(doc: Document, elsewhere: dict[str, str], passed: dict[str, str]) -> Iterator[Diagnostic]:
    env = doc.dockerfile.env()
    copies = [(instruction, source, target) for instruction, workdir in workdir_copies(doc.dockerfile)
              for source, target in copied_files(instruction, workdir)]
    wanted = env.get("NCCL_TOPO_FILE")
    wanted_path = wanted[0].strip() if wanted else ""
    if wanted is not None and wanted_path and "$" not in wanted_path:
        if not any(target == wanted_path for _, _, target in copies):
            candidates = [t or s for _, s, t in copies if _looks_like_topology(s)]
            hint = f"copy the file there, or set NCCL_TOPO_FILE to {candidates[0]}" if candidates else \
                f"COPY the topology file to {wanted_path}"
            yield _at(doc, wanted[1], f"NCCL_TOPO_FILE={wanted_path} but no COPY/ADD puts a file there; NCCL "
                                      f"silently ignores a missing topology file", hint=hint, needle="NCCL_TOPO_FILE")
    for instruction, source, target in copies:
        if not _looks_like_topology(source) or (target is not None and target in (wanted_path, *elsewhere)):
            continue
        name = posixpath.basename(source)
        if target is None:
            users = [(path, f"{where} sets NCCL_TOPO_FILE={path}") for path, where in elsewhere.items()] + \
                [(path, f"{where} passes {path}") for path, where in passed.items()]
            users = [(path, said) for path, said in users if posixpath.basename(path) == name]
            if users:  # the path a consumer of the deployment uses: right exactly when the base's WORKDIR is its
                # directory, which the Dockerfile does not show (NGC images use /workspace): info
                path, said = users[0]
                yield _at(doc, instruction, f"{name} is copied to the base image's WORKDIR (unknown here); {said}, "
                                            f"which holds only while that WORKDIR is {posixpath.dirname(path)}",
                          needle=source, hint=f"COPY it to {path} (an absolute path) to make it hold for any base",
                          severity=Severity.INFO)
                continue
            pointed = "no ENV NCCL_TOPO_FILE points at it: every job must pass the exact path"
            where = "the base image's WORKDIR (unknown here)"
        else:
            where = target
            pointed = f"ENV NCCL_TOPO_FILE points at {wanted_path} instead" if wanted_path else \
                "nothing sets NCCL_TOPO_FILE to that path (no ENV here, no job linted with it)"
        yield _at(doc, instruction, f"{name} is copied to {where}, but {pointed}",
                  needle=source, hint="COPY it to an absolute path and add ENV NCCL_TOPO_FILE=<that path>")


@rule(code="DKR006", name="dockerfile-no-nccl-tests", severity=Severity.INFO, kinds=(Kind.DOCKERFILE,))
def no_nccl_tests(doc: Document, ctx: LintContext) -> Iterator[Diagnostic]:
    """An image set up for NCCL (topology file or ``NCCL_*`` ENV) that builds no nccl-tests.

    ## What it catches
    Dockerfiles that copy an NCCL topology file or set ``NCCL_*`` variables but never build or
    copy NVIDIA's nccl-tests or ROCm's rccl-tests port (no ``nccl-tests``/``rccl-tests`` in any
    ``RUN``/``COPY``/``ADD``).

    ## Why is this bad?
    Acceptance of a GPU cluster is an ``all_reduce_perf`` run compared with the expected busbw
    (e.g. ~189 GB/s on two NDm A100 v4 nodes, jingchaozhang.github.io 2023; ~460 GB/s on
    2x8 H100, Crusoe's Slurm NCCL guide). Without
    the binaries in the image the check is skipped or done with another image than the workload's.

    ## Severity
    Info: advice; the image works, it only cannot check the cluster's busbw itself.

    ## Example
    ```dockerfile
    FROM nvcr.io/nvidia/pytorch:23.03-py3
    COPY ndv4-topo.xml /opt/nccl/topo.xml
    ENV NCCL_TOPO_FILE=/opt/nccl/topo.xml
    ```

    ## Fix
    Build them in the image (as the published 2023 NDm A100 v4 AKS walkthroughs do):
    ```dockerfile
    RUN git clone https://github.com/NVIDIA/nccl-tests.git /opt/nccl-tests \\
        && make -C /opt/nccl-tests MPI=1 MPI_HOME=/usr/local/mpi
    ```
    """
    model = doc.dockerfile
    # rccl-tests (ROCm's port) builds the same *_perf binaries for RCCL
    mentions_tests = any(name in i.arguments.lower() for i in model.of("RUN", "COPY", "ADD")
                         for name in ("nccl-tests", "nccl_tests", "rccl-tests", "rccl_tests"))
    if mentions_tests:
        return
    nccl_env = [(name, i) for name, (_, i) in model.env().items() if name.startswith("NCCL_")]
    topo = [i for i, _ in workdir_copies(doc.dockerfile) if any(_looks_like_topology(s) for s, _ in copied_files(i, ""))]
    anchor = nccl_env[0][1] if nccl_env else (topo[0] if topo else None)
    if anchor is not None:
        yield _at(doc, anchor, "this image is configured for NCCL but does not build nccl-tests, so the "
                               "cluster's busbw cannot be checked with it",
                  hint="RUN git clone https://github.com/NVIDIA/nccl-tests.git && make -C nccl-tests MPI=1 "
                       "MPI_HOME=/usr/local/mpi")


# Dockerfile instructions (docs.docker.com/reference/dockerfile/#overview), as a line of their own would start.
_KEYWORDS = ("ADD", "ARG", "CMD", "COPY", "ENTRYPOINT", "ENV", "EXPOSE", "FROM", "HEALTHCHECK", "LABEL", "MAINTAINER",
             "ONBUILD", "RUN", "SHELL", "STOPSIGNAL", "USER", "VOLUME", "WORKDIR")
_SWALLOWED = re.compile(r"^\s*(" + "|".join(_KEYWORDS) + r")(?:\s+\S|\s*$)")
# Instructions whose $NAME the builder (or the RUN shell) expands while building; CMD/ENTRYPOINT/HEALTHCHECK
# expand at run time, where no ARG exists at all, and FROM reads the global ARGs themselves.
_BUILD_TIME = ("RUN", "ENV", "ARG", "COPY", "ADD", "WORKDIR", "LABEL", "USER", "EXPOSE", "VOLUME", "STOPSIGNAL")
_USE = re.compile(r"(?<!\\)\$(?:\{([A-Za-z_][A-Za-z0-9_]*)(:?[-+=?])?|([A-Za-z_][A-Za-z0-9_]*))")
_SINGLE_QUOTED = re.compile(r"'[^']*'")


def _arg_names(instruction: Instruction) -> list[str]:
    """The names an ``ARG`` declares (``ARG A``, ``ARG A=1``, ``ARG A=1 B``)."""
    try:
        words = split_words(instruction.arguments)
    except ValueError:
        words = instruction.arguments.split()
    return [w.split("=", 1)[0] for w in words if re.match(r"^[A-Za-z_][A-Za-z0-9_]*(=|$)", w)]


def _stage_env(stage: list[Instruction]) -> set[str]:
    return {name for i in stage if i.keyword == "ENV" for name, _ in parse_env_arguments(i.arguments)}


def _shell_defines(command: str, name: str) -> bool:
    """Whether a RUN's shell sets ``name`` itself (an assignment, a loop variable, read, export)."""
    return bool(re.search(rf"(?:^|[\s;&|(]){name}=|\bfor\s+{name}\s+in\b|\bread\s+(?:-\S+\s+)*(?:\w+\s+)*{name}\b|"
                          rf"\b(?:export|local|declare)\s+(?:-\S+\s+)*{name}\b", command))


@rule(code="DKR007", name="dockerfile-global-arg-out-of-scope", severity=Severity.WARNING, kinds=(Kind.DOCKERFILE,))
def global_arg_out_of_scope(doc: Document, ctx: LintContext) -> Iterator[Diagnostic]:
    """A stage uses ``$NAME`` of an ``ARG`` declared before ``FROM`` without redeclaring it: the value is empty.

    ## What it catches
    - a use of a variable declared by an ``ARG`` before the first ``FROM``, in a build-time instruction of a
      stage that declares no ARG of that name before the use, reported once per stage and name
    - the same in a stage built FROM another stage: an ARG declared there ends with that stage
    - not reported: a name set by ENV in the stage or in a stage it is built FROM
    - not reported: a name the base image sets as ENV when that ARG chose the base image's tag, so both agree
    - not reported: a RUN whose shell assigns the name itself, a use in single quotes in a RUN, and CMD or
      ENTRYPOINT, which expand at run time, where no ARG exists
    - the FROM lines themselves are not judged: the global ARGs are in scope there

    ## Why is this bad?
    Docker's Dockerfile reference ("Understand how ARG and FROM interact"): an ``ARG`` declared before a
    ``FROM`` is outside of any build stage, so it cannot be used in any instruction after a ``FROM``; a stage
    uses its value only after an ``ARG NAME`` without a value inside the stage. Without it the name is unset
    and expands to the empty string, with no error (moby/moby#34129: "empty / no value set"): the version
    pinned at the top is not the one the ``RUN`` builds (``git clone -b v$NCCL_TESTS_VERSION`` clones
    ``v``, ``pip install torch==$TORCH_VERSION`` fails or installs another), and ``--build-arg`` cannot
    change it.

    ## Severity
    Warning: the build goes on with an empty value where the file pins one. Info when the name is one a
    common base image sets as ``ENV`` itself (NVIDIA's CUDA and NGC images set ``CUDA_VERSION`` and
    ``NCCL_VERSION``, ``hpcconf/knowledge/base_images.py``): the stage then reads the base image's value,
    which need not be the ARG's; and when the use has a fallback (``${NAME:-2.18}``), which is used instead.
    Nothing when that ARG is what the base image's tag is written with (``FROM nvidia/cuda:${CUDA_VERSION}-devel``
    sets ``ENV CUDA_VERSION`` to the same version).

    ## Example
    ```dockerfile
    ARG NCCL_TESTS_VERSION=2.13.9
    FROM nvcr.io/nvidia/pytorch:24.03-py3
    RUN git clone -b v${NCCL_TESTS_VERSION} https://github.com/NVIDIA/nccl-tests.git
    ```

    ## Fix
    Redeclare it, without a value, in every stage that uses it:
    ```dockerfile
    FROM nvcr.io/nvidia/pytorch:24.03-py3
    ARG NCCL_TESTS_VERSION
    ```
    """
    model = doc.dockerfile
    global_args: dict[str, Instruction] = {}
    for instruction in model.instructions:
        if instruction.keyword == "FROM":
            break
        if instruction.keyword == "ARG":
            for name in _arg_names(instruction):
                global_args.setdefault(name, instruction)
    if not global_args:
        return
    stages = _stages(model.instructions)
    by_name = {name: (base, body) for name, base, body in stages if name}
    for _name, base, body in stages:
        inherited: set[str] = set()
        parent_args: dict[str, str] = {}  # name -> the ancestor stage that declared it (its scope ended there)
        root, root_from, seen = base, body[0], set()
        while root in by_name and root not in seen:  # ENV (not ARG) carries over to a stage built FROM a stage
            seen.add(root)
            parent_name = root
            root, parent = by_name[root]
            root_from = parent[0]
            inherited |= _stage_env(parent)
            for i in parent:
                if i.keyword == "ARG":
                    parent_args.update(dict.fromkeys(_arg_names(i), parent_name))
        words = [w for w in root_from.arguments.split() if not w.startswith("--")]
        root_image = words[0] if words else "the base image"
        chose_base: set[str] = set()  # the global ARGs the base image's name is written with
        for _ in range(3):  # an ARG default may itself name another ARG (BASE_IMAGE=nvidia/cuda:${CUDA_VERSION})
            chose_base |= {m.group(1) or m.group(3) for m in _USE.finditer(root_image)}
            root_image = expand(root_image, model.arg_defaults())
        defined = set(inherited)
        reported: set[str] = set()
        for instruction in body[1:]:
            if instruction.keyword not in _BUILD_TIME:
                continue
            text = instruction.arguments
            if instruction.keyword == "RUN":
                text = _SINGLE_QUOTED.sub("''", text)
            for match in _USE.finditer(text):
                name = match.group(1) or match.group(3)
                if name not in global_args or name in defined or name in reported:
                    continue
                if instruction.keyword == "RUN" and _shell_defines(instruction.arguments, name):
                    continue
                if name in chose_base and base_may_set(name):
                    continue  # nvidia/cuda:${CUDA_VERSION}-devel sets ENV CUDA_VERSION to that same version
                reported.add(name)
                declared = global_args[name]
                where = f"ARG {name} (line {declared.line}) is declared before FROM, outside this stage"
                if name in parent_args:
                    where += f" (the ARG {name} of stage {parent_args[name]} ends with that stage)"
                fallback = (match.group(2) or "").lstrip(":") in ("-", "=")
                hint = f"add `ARG {name}` (no value) after the FROM on line {body[0].line}"
                if fallback:
                    yield _at(doc, instruction, f"${{{name}}} uses its fallback here, not the ARG's value: {where}",
                              hint=hint, needle=match.group(0), severity=Severity.INFO)
                elif base_may_set(name):
                    yield _at(doc, instruction, f"${name} is the base image's ENV {name} here ({root_image} "
                                                f"may set it), not the ARG's value: {where}",
                              hint=hint, needle=match.group(0), severity=Severity.INFO)
                else:
                    yield _at(doc, instruction, f"${name} expands to empty here: {where}", hint=hint,
                              needle=match.group(0))
            if instruction.keyword == "ARG":
                defined.update(_arg_names(instruction))
            elif instruction.keyword == "ENV":
                defined.update(name for name, _ in parse_env_arguments(instruction.arguments))


@rule(code="DKR008", name="dockerfile-continuation-swallows-instruction", severity=Severity.WARNING,
      kinds=(Kind.DOCKERFILE,))
def continuation_swallows_instruction(doc: Document, ctx: LintContext) -> Iterator[Diagnostic]:
    """A line ending in ``\\`` takes the next instruction in as words of the one before.

    ## What it catches
    - a continuation line that starts with a Dockerfile instruction in upper case, such as an ARG line after a
      RUN whose last line still ends in the escape character
    - the same with comment lines or empty lines between them, which the parser skips
    - not reported: a word like ENV inside a continued command, and heredoc bodies, which are not continuation
      lines

    ## Why is this bad?
    BuildKit's parser (moby/buildkit ``frontend/dockerfile/parser/parser.go``) joins a line that ends with
    the escape character to the next one, and skips comment lines and empty lines inside the continuation
    (it only warns "Empty continuation line found", rule ``NoEmptyContinuation``). So in
    ``RUN make install \\`` followed by ``ARG CUDA_ARCH=90`` the ``ARG`` never declares anything: its words
    are passed to ``make`` (or run as a command ``ARG``, which does not exist, after ``&&``), and every later
    ``$CUDA_ARCH`` is empty.

    ## Severity
    Warning: the instruction is lost (its words go to the previous one), so what it declares or runs is not
    in the image; the build fails only when the shell happens to reject the extra words.

    ## Example
    ```dockerfile
    RUN apt-get update && apt-get install -y build-essential \\

    ARG CUDA_ARCH=90
    ```

    ## Fix
    Remove the ``\\`` at the end of the line before, so that the instruction stands on its own line.
    """
    for instruction in doc.dockerfile.instructions:
        for index, (number, text) in enumerate(instruction.parts[1:], start=1):
            match = _SWALLOWED.match(text)
            if not match:
                continue
            keyword, previous = match.group(1), instruction.parts[index - 1][0]
            column = text.index(keyword) + 1
            yield doc.at_line(number, f"this {keyword} line is not an instruction: the `\\` at the end of line "
                                      f"{previous} joins it to the {instruction.keyword} on line {instruction.line}",
                              hint=f"remove the trailing `\\` on line {previous}", column=column,
                              end_column=column + len(keyword))
            break
