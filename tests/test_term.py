"""Colour and progress as a user sees them: in a pseudo-terminal, and absent when piped or with NO_COLOR.

Each case runs the real `hpcconf` (or a small script around hpcconf.term) with its stdout and stderr
on a pseudo-terminal (os.openpty), or on pipes, and reads the bytes it wrote.
"""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

pytestmark = pytest.mark.skipif(not hasattr(os, "openpty"), reason="no pseudo-terminals on this platform")
BIN = Path(sys.executable).parent
HPCCONF = str(BIN / "hpcconf") if (BIN / "hpcconf").exists() else shutil.which("hpcconf")
needs_command = pytest.mark.skipif(HPCCONF is None, reason="the hpcconf command is not installed (pip install -e .)")
REPO = Path(__file__).resolve().parents[1]
ANSI = re.compile(r"\x1b\[[0-9;?]*[A-Za-z]")
BAD_CONF = "NCCL_ALGO=Foo\nNCCL_DEBUG = INFO\n"


def _env(**extra: str) -> dict:
    env = {k: v for k, v in os.environ.items() if k not in ("NO_COLOR", "FORCE_COLOR", "TERM", "CI")}
    return {**env, "TERM": "xterm-256color", "COLUMNS": "200", **extra}


def in_terminal(args: list[str], cwd: Path, **env: str) -> str:
    """What a terminal shows: stdout and stderr of ``args`` on one pseudo-terminal."""
    leader, follower = os.openpty()
    done = subprocess.Popen(args, cwd=cwd, env=_env(**env), stdin=subprocess.DEVNULL, stdout=follower, stderr=follower)
    os.close(follower)
    chunks = []
    while True:
        try:
            chunk = os.read(leader, 65536)
        except OSError:  # EIO: the last writer closed
            break
        if not chunk:
            break
        chunks.append(chunk)
    os.close(leader)
    done.wait(timeout=120)
    return b"".join(chunks).decode("utf-8", "replace").replace("\r\n", "\n")


def piped(args: list[str], cwd: Path, **env: str) -> subprocess.CompletedProcess:
    return subprocess.run(args, cwd=cwd, env=_env(**env), capture_output=True, text=True, timeout=120)


@pytest.fixture
def bad_conf(tmp_path) -> Path:
    (tmp_path / "nccl.conf").write_text(BAD_CONF)
    return tmp_path


@needs_command
def test_findings_are_coloured_on_a_terminal_and_the_text_is_the_same(bad_conf):
    shown = in_terminal([HPCCONF, "lint", "nccl.conf"], bad_conf)
    assert "\x1b[1;31merror[NCCL011]\x1b[0m" in shown  # the severity in bold red
    assert "\x1b[1mnccl.conf:1:11\x1b[0m" in shown       # the location in bold
    plain = piped([HPCCONF, "lint", "nccl.conf"], bad_conf)
    assert ANSI.sub("", shown) == plain.stdout  # colour adds styles, never characters


@needs_command
@pytest.mark.parametrize("env, option", [({"NO_COLOR": "1"}, []), ({}, ["--color", "never"]),
                                         ({"FORCE_COLOR": "1"}, ["--color", "never"])])
def test_no_colour_on_a_terminal_with_no_color_or_color_never(bad_conf, env, option):
    shown = in_terminal([HPCCONF, "lint", "nccl.conf", *option], bad_conf, **env)
    assert "error[NCCL011]" in shown and not ANSI.search(shown), shown


@needs_command
@pytest.mark.parametrize("env, option", [({}, []), ({"NO_COLOR": ""}, [])])  # NO_COLOR set but empty: no effect
def test_no_colour_when_piped(bad_conf, env, option):
    done = piped([HPCCONF, "lint", "nccl.conf", *option], bad_conf, **env)
    assert "error[NCCL011]" in done.stdout and not ANSI.search(done.stdout + done.stderr)


@needs_command
@pytest.mark.parametrize("env, option", [({"FORCE_COLOR": "1"}, []), ({"NO_COLOR": "1"}, ["--color", "always"])])
def test_force_color_and_color_always_colour_a_pipe(bad_conf, env, option):
    done = piped([HPCCONF, "lint", "nccl.conf", *option], bad_conf, **env)
    assert "\x1b[1;31merror[NCCL011]\x1b[0m" in done.stdout


@needs_command
def test_machine_formats_are_never_coloured(bad_conf):
    for fmt in ("json", "sarif", "github"):
        assert not ANSI.search(piped([HPCCONF, "lint", "nccl.conf", "--format", fmt], bad_conf, FORCE_COLOR="1").stdout)


@needs_command
def test_a_bad_color_value_is_a_usage_error(bad_conf):
    done = piped([HPCCONF, "lint", "nccl.conf", "--color", "sometimes"], bad_conf)
    assert done.returncode == 2 and "--color must be one of auto, always, never" in done.stderr


PROGRESS = """
import sys, time
from hpcconf.term import working
with working("hpcconf lint big-repo"):
    time.sleep(float(sys.argv[1]))
print("done")
"""


def test_progress_shows_on_a_terminal_for_work_that_takes_more_than_a_moment(tmp_path):
    shown = in_terminal([sys.executable, "-c", PROGRESS, "1.5"], tmp_path)
    assert "hpcconf lint big-repo" in shown and re.search(r"0:00:0\d", shown)  # spinner, message, elapsed time
    assert ANSI.sub("", shown).rstrip().endswith("done")


def test_no_progress_for_a_moment_of_work_nor_when_piped(tmp_path):
    quick = in_terminal([sys.executable, "-c", PROGRESS, "0.05"], tmp_path)
    assert quick == "done\n"
    slow_piped = piped([sys.executable, "-c", PROGRESS, "1.5"], tmp_path)
    assert slow_piped.stdout == "done\n" and slow_piped.stderr == ""


@needs_command
def test_a_slow_lint_piped_prints_only_its_report(tmp_path):
    done = piped([HPCCONF, "lint", str(REPO / "examples"), "--format", "json"], tmp_path)
    assert done.stdout.startswith("{") and not ANSI.search(done.stderr) and "hpcconf lint" not in done.stderr


@needs_command
def test_a_refused_build_colours_its_findings_on_a_terminal_and_not_when_piped(tmp_path):
    spec = tmp_path / "bad.yaml"
    spec.write_text("apiVersion: hpcconf/v1\nkind: Cluster\nmetadata: {name: demo, location: southcentralus}\n"
                    "platforms: [aks]\npools:\n  - {name: gpu, sku: Standard_ND96amsr_A100_v4, count: 2, placment: x}\n")
    shown = in_terminal([HPCCONF, "build", "bad.yaml", "-o", "out"], tmp_path)
    assert "\x1b[1;31merror[" in shown and "build refused" in shown
    plain = piped([HPCCONF, "build", "bad.yaml", "-o", "out"], tmp_path)
    assert plain.returncode != 0 and "error[" in plain.stderr and not ANSI.search(plain.stderr)
    assert ANSI.sub("", shown).strip() == (plain.stdout + plain.stderr).strip()
    no_color = in_terminal([HPCCONF, "build", "bad.yaml", "-o", "out"], tmp_path, NO_COLOR="1")
    assert not ANSI.search(no_color)
