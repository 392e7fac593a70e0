"""Env files and shell scripts: assignments with shell quoting and positions."""

from __future__ import annotations

import re

from hpcconf.parsers.env_file import parse_env_file


def _code_blocks(text: str) -> list[str]:
    """The ``` highlight blocks of a seed write-up (its shell snippets)."""
    return re.findall(r"``` highlight\n(.*?)```", text, re.S)


def test_seed_001_command_prefixes_with_line_continuations(shared_dir):
    text = next((shared_dir / "seeds").glob("001_*.txt")).read_text()
    block = next(b for b in _code_blocks(text) if "UCC_TL_NCCL_TUNE=allreduce" in b and "srun" in b)
    env = parse_env_file(block)
    found = {a.key: a.value for a in env.assignments}
    assert found == {"OMPI_MCA_coll_ucc_enable": "1", "OMPI_MCA_coll_ucc_priority": "100",
                     "UCC_TL_NCCL_TUNE": "allreduce:cuda:inf"}
    # they prefix the srun command (backslash-newline joins the lines), so they apply to it only
    assert all(a.command_prefix and not a.exported for a in env.assignments)
    tune = next(a for a in env.assignments if a.key == "UCC_TL_NCCL_TUNE")
    line = block.splitlines()[tune.value_line - 1]
    assert line[tune.value_column - 1:tune.value_end_column - 1] == "allreduce:cuda:inf"
    assert env.values() == {}  # nothing stays set after the command


def test_seed_004_ucx_command_lines(shared_dir):
    text = next((shared_dir / "seeds").glob("004_*.txt")).read_text()
    lines = [line[2:] for line in text.splitlines() if line.startswith("$ UCX_")]
    assert len(lines) >= 5
    for line in lines:
        env = parse_env_file(line)
        keys = [a.key for a in env.assignments]
        assert keys[:2] == ["UCX_MEMTYPE_CACHE", "UCX_SOCKADDR_TLS_PRIORITY"] and "UCX_TLS" in keys
        tls = next(a for a in env.assignments if a.key == "UCX_TLS")
        assert tls.value == re.search(r"UCX_TLS=(\S+)", line).group(1)
        assert line[tls.value_column - 1:tls.value_end_column - 1] == tls.value
        assert tls.command_prefix


def test_exports_quotes_and_comments():
    text = (
        "#!/bin/bash\n"
        "# NCCL settings\n"
        "export NCCL_DEBUG=INFO   # trailing comment\n"
        "export UCX_TLS=\"rc,sm\" UCX_NET_DEVICES='mlx5_0:1'\n"
        "NCCL_IB_HCA=^mlx5_0:1#not-a-comment\n"
        "export PATH=$PATH:/opt/bin\n"
        "X=\"multi\n"
        "line\"\n"
        "Y='a\\b'\n"
        "Z=a\\ b\n"
        "export NCCL_SOCKET_IFNAME\n"
    )
    env = parse_env_file(text)
    values = env.values()
    assert values["NCCL_DEBUG"] == "INFO"
    assert values["UCX_TLS"] == "rc,sm" and values["UCX_NET_DEVICES"] == "mlx5_0:1"
    assert values["NCCL_IB_HCA"] == "^mlx5_0:1#not-a-comment"  # '#' inside a word is literal
    assert values["X"] == "multi\nline" and values["Y"] == "a\\b" and values["Z"] == "a b"
    path = env.last("PATH")
    assert path.expands and path.exported
    tls = env.last("UCX_TLS")
    assert (tls.line, tls.key_column, tls.value_column, tls.value_end_column) == (4, 8, 16, 23)
    assert tls.raw_value == '"rc,sm"' and tls.quoted
    x = env.last("X")
    assert (x.value_line, x.value_end_line) == (7, 8)
    assert env.exports == [("NCCL_SOCKET_IFNAME", 11)]
    assert env.problems == []


def test_later_assignment_wins():
    env = parse_env_file("NCCL_ALGO=Ring\nNCCL_ALGO=Tree\n")
    assert env.values() == {"NCCL_ALGO": "Tree"} and env.last("NCCL_ALGO").line == 2


def test_problems():
    env = parse_env_file("FOO = bar\nA=\"open\nB=2\n")
    kinds = [(p.kind, p.line) for p in env.problems]
    assert ("space-around-eq", 1) in kinds and ("unterminated-quote", 2) in kinds
    strict = parse_env_file("A=1\nmpirun ./x\n", strict=True)
    assert [(p.kind, p.line) for p in strict.problems] == [("not-assignment", 2)]
    assert parse_env_file("A=1\nmpirun ./x\n").problems == []  # script mode skips commands


def test_semicolons_and_double_quote_escapes():
    env = parse_env_file('A=1; B="x\\"y\\$z"; echo hi\n')
    assert env.values() == {"A": "1", "B": 'x"y$z'}
    assert not env.last("B").expands


def test_exports_inside_a_quoted_shell_payload_are_read_where_they_stand():
    """AMD Primus run_slurm.sh (review20y): `srun bash -c '... docker run ... bash -cx "... export NCCL_X=56"'`;
    the nested payloads' exports reach RCCL, at their own lines and columns. An escaped value in a
    double-quoted payload is not read as written; a quoted argument of another program is no script."""
    text = ("srun -N 2 bash -c '\n"
            "  NNODES='\"${NNODES}\"'\n"
            "  docker run img bash -cx \"\n"
            "    export NCCL_MAX_P2P_CHANNELS=56\n"
            "    export PYTHONPATH=\\\"\\${X}\\\"\n"
            "  \"\n"
            "'\n"
            "sh -lc \"export NCCL_DEBUG=INFO; all_reduce_perf\"\n"
            "echo 'export NCCL_ALGO=Foo'\n")
    found = {(a.key, a.line, a.key_column, a.value, a.exported) for a in parse_env_file(text).assignments}
    assert found == {("NNODES", 2, 3, '"${NNODES}"', False), ("NCCL_MAX_P2P_CHANNELS", 4, 12, "56", True),
                     ("NCCL_DEBUG", 8, 16, "INFO", True)}


def test_comments_and_blank_runs_end_where_a_shell_ends_them():
    """The lexer skips a comment to the end of its line and a run of blanks at once; the edges stay a shell's."""
    text = ("\t \t export A=1 \t# x='unclosed ; B=2 \\\n"
            "C=3#d ; D=4\n"
            "   # only a comment, no newline at the end: E=5")
    parsed = parse_env_file(text)
    assert [(a.key, a.value, a.line, a.key_column) for a in parsed.assignments] == \
        [("A", "1", 1, 12), ("C", "3#d", 2, 1), ("D", "4", 2, 9)]
    assert parsed.problems == []
