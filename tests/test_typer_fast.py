"""hpcconf.typer_fast: plain CLI values are coerced exactly as typer's own adapters coerce them, without
importing pydantic; other types keep typer's coercion and its error messages. Each case runs a small
typer app twice in fresh processes, with and without the fast path, and compares what the command saw."""

from __future__ import annotations

import json
import subprocess
import sys

import pytest

APP = """
import json, sys
from pathlib import Path
from typing import List, Optional
import typer
from typer.testing import CliRunner
if sys.argv[1] == "fast":
    from hpcconf import typer_fast
    typer_fast.install()
seen = {}
app = typer.Typer()

@app.command()
def main(paths: List[Path] = typer.Argument(None), name: str = typer.Option("x", "--name"),
         out: Optional[Path] = typer.Option(None, "--out"), flag: bool = typer.Option(False, "--flag"),
         codes: Optional[List[str]] = typer.Option(None, "--code"), count: Optional[int] = typer.Option(None, "--count")):
    seen.update(paths=repr(paths), name=repr(name), out=repr(out), flag=repr(flag), codes=repr(codes), count=repr(count))

result = CliRunner().invoke(app, json.loads(sys.argv[2]), terminal_width=200)
print(json.dumps({"exit": result.exit_code, "seen": seen, "output": result.output,
                  "pydantic": "pydantic" in sys.modules}))
"""

CASES = [
    [],
    ["a", "b/c", "--name", "n", "--out", "o", "--flag", "--code", "X", "--code", "Y", "--count", "3"],
    ["", "--out", "", "--name", ""],
    ["--count", "three"],
]


def _run(mode: str, args: list[str]) -> dict:
    out = subprocess.run([sys.executable, "-c", APP, mode, json.dumps(args)], capture_output=True, text=True, check=True)
    return json.loads(out.stdout)


@pytest.mark.parametrize("args", CASES, ids=lambda a: " ".join(a) or "defaults")
def test_the_fast_path_sees_and_says_what_typer_does(args):
    fast, plain = _run("fast", args), _run("plain", args)
    assert {k: fast[k] for k in ("exit", "seen", "output")} == {k: plain[k] for k in ("exit", "seen", "output")}


def test_plain_values_need_no_pydantic():
    assert not _run("fast", CASES[1][:-2])["pydantic"]  # all but --count (an int: typer's adapter)


def test_the_installed_typer_is_in_the_pinned_range_and_the_patch_took_effect():
    """typer_fast reaches into typer's private coercion layer: pyproject pins the minor it was written for,
    and a typer whose internals moved must fail here, not silently load pydantic again."""
    import importlib.metadata
    import sys
    from pathlib import Path

    if sys.version_info >= (3, 11):
        import tomllib
    else:
        import tomli as tomllib

    from packaging.requirements import Requirement

    import hpcconf.cli  # noqa: F401  (installs the patch)

    project = tomllib.loads((Path(__file__).resolve().parents[1] / "pyproject.toml").read_text())["project"]
    (typer_requirement,) = [Requirement(r) for r in project["dependencies"] if Requirement(r).name == "typer"]
    assert typer_requirement.specifier.contains(importlib.metadata.version("typer"))
    assert len(typer_requirement.specifier) == 2 and any(s.operator == "<" for s in typer_requirement.specifier)

    from typer import core

    from hpcconf import typer_fast as typer_fast_module

    patched = core._TyperParameter.get_runtime_param
    assert patched.__module__ == typer_fast_module.__name__
