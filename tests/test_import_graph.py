"""hpcconf's module graph has no import cycles: every import counts, deferred (inside a function) and
``TYPE_CHECKING`` ones included, since a cycle hidden behind a late import is still two modules that
cannot be understood, tested or moved apart. import-linter's ``acyclic_siblings`` judges packages as
wholes (``hpcconf.lint`` against ``hpcconf.pipeline``), not modules, so the graph is read here from the ast.
"""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1] / "hpcconf"

# Cycles that remain, each with the reason and who removes it. The test fails for any other cycle;
# an entry may vanish (then delete it here). None remain: the resolve loop became resolve.pool <- resolve.model
# <- the platform modules <- resolve (ResolvedCluster), and the renderer that quotes source lines left
# diagnostics for diagnostic_text.
KNOWN_CYCLES: set[frozenset[str]] = set()


def module_graph(root: Path) -> dict[str, set[str]]:
    """Module name -> the hpcconf modules it imports (a package is its ``__init__``)."""
    files = {}
    for path in root.rglob("*.py"):
        parts = list(path.relative_to(root.parent).with_suffix("").parts)
        files[".".join(parts[:-1] if parts[-1] == "__init__" else parts)] = path
    graph: dict[str, set[str]] = {}
    for name, path in files.items():
        package = name if path.name == "__init__.py" else name.rpartition(".")[0]
        targets: set[str] = set()
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.Import):
                targets.update(alias.name for alias in node.names)
            elif isinstance(node, ast.ImportFrom):
                base = node.module or ""
                if node.level:
                    anchor = package.split(".")[: len(package.split(".")) - (node.level - 1)]
                    base = ".".join([*anchor, base] if base else anchor)
                # `from package import module` imports the module; `from module import name` the module.
                targets.update(f"{base}.{alias.name}" if f"{base}.{alias.name}" in files else base for alias in node.names)
        graph[name] = {_owner(target, files) for target in targets} - {None, name}  # type: ignore[misc]
    return graph


def _owner(target: str, files: dict[str, Path]) -> str | None:
    while target and target not in files:
        target = target.rpartition(".")[0]
    return target or None


def cycles(graph: dict[str, set[str]]) -> list[frozenset[str]]:
    """The strongly connected components of more than one module (Tarjan, iterative)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    found: list[frozenset[str]] = []
    for start in sorted(graph):
        if start in index:
            continue
        work = [(start, iter(sorted(graph[start])))]
        index[start] = low[start] = len(index)
        stack.append(start)
        on_stack.add(start)
        while work:
            node, successors = work[-1]
            advanced = False
            for successor in successors:
                if successor not in index:
                    index[successor] = low[successor] = len(index)
                    stack.append(successor)
                    on_stack.add(successor)
                    work.append((successor, iter(sorted(graph[successor]))))
                    advanced = True
                    break
                if successor in on_stack:
                    low[node] = min(low[node], index[successor])
            if advanced:
                continue
            work.pop()
            if work:
                low[work[-1][0]] = min(low[work[-1][0]], low[node])
            if low[node] == index[node]:
                component = set()
                while True:
                    member = stack.pop()
                    on_stack.discard(member)
                    component.add(member)
                    if member == node:
                        break
                if len(component) > 1:
                    found.append(frozenset(component))
    return found


def test_hpcconf_has_no_import_cycles() -> None:
    unexpected = [sorted(c) for c in cycles(module_graph(ROOT)) if c not in KNOWN_CYCLES]
    assert not unexpected, f"import cycles: {unexpected}"


@pytest.mark.parametrize("edges, expected", [
    ({"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a"}}, [frozenset("abc")]),
    ({"a": {"b"}, "b": set()}, []),
])
def test_cycle_finder_sees_a_loop(edges: dict[str, set[str]], expected: list[frozenset[str]]) -> None:
    assert cycles(edges) == expected


def test_graph_counts_deferred_and_type_checking_imports(tmp_path: Path) -> None:
    package = tmp_path / "pkg"
    package.mkdir()
    (package / "__init__.py").write_text("")
    (package / "one.py").write_text("from typing import TYPE_CHECKING\nif TYPE_CHECKING:\n    from .two import X\n")
    (package / "two.py").write_text("def f():\n    from . import one\n")
    assert cycles(module_graph(package)) == [frozenset({"pkg.one", "pkg.two"})]
