"""Hostile repositories (issue 22): a file from a pull request never leaks, hangs, escapes or crashes hpcconf.

Every command that reads a file goes through hpcconf.safe_io. Each test plants what an attacker can
commit or leave on a node (a fifo, a socket, a device, a link to /proc/self/environ, /etc/passwd or
/dev/zero, a link out of the tree, a huge file, an unlistable directory) and requires a located
refusal (HPC092-HPC095, HPC000) within seconds, nothing of the target in the output, exit 1 (lint
finding) or 2 (refused input), never 70.
"""

from __future__ import annotations

import contextlib
import json
import os
import shutil
import signal
import socket
import stat
import subprocess
from pathlib import Path

import pytest
from typer.testing import CliRunner

from hpcconf.cli import app

REPO = Path(__file__).resolve().parents[1]
SPEC = REPO / "examples" / "ndmv4-aks.yaml"
HGX = REPO / "tests" / "fixtures" / "sku-import" / "hgx-8gpu"
LOG = REPO / "tests" / "fixtures" / "nccl_logs" / "aks-ndmv4-2node-kubectl.log"
GIT = shutil.which("git")
# What reading the targets would print: a variable of the process environment, a line of /etc/passwd.
LEAKS = ("PATH=", "root:x:0:0", "root:*:0:0")
runner = CliRunner()


@pytest.fixture(autouse=True)
def deadline():
    """A blocking read is the bug: fail the test instead of hanging the suite."""
    def expired(signum, frame):
        raise TimeoutError("hpcconf blocked on a hostile file")

    previous = signal.signal(signal.SIGALRM, expired)
    seconds = float(os.environ.get("HPCCONF_TEST_DEADLINE", "60"))
    signal.setitimer(signal.ITIMER_REAL, seconds, 1.0)  # and again every second: a second blocking read fails too
    yield
    signal.setitimer(signal.ITIMER_REAL, 0)
    signal.signal(signal.SIGALRM, previous)


def plant(path: Path, kind: str) -> None:
    """Put a hostile entry of ``kind`` at ``path`` (the parent exists)."""
    if kind == "fifo":
        os.mkfifo(path)
    elif kind == "socket":
        sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        with contextlib.chdir(path.parent):  # the socket path limit (108 bytes) counts from here
            sock.bind(path.name)
        sock.close()
    elif kind in ("char-device", "block-device"):
        mode = stat.S_IFCHR if kind == "char-device" else stat.S_IFBLK
        try:
            os.mknod(path, mode | 0o600, os.makedev(1, 5) if kind == "char-device" else os.makedev(7, 0))
        except (PermissionError, OSError) as exc:
            pytest.skip(f"cannot create a device node here: {exc}")
    elif kind == "link-environ":
        os.symlink("/proc/self/environ", path)
    elif kind == "link-passwd":
        os.symlink("/etc/passwd", path)
    elif kind == "link-zero":
        os.symlink("/dev/zero", path)
    elif kind == "link-urandom":
        os.symlink("/dev/urandom", path)
    elif kind == "link-outside":  # a regular file, but outside the tree
        outside = path.parent.parent.parent / f"outside-{path.name}"
        outside.write_text("NCCL_DEBUG=INFO\n")
        os.symlink(outside, path)
    else:
        raise AssertionError(kind)


SPECIAL_KINDS = ["fifo", "socket", "char-device", "block-device"]
LINK_KINDS = ["link-environ", "link-passwd", "link-zero", "link-urandom", "link-outside"]
CODE_OF = {**{k: "HPC092" for k in SPECIAL_KINDS}, **{k: "HPC093" for k in LINK_KINDS}}


def invoke(args: list[str], cwd: Path):
    with contextlib.chdir(cwd):
        return runner.invoke(app, args)


def clean_exit(result) -> bool:
    """The command ended by itself (typer's exit), not by an exception such as the deadline's."""
    return result.exception is None or isinstance(result.exception, SystemExit)


def assert_refused(result, code: str, name: str, exits=(1, 2)) -> None:
    output = result.output
    assert clean_exit(result), repr(result.exception)
    assert result.exit_code in exits, (result.exit_code, output, result.exception)
    assert code in output and name in output, output
    assert "internal error" not in output and not any(leak in output for leak in LEAKS), output


# ------------------------------------------------------------------------------------------- lint

@pytest.mark.parametrize("kind", SPECIAL_KINDS + LINK_KINDS)
@pytest.mark.parametrize("how", ["walked", "named"])
def test_lint_refuses_every_special_file_and_escaping_link(tmp_path, kind, how):
    tree = tmp_path / "work" / "t"
    tree.mkdir(parents=True)
    (tree / "ok.conf").write_text("NCCL_DEBUG=INFO\n")
    plant(tree / "nccl.conf", kind)
    result = invoke(["lint", "t" if how == "walked" else "t/nccl.conf", "--format", "json"], tmp_path / "work")
    assert_refused(result, CODE_OF[kind], "nccl.conf", exits=(1,))
    findings = json.loads(result.stdout)["findings"]
    refused = [f for f in findings if f["code"] == CODE_OF[kind]]
    assert [(f["file"], f["line"]) for f in refused] == [(f"t{os.sep}nccl.conf" if how == "walked" else "t/nccl.conf", 1)]


def test_a_secret_behind_a_link_is_never_quoted(tmp_path):
    """The reported case: mpi.env -> /proc/self/environ printed the whole CI environment in a finding."""
    tree = tmp_path / "t"
    tree.mkdir()
    os.symlink("/proc/self/environ", tree / "mpi.env")
    os.symlink("/etc/passwd", tree / "nccl.conf")
    result = invoke(["lint", "t"], tmp_path)
    assert_refused(result, "HPC093", "mpi.env", exits=(1,))
    assert "nccl.conf" in result.output and "NCCL005" not in result.output


def test_a_linked_directory_out_of_the_tree_is_reported_and_not_walked(tmp_path):
    tree = tmp_path / "t"
    tree.mkdir()
    os.symlink("/etc", tree / "etc")
    os.symlink("/proc/self", tree / "self")
    result = invoke(["lint", "t"], tmp_path)
    assert_refused(result, "HPC093", f"t{os.sep}etc", exits=(1,))
    assert f"t{os.sep}self" in result.output


def test_a_link_inside_the_tree_is_linted_as_its_target(tmp_path):
    tree = tmp_path / "t"
    tree.mkdir()
    (tree / "real.conf").write_text("NCCL_ALGO=Ring\n")
    os.symlink("real.conf", tree / "nccl.conf")
    result = invoke(["lint", "t/nccl.conf"], tmp_path)
    assert "HPC093" not in result.output and result.exit_code in (0, 1), result.output


def test_a_named_file_through_a_linked_directory_is_refused(tmp_path):
    (tmp_path / "t").mkdir()
    os.symlink("/proc/self", tmp_path / "t" / "p")
    result = invoke(["lint", "t/p/environ", "--kind", "env-file"], tmp_path)
    assert_refused(result, "HPC093", "t/p/environ", exits=(1,))


def test_a_directory_lint_cannot_list_is_an_error_finding(tmp_path, monkeypatch):
    """Root reads anything, so the denial comes from the listing call itself (os.walk's scandir)."""
    tree = tmp_path / "t"
    (tree / "locked").mkdir(parents=True)
    (tree / "nccl.conf").write_text("NCCL_DEBUG=INFO\n")
    real = os.scandir

    def scandir(path="."):
        if os.path.basename(os.fspath(path)) == "locked":
            raise PermissionError(13, "Permission denied", os.fspath(path))
        return real(path)

    monkeypatch.setattr(os, "scandir", scandir)
    result = invoke(["lint", "t", "--format", "json"], tmp_path)
    assert result.exit_code == 1, result.output
    [finding] = [f for f in json.loads(result.stdout)["findings"] if f["code"] == "HPC095"]
    assert finding["file"].endswith("locked") and "Permission denied" in finding["message"]


def test_an_oversized_file_is_refused_by_its_size_unread(tmp_path):
    """A sparse file: fstat says 5 GiB, nothing is read (the test would run out of time and memory otherwise)."""
    big = tmp_path / "nccl.conf"
    with open(big, "wb") as handle:
        handle.truncate(5 * 1024 ** 3)
    result = invoke(["lint", "nccl.conf"], tmp_path)
    assert_refused(result, "HPC094", "nccl.conf", exits=(1,))


# ------------------------------------------------------------------------ every command that reads files

def _git_repo(work: Path) -> None:
    for args in (["init", "-q", "-b", "main"], ["config", "user.email", "t@example.com"], ["config", "user.name", "t"],
                 ["commit", "-q", "--allow-empty", "-m", "base"]):
        subprocess.run([GIT, "-C", str(work), *args], check=True, capture_output=True)


def _setup_lint(work, kind):
    (work / "t").mkdir()
    plant(work / "t" / "nccl.conf", kind)
    return ["lint", "t"], "t/nccl.conf"


def _setup_build(work, kind):
    plant(work / "spec.yaml", kind)
    return ["build", "spec.yaml", "-o", "out"], "spec.yaml"


def _setup_build_directory(work, kind):
    (work / "specs").mkdir()
    shutil.copy(SPEC, work / "specs" / "a.yaml")
    plant(work / "specs" / "b.yaml", kind)
    return ["build", "specs", "-o", "out"], "specs/b.yaml"


def _setup_review(work, kind):
    if GIT is None:
        pytest.skip("no git")
    if kind == "fifo":
        pytest.skip("git neither lists nor stores a fifo: a review never meets one")
    _git_repo(work)
    (work / "specs").mkdir()
    plant(work / "specs" / "b.yaml", kind)
    return ["review", "--base", "HEAD"], "specs/b.yaml"


def _setup_nccl_report(work, kind):
    plant(work / "run.log", kind)
    return ["nccl-report", "run.log", "--sku", "Standard_ND96amsr_A100_v4"], "run.log"


def _setup_sku_import(work, kind):
    shutil.copytree(HGX, work / "node")
    (work / "node" / "nvidia-smi-q.xml").unlink()
    plant(work / "node" / "nvidia-smi-q.xml", kind)
    return ["sku", "import", "node", "-o", "out/"], "nvidia-smi-q.xml"


def _setup_settings(work, kind):
    plant(work / ".hpcconf.toml", kind)
    (work / "nccl.conf").write_text("NCCL_DEBUG=INFO\n")
    return ["lint", "nccl.conf"], ".hpcconf.toml"


def _setup_config_option(work, kind):
    plant(work / "settings.toml", kind)
    shutil.copy(SPEC, work / "spec.yaml")
    return ["build", "spec.yaml", "-o", "out", "--config", "settings.toml"], "settings.toml"


def _setup_sku_dir(work, kind):
    (work / "skus").mkdir()
    plant(work / "skus" / "lab-x.yaml", kind)
    return ["skus", "--sku-dir", "skus"], "lab-x.yaml"


def _setup_init(work, kind):
    (work / "skus").mkdir()
    plant(work / "skus" / "lab-x.yaml", kind)
    return ["init", "--sku", "Standard_ND96amsr_A100_v4", "--sku-dir", "skus", "-o", "new.yaml"], "lab-x.yaml"


def _setup_migrate(work, kind):
    plant(work / "old.yaml", kind)
    return ["migrate", "old.yaml"], "old.yaml"


def _setup_explain_diff(work, kind):
    shutil.copy(SPEC, work / "spec.yaml")
    plant(work / "old.yaml", kind)
    return ["explain-diff", "spec.yaml", "--against", "old.yaml"], "old.yaml"


# command -> how to hand it a hostile file. test_every_command_is_covered keeps the table complete.
READERS = {
    "lint": _setup_lint, "build": _setup_build, "build (directory)": _setup_build_directory, "review": _setup_review,
    "nccl-report": _setup_nccl_report, "sku import": _setup_sku_import, "settings": _setup_settings,
    "--config": _setup_config_option, "skus": _setup_sku_dir, "init": _setup_init, "migrate": _setup_migrate,
    "explain-diff": _setup_explain_diff,
}
READS_NO_USER_FILE = {"version", "schema", "rules", "explain", "sku collect-script"}


def _command_names(group, prefix="") -> set[str]:
    names = {f"{prefix}{c.name or c.callback.__name__.replace('_', '-')}" for c in group.registered_commands}
    for sub in group.registered_groups:
        names |= _command_names(sub.typer_instance, f"{prefix}{sub.name} ")
    return names


def test_every_command_is_covered():
    """A new command that reads files must join READERS (or say it reads none)."""
    commands = _command_names(app)
    assert commands, "no commands found"
    assert commands - READS_NO_USER_FILE - set(READERS) == set()


@pytest.mark.parametrize("kind", ["fifo", "link-environ", "link-zero"])
@pytest.mark.parametrize("command", sorted(READERS))
def test_every_command_refuses_hostile_files_located(tmp_path, command, kind):
    work = tmp_path / "a" / "b" / "work"
    work.mkdir(parents=True)
    args, name = READERS[command](work, kind)
    before = sorted(p for p in tmp_path.rglob("*") if "work" not in p.relative_to(tmp_path).parts)
    result = invoke(args, work)
    assert_refused(result, CODE_OF[kind], name, exits=(1, 2) if command == "lint" or command == "settings" else (2,))
    assert sorted(p for p in tmp_path.rglob("*") if "work" not in p.relative_to(tmp_path).parts) == before


@pytest.mark.parametrize("kind", SPECIAL_KINDS + ["link-outside", "link-urandom"])
def test_nccl_report_and_sku_import_refuse_every_kind(tmp_path, kind):
    work = tmp_path / "a" / "b" / "work"
    work.mkdir(parents=True)
    for setup in (_setup_nccl_report, _setup_sku_import):
        args, name = setup(work, kind)
        assert_refused(invoke(args, work), CODE_OF[kind], name, exits=(2,))
        assert not (work / "out").exists()


def test_size_limits_per_input_kind_are_enforced_before_parsing(tmp_path):
    from hpcconf.safe_io import LIMITS

    log = tmp_path / "run.log"
    with open(log, "wb") as handle:
        handle.truncate(LIMITS["log"] + 1)
    assert_refused(invoke(["nccl-report", "run.log"], tmp_path), "HPC094", "run.log", exits=(2,))
    node = tmp_path / "node"
    shutil.copytree(HGX, node)
    with open(node / "nvidia-smi-q.xml", "r+b") as handle:
        handle.truncate(LIMITS["node"] + 1)
    assert_refused(invoke(["sku", "import", "node", "--name", "lab"], tmp_path), "HPC094", "nvidia-smi-q.xml", exits=(2,))


def test_a_non_utf8_collect_log_names_the_file_line_and_column(tmp_path):
    node = tmp_path / "node"
    shutil.copytree(HGX, node)
    (node / "collect.log").write_bytes((HGX / "collect.log").read_bytes() + b"ok\tx\tcaf\xe9\n")
    result = invoke(["sku", "import", "node", "--name", "lab"], tmp_path)
    lines = (HGX / "collect.log").read_bytes().count(b"\n")
    assert result.exit_code == 2 and f"collect.log:{lines + 1}:9: error[HPC000]" in result.output, result.output


# --------------------------------------------------------------------------------- sku import names

@pytest.mark.parametrize("vm_size", ['"../../escaped"', '"a\\nname: injected"', "5", '["a"]', "NaN", "9" * 4400,
                                     '"-rf"', '"x/y"', '""', "null", '".."'])
def test_a_hostile_vm_size_writes_nothing_anywhere(tmp_path, vm_size):
    node = tmp_path / "node"
    shutil.copytree(HGX, node)
    (node / "azure-imds.json").write_text('{"location": "eastus",\n "vmSize": ' + vm_size + "}\n")
    with (node / "collect.log").open("a") as log:
        log.write("ok\tazure-imds.json\tcurl IMDS compute\n")
    (tmp_path / "o" / "a" / "b").mkdir(parents=True)
    before = sorted(tmp_path.rglob("*"))
    result = invoke(["sku", "import", "node", "-o", "o/a/b/"], tmp_path)
    assert result.exit_code == 2 and "internal error" not in result.output, result.output
    assert sorted(tmp_path.rglob("*")) == before
    assert not any(line.startswith("name: injected") for line in result.output.splitlines())


def test_a_bad_vm_size_is_located_in_the_metadata_file(tmp_path):
    node = tmp_path / "node"
    shutil.copytree(HGX, node)
    (node / "azure-imds.json").write_text('{"location": "eastus",\n "vmSize": "../../escaped"}\n')
    with (node / "collect.log").open("a") as log:
        log.write("ok\tazure-imds.json\tcurl IMDS compute\n")
    (tmp_path / "out").mkdir()
    result = invoke(["sku", "import", "node", "-o", "out"], tmp_path)
    assert result.exit_code == 2 and "azure-imds.json:2:1: error[HPC096]" in result.output, result.output


@pytest.mark.parametrize("name", ["../x", "a/b", "a\nb", "-", "x" * 101, "a..b"])
def test_a_bad_name_option_is_refused_before_writing(tmp_path, name):
    result = invoke(["sku", "import", str(HGX), "--name", name, "-o", "out/"], tmp_path)
    assert result.exit_code == 2 and "HPC096" in result.output, result.output
    assert not (tmp_path / "out").exists()


def test_a_failed_import_leaves_no_file_behind(tmp_path):
    """The SKU file is checked under its final name before it is written: a mismatch used to leave it there."""
    result = invoke(["sku", "import", str(HGX), "--name", "lab-a", "-o", "skus/lab-b.yaml"], tmp_path)
    assert result.exit_code == 2 and "does not match SKU name" in result.output, result.output
    assert not (tmp_path / "skus" / "lab-b.yaml").exists()
    assert not any((tmp_path / "skus").iterdir()) if (tmp_path / "skus").exists() else True


def test_an_import_replaces_a_planted_link_instead_of_writing_through_it(tmp_path):
    victim = tmp_path / "victim"
    victim.write_text("precious\n")
    (tmp_path / "skus").mkdir()
    os.symlink(victim, tmp_path / "skus" / "lab.yaml")
    result = invoke(["sku", "import", str(HGX), "--name", "lab", "-o", "skus/", "--force"], tmp_path)
    assert result.exit_code == 0, result.output
    assert victim.read_text() == "precious\n" and not (tmp_path / "skus" / "lab.yaml").is_symlink()


# ------------------------------------------------------------------------------------------ nccl-report

def test_nccl_report_json_is_valid_for_an_overflowing_number(tmp_path):
    """``1e999`` parsed as inf reached json.dumps as ``Infinity``: not JSON."""
    text = LOG.read_text()
    rows = [line for line in text.splitlines() if line.strip().startswith("8589934592")]
    assert rows, "the fixture log has an 8 GiB row"
    fields = rows[0].split()
    hostile = text.replace(rows[0], rows[0].replace(fields[7], "1e999", 1))
    (tmp_path / "run.log").write_text(hostile + "#  Avg bus bandwidth    : 1e999\n")
    result = invoke(["nccl-report", "run.log", "--format", "json", "--sku", "Standard_ND96amsr_A100_v4"], tmp_path)
    assert clean_exit(result) and result.exit_code in (0, 1, 2) and "internal error" not in result.output, result.output

    def refuse(constant):
        raise AssertionError(f"{constant} in the JSON output")

    if result.exit_code != 2:
        json.loads(result.stdout, parse_constant=refuse)


@pytest.mark.parametrize("row", ["9" * 5000 + " 1 float sum -1 1 1 1 0 1 1 1 0",
                                 "8 2 float sum -1 1e999 1e999 1e999 1e999 1 1 1 0",
                                 "8 2 float sum " + "9" * 5000 + " 1 1 1 0 1 1 1 0"])
def test_nccl_report_never_crashes_on_huge_numbers(tmp_path, row):
    text = LOG.read_text()
    (tmp_path / "run.log").write_text(text.replace("\n#  Avg bus bandwidth", f"\n{row}\n#  Avg bus bandwidth", 1)
                                      + "# Out of bounds values : " + "9" * 5000 + "\n# Avg bus bandwidth : 1.2.3\n")
    result = invoke(["nccl-report", "run.log", "--format", "json", "--sku", "Standard_ND96amsr_A100_v4"], tmp_path)
    assert clean_exit(result) and result.exit_code in (0, 1) and "internal error" not in result.output, result.output
    json.loads(result.stdout)


# ---------------------------------------------------------------------------------- YAML values, builds

TAGGED = ["!!int x", "!!float x", "!!bool maybe", "!!int 0x", "9" * 5000, "!!int " + "9" * 5000]


@pytest.mark.parametrize("value", TAGGED)
def test_a_value_its_tag_cannot_hold_is_located_in_build(tmp_path, value):
    text = SPEC.read_text()
    line = text.splitlines().index(next(l for l in text.splitlines() if "count: 2" in l)) + 1
    column = text.splitlines()[line - 1].index("2") + 1
    (tmp_path / "s.yaml").write_text(text.replace("count: 2", f"count: {value}", 1))
    result = invoke(["build", "s.yaml", "-o", "out"], tmp_path)
    assert result.exit_code == 2 and f"s.yaml:{line}:{column}: error[HPC001]" in result.output, result.output
    assert "set_int_max_str_digits" not in result.output and not (tmp_path / "out").exists()


@pytest.mark.skipif(GIT is None, reason="no git")
@pytest.mark.parametrize("value", TAGGED[:3] + TAGGED[4:5])
def test_a_value_its_tag_cannot_hold_is_located_in_review(tmp_path, value):
    _git_repo(tmp_path)
    (tmp_path / "specs").mkdir()
    (tmp_path / "specs" / "s.yaml").write_text(SPEC.read_text().replace("count: 2", f"count: {value}", 1))
    result = invoke(["review", "--base", "HEAD", "--format", "json"], tmp_path)
    assert clean_exit(result) and result.exit_code in (1, 2) and "internal error" not in result.output, result.output
    assert "HPC001" in result.output and "s.yaml" in result.output


def test_two_specs_with_one_name_in_separate_builds_refuse_to_share_a_directory(tmp_path):
    shutil.copy(SPEC, tmp_path / "a.yaml")
    (tmp_path / "b.yaml").write_text(SPEC.read_text().replace("count: 2", "count: 3", 1))
    assert invoke(["build", "a.yaml", "-o", "out", "-q"], tmp_path).exit_code == 0
    manifest = next((tmp_path / "out").glob("*/.hpcconf-manifest.json"))
    before = {p: p.read_bytes() for p in (tmp_path / "out").rglob("*") if p.is_file()}
    result = invoke(["build", "b.yaml", "-o", "out", "-q", "--force"], tmp_path)
    assert result.exit_code == 2 and "generated from a.yaml" in result.output, result.output
    assert {p: p.read_bytes() for p in (tmp_path / "out").rglob("*") if p.is_file()} == before
    assert json.loads(manifest.read_text())["spec"] == "a.yaml"
    (tmp_path / "a.yaml").rename(tmp_path / "c.yaml")  # a rename hands the directory over
    assert invoke(["build", "c.yaml", "-o", "out", "-q"], tmp_path).exit_code == 0


def test_a_fifo_manifest_is_refused_not_waited_on(tmp_path):
    shutil.copy(SPEC, tmp_path / "a.yaml")
    assert invoke(["build", "a.yaml", "-o", "out", "-q"], tmp_path).exit_code == 0
    manifest = next((tmp_path / "out").glob("*/.hpcconf-manifest.json"))
    manifest.unlink()
    os.mkfifo(manifest)
    for args in (["build", "a.yaml", "-o", "out", "--check"], ["build", "a.yaml", "-o", "out"]):
        result = invoke(args, tmp_path)
        assert clean_exit(result) and result.exit_code in (1, 2) and "internal error" not in result.output, \
            (args, result.output, result.exception)
    result = invoke(["lint", "out"], tmp_path)  # the manifest is not linted: only looked for, never waited on
    assert clean_exit(result) and result.exit_code in (0, 1) and "internal error" not in result.output, result.output


def test_a_huge_file_in_the_output_directory_is_refused_unread(tmp_path):
    shutil.copy(SPEC, tmp_path / "a.yaml")
    assert invoke(["build", "a.yaml", "-o", "out", "-q"], tmp_path).exit_code == 0
    target = next((tmp_path / "out").glob("*/aks/volcano-job.yaml"))
    with open(target, "r+b") as handle:
        handle.truncate(5 * 1024 ** 3)  # sparse: 5 GiB by fstat, nothing on disk
    for args in (["build", "a.yaml", "-o", "out", "--check"], ["build", "a.yaml", "-o", "out", "--force"]):
        result = invoke(args, tmp_path)
        assert result.exit_code == 2 and "larger than 64 MiB" in result.output, result.output


def test_a_directory_argument_linked_out_of_the_tree_is_not_walked(tmp_path):
    os.symlink("/etc", tmp_path / "configs")
    result = invoke(["lint", "configs"], tmp_path)
    assert_refused(result, "HPC093", "configs", exits=(1,))
    assert "passwd" not in result.output and "1 file checked" in result.output
