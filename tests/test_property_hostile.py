"""Property: no hostile tree, log, node collection or spec makes any command leak, hang, escape or crash.

Hypothesis builds what a pull request or a node can hand hpcconf: trees mixing real configs with
links (into the tree, to a secret file outside it, to /proc/self/environ, /dev/zero, a directory
outside), fifos and directories that cannot be listed; nccl-tests logs and node files with hostile
numbers (``1e999``, ``nan``, 5,000 digits), bytes that are not UTF-8, truncation; specs with YAML
tags their values cannot satisfy. For each case of each command (lint, build, review, nccl-report,
sku import):

* no internal error (exit 70, a traceback, an exception other than a clean exit);
* no hang (60 s per case: SIGALRM);
* every refusal (exit 2) located: ``file[:line[:col]]: error[CODE]`` or the planted file's name;
* nothing written outside the command's output (the tree around it is snapshotted);
* no secret echoed: the secret file's marker and the process environment never appear in the output;
* JSON output is strict JSON (no ``NaN``/``Infinity``).

``HPCCONF_FUZZ=thorough`` runs 25x the cases (tests/fuzz_profiles.py). ``HPCCONF_FUZZ_REPORT=FILE``
writes the figures per command (cases and the five counts above) as JSON.
"""

from __future__ import annotations

import collections
import json
import os
import re
import shutil
import signal
import subprocess
import tempfile
from pathlib import Path

import pytest
from fuzz_profiles import examples
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from typer.testing import CliRunner

from hpcconf.cli import app

REPO = Path(__file__).resolve().parents[1]
SPEC = (REPO / "examples" / "ndmv4-aks.yaml").read_text()
LOG = (REPO / "tests" / "fixtures" / "nccl_logs" / "aks-ndmv4-2node-kubectl.log").read_text()
HGX = REPO / "tests" / "fixtures" / "sku-import" / "hgx-8gpu"
GIT = shutil.which("git")
SECRET = "hpcconf-fuzz-secret-7f3a9c"
LEAKS = (SECRET, "PATH=/", "root:x:0:0")
LOCATED = re.compile(r"\S+(?::\d+){0,2}: (?:error|warning)\[[A-Z]+\d+\]")
FIGURES: dict[str, collections.Counter] = collections.defaultdict(collections.Counter)
runner = CliRunner()


def fuzz(ci: int) -> settings:
    return settings(max_examples=examples(ci), deadline=None,
                    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow])

CONFIGS = {
    "nccl.conf": "NCCL_DEBUG=INFO\nNCCL_IB_HCA=mlx5\n",
    "mpi.env": "export UCX_TLS=rc\nNCCL_SOCKET_IFNAME=eth0\n",
    "Dockerfile": "FROM nvcr.io/nvidia/pytorch:25.10-py3\nENV NCCL_DEBUG=INFO\n",
    "topo.xml": "<system version=\"1\"><cpu numaid=\"0\"><pci busid=\"0000:01:00.0\"/></cpu></system>\n",
    "job.yaml": "apiVersion: batch.volcano.sh/v1alpha1\nkind: Job\nmetadata: {name: x}\nspec: {tasks: []}\n",
    "spec.yaml": SPEC,
}
HOSTILE_TEXT = ["1e999", "nan", "9" * 5000, "!!int x", "!!bool maybe", "\x00", "a" * 3000, "password=hunter2hunter2",
                "${X}", "\u2028", "'", "\"", "&a [*a, *a]", "{{ x }}", "-1", "0x"]
ENTRY_KINDS = ["file", "file", "file", "mutated", "bytes", "link-in", "link-secret", "link-environ", "link-zero",
               "fifo", "unlisted-dir", "link-dir-out"]


class Hang(Exception):
    pass


def _alarm(signum, frame):
    raise Hang(f"a case ran past {DEADLINE:g} s")


DEADLINE = float(os.environ.get("HPCCONF_TEST_DEADLINE", "60"))


def _report_figures() -> None:
    """After every case, so that a run stopped early still says what it saw."""
    target = os.environ.get("HPCCONF_FUZZ_REPORT")
    if target:
        Path(target).write_text(json.dumps({k: dict(v) for k, v in sorted(FIGURES.items())}, indent=2) + "\n")


def _snapshot(root: Path, skip: Path | None = None) -> dict[str, bytes | str]:
    """Every entry below ``root`` (link targets as text, files by content), except below ``skip``."""
    found: dict[str, bytes | str] = {}
    for directory, dirs, files in os.walk(root):
        here = Path(directory)
        if skip is not None and (here == skip or skip in here.parents):
            dirs[:] = []
            continue
        for name in dirs + files:
            path = here / name
            if skip is not None and path == skip:
                continue  # the command's own output
            key = str(path.relative_to(root))
            if path.is_symlink():
                found[key] = "-> " + os.readlink(path)
            elif path.is_file():
                found[key] = path.read_bytes()
            else:
                found[key] = "special" if not path.is_dir() else "dir"
    return found


def run_case(command: str, args: list[str], cwd: Path, root: Path, output: Path | None, planted: list[str],
             monkeypatch=None, unlisted: set[str] = frozenset()) -> None:
    """Run one case and count what went wrong; fail the test on the first problem."""
    figures = FIGURES[command]
    figures["cases"] += 1
    before = _snapshot(root, output)
    real_scandir = os.scandir

    def scandir(path="."):
        if os.path.basename(os.fspath(path)) in unlisted:
            raise PermissionError(13, "Permission denied", os.fspath(path))
        return real_scandir(path)

    old = os.getcwd()
    previous = signal.signal(signal.SIGALRM, _alarm)
    signal.setitimer(signal.ITIMER_REAL, DEADLINE, 1.0)  # repeating: a second blocking read after the first also fails
    try:
        os.chdir(cwd)
        if monkeypatch is not None and unlisted:
            monkeypatch.setattr(os, "scandir", scandir)
        result = runner.invoke(app, args)
    finally:
        signal.setitimer(signal.ITIMER_REAL, 0)
        signal.signal(signal.SIGALRM, previous)
        os.chdir(old)
        if monkeypatch is not None:
            monkeypatch.undo()
    text = result.output
    problems = []
    if isinstance(result.exception, Hang):
        figures["hangs"] += 1
        problems.append("hang")
    elif result.exit_code == 70 or "internal error" in text or (
            result.exception is not None and not isinstance(result.exception, SystemExit)):
        figures["internal_errors"] += 1
        problems.append(f"internal error: {result.exception!r}")
    if result.exit_code == 2 and not (LOCATED.search(text) or any(name in text for name in planted)):
        figures["unlocated_refusals"] += 1
        problems.append("unlocated refusal")
    if _snapshot(root, output) != before:
        figures["writes_outside_output"] += 1
        problems.append("wrote outside its output")
    if any(leak in text for leak in LEAKS):
        figures["secrets_echoed"] += 1
        problems.append("echoed a secret")
    if "--format" in args and args[args.index("--format") + 1] in ("json", "sarif") and result.exit_code in (0, 1):
        def strict(constant):
            raise ValueError(constant)

        try:
            json.loads(result.stdout, parse_constant=strict)
        except ValueError as exc:
            figures["invalid_json"] += 1
            problems.append(f"invalid JSON: {exc}")
    _report_figures()
    assert not problems, (problems, args, result.exit_code, text[-3000:])


def _workspace() -> tuple[Path, Path]:
    """(root, work): root holds the secret outside the tree, work is the tree handed to the command."""
    root = Path(tempfile.mkdtemp(prefix="hpcconf-fuzz-"))
    (root / "secret.txt").write_text(f"TOKEN={SECRET}\n")
    (root / "outside").mkdir()
    (root / "outside" / "nccl.conf").write_text(f"NCCL_DEBUG=INFO\n# {SECRET}\n")
    work = root / "work"
    work.mkdir()
    return root, work


def _mutate(text: str, draw) -> str:
    words = re.split(r"(\s+)", text)
    for _ in range(draw(st.integers(1, 3))):
        index = draw(st.integers(0, len(words) - 1))
        words[index] = draw(st.sampled_from(HOSTILE_TEXT))
    return "".join(words)


def _plant(path: Path, kind: str, root: Path, draw) -> None:
    if kind == "file":
        path.write_text(CONFIGS.get(path.name, CONFIGS["nccl.conf"]))
    elif kind == "mutated":
        path.write_text(_mutate(CONFIGS.get(path.name, CONFIGS["nccl.conf"]), draw))
    elif kind == "bytes":
        path.write_bytes(draw(st.binary(max_size=200)))
    elif kind == "link-in":
        (path.parent / f"real-{path.name}").write_text(CONFIGS.get(path.name, CONFIGS["nccl.conf"]))
        os.symlink(f"real-{path.name}", path)
    elif kind == "link-secret":
        os.symlink(root / "secret.txt", path)
    elif kind == "link-environ":
        os.symlink("/proc/self/environ", path)
    elif kind == "link-zero":
        os.symlink("/dev/zero", path)
    elif kind == "fifo":
        os.mkfifo(path)
    elif kind == "unlisted-dir":
        path.mkdir()
        (path / "nccl.conf").write_text(CONFIGS["nccl.conf"])
    elif kind == "link-dir-out":
        os.symlink(root / "outside", path)


# ------------------------------------------------------------------------------------------------ lint

@fuzz(50)
@given(data=st.data())
def test_lint_on_hostile_trees(data, monkeypatch):
    root, work = _workspace()
    try:
        tree = work / "t"
        tree.mkdir()
        unlisted = set()
        names = data.draw(st.lists(st.sampled_from(sorted(CONFIGS)), min_size=1, max_size=5, unique=True))
        planted = []
        for index, name in enumerate(names):
            kind = data.draw(st.sampled_from(ENTRY_KINDS))
            directory = tree / f"d{index}"
            directory.mkdir()
            target = directory / (f"locked{index}" if kind == "unlisted-dir" else name)
            _plant(target, kind, root, data.draw)
            if kind == "unlisted-dir":
                unlisted.add(target.name)
            planted.append(target.name)
        named = data.draw(st.booleans())
        given = [str(p.relative_to(work)) for p in sorted(tree.rglob("*")) if not p.is_dir() or p.is_symlink()][:3] \
            if named else ["t"]
        fmt = data.draw(st.sampled_from(["text", "json", "sarif"]))
        run_case("lint", ["lint", *(given or ["t"]), "--format", fmt], work, root, None, planted, monkeypatch, unlisted)
    finally:
        shutil.rmtree(root, ignore_errors=True)


# ---------------------------------------------------------------------------------------------- build

@fuzz(20)
@given(data=st.data())
def test_build_on_hostile_specs(data):
    root, work = _workspace()
    try:
        kind = data.draw(st.sampled_from(["mutated", "mutated", "mutated", "bytes", "link-secret", "link-environ",
                                          "link-zero", "fifo"]))
        spec = work / "spec.yaml"
        if kind == "mutated":
            spec.write_text(_mutate(SPEC, data.draw))
        else:
            _plant(spec, kind, root, data.draw)
        mode = data.draw(st.sampled_from([[], ["--check"], ["--diff"]]))
        run_case("build", ["build", "spec.yaml", "-o", "out", *mode], work, root, work / "out", ["spec.yaml"])
    finally:
        shutil.rmtree(root, ignore_errors=True)


# -------------------------------------------------------------------------------------------- review

@pytest.fixture(scope="module")
def review_repo():
    if GIT is None:
        pytest.skip("no git")
    root, work = _workspace()
    for args in (["init", "-q", "-b", "main"], ["config", "user.email", "t@example.com"], ["config", "user.name", "t"]):
        subprocess.run([GIT, "-C", str(work), *args], check=True, capture_output=True)
    (work / ".hpcconf.toml").write_text('out = "out"\n')
    (work / "specs").mkdir()
    (work / "specs" / "demo.yaml").write_text(SPEC)
    old = os.getcwd()
    os.chdir(work)
    try:
        assert runner.invoke(app, ["build", "specs/demo.yaml", "-q"]).exit_code == 0
    finally:
        os.chdir(old)
    subprocess.run([GIT, "-C", str(work), "add", "-A"], check=True, capture_output=True)
    subprocess.run([GIT, "-C", str(work), "commit", "-qm", "base"], check=True, capture_output=True)
    yield root, work
    shutil.rmtree(root, ignore_errors=True)


@fuzz(10)
@given(data=st.data())
def test_review_on_hostile_working_trees(data, review_repo):
    root, work = review_repo
    name = data.draw(st.sampled_from(["specs/demo.yaml", "specs/a\nb.yaml", "specs/-x.yaml", "specs/t\tq'\".yaml"]))
    kind = data.draw(st.sampled_from(["mutated", "mutated", "link-secret", "link-environ", "link-zero"]))
    path = work / name
    saved = (work / "specs" / "demo.yaml").read_text()
    try:
        if path.exists():
            path.unlink()
        if kind == "mutated":
            path.write_text(_mutate(SPEC, data.draw))
        else:
            _plant(path, kind, root, data.draw)
        fmt = data.draw(st.sampled_from(["text", "json", "markdown"]))
        run_case("review", ["review", "--base", "HEAD", "--format", fmt], work, root, None, [Path(name).name])
    finally:
        if os.path.lexists(path):
            path.unlink()
        (work / "specs" / "demo.yaml").write_text(saved)


# ----------------------------------------------------------------------------------------- nccl-report

@fuzz(50)
@given(data=st.data())
def test_nccl_report_on_hostile_logs(data):
    root, work = _workspace()
    try:
        kind = data.draw(st.sampled_from(["mutated", "mutated", "mutated", "truncated", "bytes", "link-secret",
                                          "link-environ", "link-zero", "fifo"]))
        log = work / "run.log"
        if kind == "mutated":
            log.write_text(_mutate(LOG, data.draw))
        elif kind == "truncated":
            log.write_bytes(LOG.encode()[:data.draw(st.integers(0, len(LOG)))] + b"\xff\xfe")
        else:
            _plant(log, kind, root, data.draw)
        fmt = data.draw(st.sampled_from(["text", "json", "markdown"]))
        sku = data.draw(st.sampled_from([[], ["--sku", "Standard_ND96amsr_A100_v4"]]))
        run_case("nccl-report", ["nccl-report", "run.log", "--format", fmt, *sku], work, root, None, ["run.log"])
    finally:
        shutil.rmtree(root, ignore_errors=True)


# ------------------------------------------------------------------------------------------ sku import

NODE_FILES = sorted(p.name for p in HGX.iterdir()) + ["azure-imds.json"]


@fuzz(40)
@given(data=st.data())
def test_sku_import_on_hostile_collections(data):
    root, work = _workspace()
    try:
        node = work / "node"
        shutil.copytree(HGX, node)
        name = data.draw(st.sampled_from(NODE_FILES))
        kind = data.draw(st.sampled_from(["mutated", "mutated", "bytes", "imds", "link-secret", "link-environ",
                                          "link-zero", "fifo"]))
        target = node / name
        if kind == "imds":
            target = node / "azure-imds.json"
            value = data.draw(st.sampled_from(['"../../escaped"', '"a\\nb: c"', "5", '["a"]', "NaN", "9" * 4400,
                                               '"Standard_ND96isr_H100_v5"', "{}", '"x/../y"']))
            target.write_text('{"vmSize": ' + value + "}")
            with (node / "collect.log").open("a") as log:
                log.write("ok\tazure-imds.json\tcurl\n")
        else:
            text = target.read_text() if target.exists() else '{"vmSize": "Standard_ND96isr_H100_v5"}'
            if target.exists() or os.path.lexists(target):
                target.unlink()
            if kind == "mutated":
                target.write_text(_mutate(text, data.draw))
            else:
                _plant(target, kind, root, data.draw)
        (work / "skus").mkdir()
        run_case("sku import", ["sku", "import", "node", "-o", "skus"], work, root, work / "skus",
                 [name, "azure-imds.json", "node"])
    finally:
        shutil.rmtree(root, ignore_errors=True)
