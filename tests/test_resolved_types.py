"""The resolved model is made of resolve's own frozen types: no spec or pydantic model is reachable from
ResolvedCluster, so a target (which reads only the resolved model) sees no spec object at all (issue #23 item 1).

Two checks, since an example leaves some sections unset (Crusoe, Lustre, explicit subnets): the declared field
types of every dataclass reachable from ResolvedCluster, and the objects of every example's resolved model.
"""

from __future__ import annotations

import dataclasses
import importlib
import pkgutil
import sys
import types
import typing
from pathlib import Path
from typing import Any

import pytest
from pydantic import BaseModel

import hpcconf.resolve
from hpcconf.pipeline import compile_spec
from hpcconf.resolve import ResolvedCluster

REPO = Path(__file__).resolve().parents[1]
EXAMPLES = sorted((REPO / "examples").glob("*.yaml"))
# Input types only resolve reads: a module of hpcconf.spec, or any pydantic model (the SKU catalog's included:
# targets read ResolvedPool.sku; the catalog entries travel beside the model, pipeline.Build.pool_skus).
SPEC_PACKAGE = "hpcconf.spec"


def _input_type(cls: type) -> bool:
    return issubclass(cls, BaseModel) or cls.__module__ == SPEC_PACKAGE or cls.__module__.startswith(SPEC_PACKAGE + ".")


def _resolve_namespace() -> dict[str, Any]:
    """Every name of hpcconf.resolve's modules: fields name the platform sections under TYPE_CHECKING."""
    namespace: dict[str, Any] = {}
    for module in pkgutil.iter_modules(hpcconf.resolve.__path__, "hpcconf.resolve."):
        namespace.update(vars(importlib.import_module(module.name)))
    namespace.update(vars(hpcconf.resolve))
    return namespace


def _classes_in(hint: Any) -> list[type]:
    if isinstance(hint, type) and not isinstance(hint, types.GenericAlias):
        return [hint]
    return [cls for arg in typing.get_args(hint) for cls in _classes_in(arg)]


def declared_input_fields(root: type) -> list[str]:
    """``Class.field: Type`` for each field, on a dataclass reachable from ``root``, whose type names an input type."""
    namespace = _resolve_namespace()
    found, seen, todo = [], set(), [root]
    while todo:
        cls = todo.pop()
        if cls in seen:
            continue
        seen.add(cls)
        own = {**namespace, **vars(sys.modules[cls.__module__])}  # the class's module first, then resolve's names
        for name, hint in typing.get_type_hints(cls, globalns=own).items():
            for named in _classes_in(hint):
                if _input_type(named):
                    found.append(f"{cls.__name__}.{name}: {named.__module__}.{named.__qualname__}")
                elif dataclasses.is_dataclass(named):
                    todo.append(named)
    return sorted(found)


def reachable_input_objects(value: Any, path: str = "cluster", seen: set[int] | None = None) -> list[str]:
    """``path: type`` of every input-typed object reachable from ``value`` (dataclass fields, containers)."""
    seen = set() if seen is None else seen
    if id(value) in seen or value is None or isinstance(value, (str, int, float, bool)):
        return []
    seen.add(id(value))
    if _input_type(type(value)):
        return [f"{path}: {type(value).__module__}.{type(value).__qualname__}"]
    if dataclasses.is_dataclass(value) and not isinstance(value, type):
        return [hit for f in dataclasses.fields(value) for hit in reachable_input_objects(getattr(value, f.name), f"{path}.{f.name}", seen)]
    if isinstance(value, dict):
        return [hit for key, item in value.items() for hit in reachable_input_objects(item, f"{path}[{key!r}]", seen)]
    if isinstance(value, (list, tuple, set, frozenset)):
        return [hit for index, item in enumerate(value) for hit in reachable_input_objects(item, f"{path}[{index}]", seen)]
    return []


def test_no_field_of_the_resolved_model_is_declared_as_a_spec_or_pydantic_type() -> None:
    assert declared_input_fields(ResolvedCluster) == []


@pytest.mark.parametrize("example", EXAMPLES, ids=lambda p: p.stem)
def test_no_spec_or_pydantic_object_is_reachable_from_the_resolved_model(example: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(REPO)
    assert reachable_input_objects(compile_spec(example.relative_to(REPO)).cluster) == []


def test_the_checks_see_a_spec_object() -> None:
    """The walkers find what they look for: a pydantic model in a dataclass, and a field declared as one."""
    from hpcconf.spec.model import TestImage

    @dataclasses.dataclass(frozen=True)
    class Holder:
        image: TestImage
        images: tuple[TestImage, ...] = ()

    image = TestImage(registry="example.azurecr.io", tag="1")
    assert reachable_input_objects(Holder(image, (image,)), "holder") == ["holder.image: hpcconf.spec.model.TestImage"]
    assert declared_input_fields(Holder) == ["Holder.image: hpcconf.spec.model.TestImage",
                                             "Holder.images: hpcconf.spec.model.TestImage"]
