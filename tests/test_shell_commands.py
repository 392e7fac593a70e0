"""The programs a script runs, as lint rules read them (hpcconf.parsers.shell_commands): text is not a command."""

import pytest

from hpcconf.parsers.shell_commands import container_commands, script_commands


@pytest.mark.parametrize("script,programs", [
    ("echo 'if this fails, run nvidia-smi on the node'; sleep infinity", ["echo", "sleep"]),
    ("# nvidia-smi\nls", ["ls"]),
    ('logger "see dcgmi output"', ["logger"]),
    ("X=1 timeout -k 5 60 /usr/bin/nvidia-smi -q", ["nvidia-smi"]),
    ('echo "gpus: $(nvidia-smi -L | wc -l)"', ["nvidia-smi", "wc", "echo"]),
    ("if ! nvidia-smi; then exit 1; fi", ["nvidia-smi", "exit"]),
    ('bash -c "dcgmi diag -r 1"', ["bash", "dcgmi"]),
    ("echo `nvbandwidth`", ["nvbandwidth", "echo"]),
    ("a && b || c | d &", ["a", "b", "c", "d"]),
    ("mpirun -np 2 \\\n  all_reduce_perf", ["mpirun"]),
])
def test_script_commands(script, programs):
    assert list(script_commands(script)) == programs


def test_container_command_and_args():
    assert container_commands({"command": ["bash", "-c", "echo nvidia-smi; sleep 1"]}) == ["bash", "echo", "sleep"]
    assert container_commands({"command": ["nvidia-smi"], "args": ["-L"]}) == ["nvidia-smi"]
    # No command: the image's entrypoint (often a shell) reads each args entry.
    assert "nvidia-smi" in container_commands({"args": ["-c", "nvidia-smi -q"]})
