"""Deterministic YAML output: block style, keys in the order given, no aliases."""

from __future__ import annotations

from io import StringIO
from typing import Any

from ruamel.yaml import YAML


def dump_yaml(data: Any) -> str:
    yaml = YAML(typ="rt")
    yaml.default_flow_style = False
    yaml.indent(mapping=2, sequence=4, offset=2)
    yaml.width = 4096
    yaml.representer.ignore_aliases = lambda *args: True
    stream = StringIO()
    yaml.dump(data, stream)
    return stream.getvalue()
