"""The checks a reviewer runs, enforced by the test suite: ruff, mypy and the import contracts.

Each runs the tool from this environment on the package (configured in pyproject.toml) and is
skipped, with the reason, when the tool is not installed (``pip install -e '.[test]'`` has them).
Run them alone with ``pytest -m code_quality``; the type check alone with ``pytest -m mypy``.
"""

from __future__ import annotations

import ast
import importlib.util
import re
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
pytestmark = pytest.mark.code_quality


def _run(module: str, *args: str) -> subprocess.CompletedProcess[str]:
    if importlib.util.find_spec(module) is None:
        pytest.skip(f"{module} is not installed (pip install -e '.[test]')")
    return subprocess.run([sys.executable, "-m", module, *args], cwd=ROOT, capture_output=True, text=True,
                          timeout=600)


def test_ruff_reports_nothing() -> None:
    result = _run("ruff", "check", "hpcconf", "tests", "--output-format", "concise", "--no-cache")
    assert result.returncode == 0, result.stdout + result.stderr


@pytest.mark.mypy
def test_mypy_reports_nothing() -> None:
    result = _run("mypy", "hpcconf")
    assert result.returncode == 0, result.stdout + result.stderr


def test_import_contracts_hold() -> None:
    if importlib.util.find_spec("importlinter") is None:
        pytest.skip("import-linter is not installed (pip install -e '.[test]')")
    result = subprocess.run([str(Path(sys.executable).with_name("lint-imports")), "--no-cache"], cwd=ROOT,
                            capture_output=True, text=True, timeout=600)
    assert result.returncode == 0, result.stdout + result.stderr


def _contracts() -> list[dict]:
    import tomllib  # noqa: PLC0415 - Python 3.11+; the contracts test below needs it only

    return tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))["tool"]["importlinter"]["contracts"]


@pytest.mark.skipif(sys.version_info < (3, 11), reason="tomllib is Python 3.11+")
def test_targets_are_forbidden_knowledge_catalog_and_spec() -> None:
    """Issue #23: the targets transcribe the resolved model. The contract that keeps it is there, with no
    exception listed (test_import_contracts_hold runs it)."""
    forbidden = [c for c in _contracts() if c.get("type") == "forbidden" and c.get("source_modules") == ["hpcconf.targets"]]
    assert forbidden, "no forbidden contract for hpcconf.targets in pyproject.toml"
    (contract,) = forbidden
    assert set(contract["forbidden_modules"]) >= {"hpcconf.knowledge", "hpcconf.catalog", "hpcconf.spec"}
    assert not contract.get("ignore_imports")


# A branch on the GPU vendor or the collective library, in a target or a template: a profile field
# (data/accelerators.yaml) or a resolved field reads it instead, so a new accelerator touches neither.
def _vendor_names() -> set[str]:
    """Every vendor and collective library the profile table names, lower-cased, plus the two known today."""
    from hpcconf.knowledge.accelerators import profiles

    names = {"nvidia", "amd", "nccl", "rccl", "cuda", "rocm"}
    for vendor, profile in profiles().items():
        names |= {vendor.lower(), profile.collective_library.lower()}
    return names


# Calls that compare a string with their argument: x.startswith("amd"), re.match("nvidia", x), d.get("amd").
_COMPARING_CALLS = {"startswith", "endswith", "match", "fullmatch", "search", "find", "index", "count", "get",
                    "removeprefix", "removesuffix", "casefold_equals"}
# What a target must not reach for: the vendor's name, however it is spelt.
_VENDOR_ATTRIBUTES = {"gpu_vendor", "catalog_sku"}


# A device plugin's resource spelt out (nvidia.com/gpu, amd.com/gpu): the profile's device_resource says it.
_DEVICE_RESOURCE = re.compile(r"[a-z0-9-]+(\.[a-z0-9-]+)+/gpu")


def _is_vendor(node: ast.AST, names: set[str], constants: frozenset[str] = frozenset()) -> bool:
    """A vendor or library name: a literal, a module constant holding one (``AMD = "amd"``), an enum member
    named after one (``GpuOperator.AMD``), or a tuple of them."""
    if isinstance(node, ast.Constant) and isinstance(node.value, str):
        return node.value.strip().lower() in names
    if isinstance(node, ast.Name):
        return node.id in constants
    if isinstance(node, ast.Attribute):
        return node.attr.lower() in names
    if isinstance(node, (ast.Tuple, ast.List, ast.Set)):
        return any(_is_vendor(element, names, constants) for element in node.elts)
    return False


def _vendor_constants(tree: ast.Module, names: set[str]) -> frozenset[str]:
    """Module-level names bound to a vendor or library literal."""
    return frozenset(target.id for node in tree.body if isinstance(node, (ast.Assign, ast.AnnAssign))
                     and node.value is not None and _is_vendor(node.value, names)
                     for target in (node.targets if isinstance(node, ast.Assign) else [node.target])
                     if isinstance(target, ast.Name))


def _is_field_check(node: ast.Compare) -> bool:
    """``"nccl" in spec.versions.model_fields_set``: a question about the spec's field named nccl, not the library."""
    return all(isinstance(c, ast.Attribute) and c.attr == "model_fields_set" for c in node.comparators)


def vendor_comparisons(source: str, names: set[str]) -> list[tuple[int, str]]:
    """(line, what) of every comparison of a value with a vendor or library name in ``source``, in any form:
    ==/!=/in/is against a literal (or a tuple of them), a comparing call, match/case, a table keyed by vendor,
    and reads of the vendor's name (``.vendor`` of a profile, ``gpu_vendor``, the raw catalog entry)."""
    found = []
    tree = ast.parse(source)
    constants = _vendor_constants(tree, names)
    for node in ast.walk(tree):
        if isinstance(node, ast.Compare) and any(_is_vendor(part, names, constants) for part in [node.left, *node.comparators]) \
                and not _is_field_check(node):
            found.append((node.lineno, "comparison with a vendor name"))
        elif isinstance(node, ast.Call) and isinstance(node.func, (ast.Attribute, ast.Name)) \
                and (node.func.attr if isinstance(node.func, ast.Attribute) else node.func.id) in _COMPARING_CALLS \
                and any(_is_vendor(arg, names, constants) for arg in node.args):
            found.append((node.lineno, "comparing call with a vendor name"))
        elif isinstance(node, ast.MatchValue) and _is_vendor(node.value, names, constants):
            found.append((node.lineno, "case on a vendor name"))
        elif isinstance(node, ast.Constant) and isinstance(node.value, str) and _DEVICE_RESOURCE.fullmatch(node.value):
            found.append((node.lineno, f"device resource {node.value} spelt out"))
        # a table keyed by the operator enum is the one explicit dispatch (each operator's renderer); by a name, not
        elif isinstance(node, ast.Dict) and any(key is not None and not isinstance(key, ast.Attribute)
                                                and _is_vendor(key, names, constants) for key in node.keys):
            found.append((node.lineno, "table keyed by vendor name"))
        elif isinstance(node, ast.Attribute) and (node.attr in _VENDOR_ATTRIBUTES or (
                node.attr == "vendor" and isinstance(node.value, (ast.Attribute, ast.Name))
                and (node.value.attr if isinstance(node.value, ast.Attribute) else node.value.id) in ("accelerator", "profile"))):
            found.append((node.lineno, f"reads .{node.attr}"))
    return found


@pytest.mark.parametrize("source", [
    'if pool.vendor == "amd": pass', 'x = v in ("Nvidia", "other")', 'ok = name.startswith("AMD")',
    'match v:\n    case "rccl": pass', 'TABLE = {"nvidia": 1}', 'v = pool.accelerator.vendor', 'v = pool.gpu_vendor',
    'x = "nccl" != library', 'x = re.match("amd", v)', 'x = pool.catalog_sku.gpu',
    # r23b D3: a module constant, an enum member named after a vendor, a device resource spelt out
    'AMD = "amd"\nok = pool.kind == AMD', 'ok = p.accelerator.operator is GpuOperator.AMD',
    'match op:\n    case GpuOperator.NVIDIA: pass', 'r = "amd\\\\.com/gpu" if x else "nvidia.com/gpu"', 'ok = x == "nvidia.com/gpu"'])
def test_the_vendor_guard_sees_every_form(source: str) -> None:
    assert vendor_comparisons(source, _vendor_names())


def test_the_vendor_guard_leaves_other_strings_alone() -> None:
    assert not vendor_comparisons('path = f"nccl/{pool}/nccl.conf"\nok = x == "nvidia.com/infiniband"\nrule.vendor\n'
                                  'pinned = "nccl" in spec.versions.model_fields_set\nLIMIT = 8\nok = n == LIMIT\n'
                                  '"""Docstring: the device plugin gives nvidia.com/gpu."""\n'
                                  'RENDERERS = {GpuOperator.NVIDIA: render}  # the one explicit dispatch', _vendor_names())


def test_no_vendor_or_library_comparison_in_targets_or_resolve() -> None:
    """resolve/ too: what differs between accelerators is a profile field, so a new one is a data row."""
    names = _vendor_names()
    files = sorted((ROOT / "hpcconf" / "targets").rglob("*.py")) + sorted((ROOT / "hpcconf" / "resolve").rglob("*.py"))
    hits = [f"{path.relative_to(ROOT)}:{line}: {what}" for path in files
            for line, what in vendor_comparisons(path.read_text(encoding="utf-8"), names)]
    assert not hits, "\n".join(hits)


# Templates are not Python: a Jinja test or comparison against a quoted vendor name, in any of Jinja's forms.
TEMPLATE_VENDOR_COMPARISON = (r"""(==|!=|\bin\b|\bis\s+(not\s+)?sameas|startswith\(|endswith\()\s*\(?\s*["']"""
                              r"""(nvidia|amd|nccl|rccl|cuda|rocm)["']|["'](nvidia|amd|nccl|rccl|cuda|rocm)["']\s*(==|!=|\bin\b)""")


def test_no_vendor_or_library_comparison_in_templates() -> None:
    pattern = re.compile(TEMPLATE_VENDOR_COMPARISON, re.IGNORECASE)
    hits = [f"{path.relative_to(ROOT)}:{number}: {line.strip()}" for path in sorted((ROOT / "templates").rglob("*.j2"))
            for number, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1) if pattern.search(line)]
    assert not hits, "\n".join(hits)


def test_targets_read_the_resolved_model_not_the_spec() -> None:
    """ResolvedCluster holds no spec (tests/test_resolved_types.py); nor does a target reach for one by name."""
    hits = [f"{path.relative_to(ROOT)}:{number}: {line.strip()}" for path in sorted((ROOT / "hpcconf" / "targets").rglob("*.py"))
            for number, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1)
            if re.search(r"\bcluster\.spec\b", line)]
    assert not hits, "\n".join(hits)
