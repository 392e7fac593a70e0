"""The output directory has one owner (issue #23 item 8): hpcconf.output_dir reads the manifest, compares with
disk, refuses hand edits, writes atomically and makes the patches; `hpcconf build` only chooses the action."""

from __future__ import annotations

import ast
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1] / "hpcconf"
# Touching files or making patches: what only the owner does.
FILE_SYSTEM_MODULES = {"os", "stat", "shutil", "tempfile", "difflib", "fcntl", "hashlib", "ctypes"}


def _imported(path: Path) -> set[str]:
    names: set[str] = set()
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.Import):
            names.update(alias.name.split(".")[0] for alias in node.names)
        elif isinstance(node, ast.ImportFrom) and not node.level and node.module:
            names.add(node.module.split(".")[0])
    return names


def test_build_command_touches_no_file_of_the_output_directory():
    assert _imported(ROOT / "build_command.py") & FILE_SYSTEM_MODULES == set()


def test_build_command_calls_one_entry_per_action():
    tree = ast.parse((ROOT / "build_command.py").read_text(encoding="utf-8"))
    used = {node.attr for node in ast.walk(tree)
            if isinstance(node, ast.Attribute) and isinstance(node.value, ast.Name) and node.value.id == "output_dir"}
    assert used - {"EXIT_STALE", "OutputRefused"} == {"check", "diff", "write"}


def test_only_the_owner_names_the_manifest_file():
    """The linter recognises a cluster directory by the manifest's name (it may not import the owner)."""
    naming = sorted(p.relative_to(ROOT).as_posix() for p in ROOT.rglob("*.py")
                    if any(isinstance(node, ast.Constant) and node.value == ".hpcconf-manifest.json"
                           for node in ast.walk(ast.parse(p.read_text(encoding="utf-8")))))
    assert naming == ["lint/engine.py", "output_dir.py"]
