"""Shared helpers of the AKS targets: YAML documents with a generated-by header."""

from __future__ import annotations

import json
from typing import Any

from ruamel.yaml.scalarstring import LiteralScalarString

from ...resolve import ResolvedCluster
from ...templating import generated_by
from ...yamlio import dump_yaml

OUT_DIR = "aks"


def header(cluster: ResolvedCluster, *lines: str) -> str:
    return "".join(f"# {line}\n" for line in (generated_by(cluster.spec_file), *lines))


def yaml_file(cluster: ResolvedCluster, documents: list[Any], *comment: str) -> str:
    """One or more YAML documents, separated by ``---``, under one header."""
    body = "---\n".join(dump_yaml(doc) for doc in documents)
    return header(cluster, *comment) + body


def block(text: str) -> LiteralScalarString:
    """A multi-line string written as a YAML ``|`` block (scripts, JSON configs)."""
    return LiteralScalarString(text if text.endswith("\n") else text + "\n")


def json_block(value: Any) -> LiteralScalarString:
    return block(json.dumps(value, indent=2))


def path(name: str) -> str:
    return f"{OUT_DIR}/{name}"
