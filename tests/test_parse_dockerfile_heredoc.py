"""BuildKit heredocs in Dockerfiles: the body belongs to its instruction (the reason hpcconf keeps its parser)."""

from __future__ import annotations

from hpcconf.parsers.dockerfile import parse_dockerfile

HEREDOC = """\
# syntax=docker/dockerfile:1
FROM nvcr.io/nvidia/pytorch:24.05-py3 AS base
RUN <<EOT
apt-get update
apt-get install -y ibverbs-utils
EOT
COPY <<-"EOF" /etc/nccl.conf
\tNCCL_DEBUG=WARN
\tEOF
ENV NCCL_DEBUG=INFO
"""


def test_a_heredoc_body_is_its_instructions_script_not_instructions_of_its_own():
    model = parse_dockerfile(HEREDOC)
    assert [(i.keyword, i.line, i.end_line) for i in model.instructions] == [
        ("FROM", 2, 2), ("RUN", 3, 6), ("COPY", 7, 9), ("ENV", 10, 10)]
    run = model.instructions[1]
    assert run.arguments.splitlines() == ["<<EOT", "apt-get update", "apt-get install -y ibverbs-utils"]
    assert model.instructions[2].arguments.splitlines()[1] == "NCCL_DEBUG=WARN"  # <<- strips leading tabs


def test_an_unclosed_heredoc_takes_the_rest_of_the_file_without_crashing():
    model = parse_dockerfile("FROM x:1\nRUN <<EOT\necho hi\n")
    assert [(i.keyword, i.end_line) for i in model.instructions] == [("FROM", 1), ("RUN", 3)]
