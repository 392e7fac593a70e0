"""The tests themselves: none that cannot fail.

An AST scan of every ``tests/**/test_*.py`` finds

- ``assert`` on constants or on literals only (``assert True``, ``assert not math.isnan(0.0)``,
  ``assert 1 == 1``): the expression names nothing of hpcconf and no value the test computed;
- ``a and b or c`` in an assert without parentheses around the ``and``: ``assert code == 0 and
  "x" in out or "y" in out`` passes whenever ``"y"`` is printed, whatever the exit status;
- test functions that assert nothing: no ``assert``, no ``pytest.raises``/``fail``/``warns``, no
  call of a helper that does, and no call that raises on failure by contract (a schema
  ``validate``, ``subprocess.run(..., check=True)``, ``check_call``/``check_output``, the build's
  ``compile_spec``).

Also: ``--update-snapshots`` is refused with ``CI`` set and fails the run that rewrote a
snapshot; the hypothesis ``ci`` profile is derandomised.
"""

from __future__ import annotations

import ast
import builtins
import os
import subprocess
import sys
import textwrap
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
TESTS = REPO / "tests"
# Calls that raise when what they check is false: as good as an assert.
RAISING_CALLS = {"raises", "fail", "warns", "deprecated_call", "validate", "check_call", "check_output",
                 "compile_spec"}
# Modules of the test suite itself: names imported from them are code under test's helpers, not outside values.
TEST_MODULES = {"conftest", "fixture_context", "fuzz_profiles"}
BUILTINS = set(dir(builtins))


def _callee(call: ast.Call) -> str | None:
    func = call.func
    return func.attr if isinstance(func, ast.Attribute) else func.id if isinstance(func, ast.Name) else None


def _outside_names(tree: ast.Module) -> set[str]:
    """Names bound by imports of modules other than hpcconf and the suite's own helpers."""
    names: set[str] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            names.update((a.asname or a.name).split(".")[0] for a in node.names
                         if a.name.split(".")[0] not in {"hpcconf", "tests"} | TEST_MODULES)
        elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module \
                and node.module.split(".")[0] not in {"hpcconf", "tests"} | TEST_MODULES:
            names.update(a.asname or a.name for a in node.names)
    return names


def _on_literals_only(test: ast.expr, outside: set[str]) -> bool:
    return all(n.id in outside or n.id in BUILTINS for n in ast.walk(test) if isinstance(n, ast.Name))


def _unparenthesised_and_in_or(test: ast.expr, lines: list[str]) -> list[ast.expr]:
    slips = []
    for node in ast.walk(test):
        if isinstance(node, ast.BoolOp) and isinstance(node.op, ast.Or):
            for value in node.values:
                if isinstance(value, ast.BoolOp) and isinstance(value.op, ast.And):
                    # the AST drops parentheses; the source keeps them right before the operand
                    before, row = lines[value.lineno - 1][:value.col_offset].rstrip(), value.lineno - 1
                    while not before and row > 0:
                        row -= 1
                        before = lines[row].rstrip()
                    if not before.endswith("("):
                        slips.append(node)
    return slips


def _raises_directly(function: ast.AST) -> bool:
    for node in ast.walk(function):
        if isinstance(node, (ast.Assert, ast.Raise)):
            return True
        if isinstance(node, ast.Call):
            name = _callee(node)
            if name in RAISING_CALLS:
                return True
            if name == "run" and any(k.arg == "check" and isinstance(k.value, ast.Constant) and k.value.value
                                     for k in node.keywords):
                return True
    return False


def scan(source: str, filename: str = "<test>") -> list[str]:
    """The problems of one test module's source, as ``line: what``."""
    tree = ast.parse(source, filename)
    lines = source.splitlines()
    outside = _outside_names(tree)
    problems = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Assert):
            if _on_literals_only(node.test, outside):
                problems.append(f"{node.lineno}: assert on constants or literals only: {ast.unparse(node.test)}")
            for slip in _unparenthesised_and_in_or(node.test, lines):
                problems.append(f"{node.lineno}: 'and' inside 'or' without parentheses: {ast.unparse(slip)[:100]}")
    functions = {n.name: n for n in ast.walk(tree) if isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef))}
    asserting = {name for name, function in functions.items() if _raises_directly(function)}
    grown = True
    while grown:  # helpers calling helpers that assert
        grown = False
        for name, function in functions.items():
            if name not in asserting and any(isinstance(n, ast.Call) and _callee(n) in asserting
                                             for n in ast.walk(function)):
                asserting.add(name)
                grown = True
    for name, function in functions.items():
        if name.startswith("test") and name not in asserting:
            problems.append(f"{function.lineno}: {name} asserts nothing")
    return sorted(problems, key=lambda p: int(p.split(":")[0]))


def test_no_test_that_cannot_fail():
    problems = [f"{path.relative_to(REPO)}:{problem}" for path in sorted(TESTS.rglob("test_*.py"))
                for problem in scan(path.read_text(encoding="utf-8"), str(path))]
    assert not problems, "tests that cannot fail:\n" + "\n".join(problems)


def test_the_scan_finds_each_kind_of_cannot_fail():
    source = textwrap.dedent('''
        import math
        from hpcconf.lint import lint_text

        def test_constant():
            lint_text("x", "f")
            assert True

        def test_literals():
            result = lint_text("x", "f")
            assert result
            assert not math.isnan(0.0)
            assert 1 == 1

        def test_nothing():
            lint_text("x", "f")

        def test_precedence(result):
            assert result.code == 0 and "x" in result.out or "no floor" in result.out
    ''')
    assert scan(source) == [
        "7: assert on constants or literals only: True",
        "12: assert on constants or literals only: not math.isnan(0.0)",
        "13: assert on constants or literals only: 1 == 1",
        "15: test_nothing asserts nothing",
        "19: 'and' inside 'or' without parentheses: result.code == 0 and 'x' in result.out or 'no floor' in result.out",
    ]


def test_the_scan_accepts_what_can_fail():
    source = textwrap.dedent('''
        import subprocess
        import pytest
        from hpcconf.spec import load

        def _check(text):
            assert load.parse(text)

        def _via_helper(text):
            _check(text)

        def test_helper():
            _via_helper("x")

        def test_raises():
            with pytest.raises(ValueError):
                load.parse("")

        def test_parenthesised(result):
            assert result.code == 0 and ("x" in result.out or "y" in result.out)
            assert (result.code == 0 and "x" in result.out) or result.code == 2

        def test_script():
            subprocess.run(["bash", "-n", "x.sh"], check=True)

        def test_pure_function_of_literals():
            assert load.size("1 MiB") == 1048576
    ''')
    assert scan(source) == []


def _pytest(*args: str, ci: str | None) -> subprocess.CompletedProcess:
    env = {k: v for k, v in os.environ.items() if k not in ("CI", "HPCCONF_UPDATE_SNAPSHOTS")}
    if ci is not None:
        env["CI"] = ci
    return subprocess.run([sys.executable, "-m", "pytest", "-p", "no:cacheprovider", *args], cwd=REPO, env=env,
                          capture_output=True, text=True, timeout=300)


def test_update_snapshots_is_refused_in_ci_and_fails_the_run_that_rewrote_one():
    snapshot = TESTS / "rules" / "NCCL001" / "expect.snap"
    recorded = snapshot.read_bytes()
    refused = _pytest("tests/rules/test_rule_snapshots.py", "-k", "NCCL001", "--update-snapshots", ci="true")
    assert refused.returncode == 4 and "refused when CI is set" in refused.stderr, (refused.stdout, refused.stderr)
    assert snapshot.read_bytes() == recorded
    try:
        snapshot.write_bytes(recorded.replace(b"error[NCCL001]", b"info[NCCL001]"))  # a stale snapshot
        rewrote = _pytest("tests/rules/test_rule_snapshots.py", "-k", "NCCL001", "--update-snapshots", ci=None)
        assert snapshot.read_bytes() == recorded  # rewritten from the rendering ...
        assert rewrote.returncode == 1 and "rewrote tests/rules/NCCL001/expect.snap" in rewrote.stdout, rewrote.stdout
    finally:  # ... and the run that did it is red, so nobody reads it as a pass
        snapshot.write_bytes(recorded)


def test_hypothesis_ci_profile_is_derandomised_with_a_database_in_the_checkout():
    sys.path.insert(0, str(TESTS))
    import fuzz_profiles
    from hypothesis import core, given, settings
    from hypothesis import strategies as st

    if fuzz_profiles.PROFILE != "ci":
        return  # a thorough campaign is random on purpose
    assert core.global_force_seed == fuzz_profiles.SEED
    assert str(settings.default.database.path).startswith(str(REPO / ".hypothesis"))

    def drawn() -> list[int]:
        seen: list[int] = []

        @settings(max_examples=20, database=None)
        @given(st.integers())
        def record(value):
            seen.append(value)

        record()
        return seen

    first, second = drawn(), drawn()
    assert first == second and len(set(first)) > 1
