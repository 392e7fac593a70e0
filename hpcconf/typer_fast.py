"""Command-line values coerced without pydantic, so that a command that does not need pydantic never loads it.

typer 0.29 coerces every parameter through a pydantic ``TypeAdapter``, built the first time the
parameter is processed, even for a flag left at its default (``--help`` is None). Importing pydantic
and building the adapters costs 0.1 to 0.15 s of every run, more than ``hpcconf version`` needs in all.
hpcconf's parameters are plain: ``str``, ``Path``, ``bool`` and lists of them, whose coercion is a
constructor call. :func:`install` gives such a parameter a coercer that does exactly what typer's
adapter does for it, without pydantic; any other value or type (an ``int``, a string for a ``bool``)
goes to the runtime parameter typer builds, built on first use as before. With a typer that has no
such layer (typer < 0.29 coerces through click), :func:`install` changes nothing. pyproject pins typer to
0.29.x, the layer this was written against; tests/test_typer_fast.py checks that the patch applies.
"""

from __future__ import annotations

import os
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, get_args, get_origin

_installed = False
# The values whose conversion is the plain one; anything else is converted by typer's own adapter.
_ACCEPTS: dict[type, tuple[type, ...]] = {str: (str,), bool: (bool,), Path: (str, os.PathLike)}


def install() -> None:
    """Route the plain parameters of every typer command through :class:`PlainRuntimeParam` (idempotent)."""
    global _installed
    if _installed:
        return
    try:
        from typer import _coercion, core
    except ImportError:  # a typer without the pydantic coercion layer
        return
    param_class = getattr(core, "_TyperParameter", None)
    base = getattr(_coercion, "RuntimeParam", None)
    if param_class is None or base is None or not hasattr(param_class, "get_runtime_param"):
        return
    runtime_class = _runtime_class(base, _coercion)
    typer_runtime_param = param_class.get_runtime_param

    def get_runtime_param(self: Any) -> Any:
        if getattr(self, "_runtime_param", None) is None:
            self._runtime_param = runtime_class.for_descriptor(self.type_descriptor)
        return typer_runtime_param(self)  # returns ours, or builds typer's where ours declined

    param_class.get_runtime_param = get_runtime_param
    _installed = True


def _plain_leaf(annotation: Any, info: Any) -> type | None:
    """``str``, ``Path`` or ``bool`` when typer's adapter for ``annotation`` is a plain conversion, else None."""
    if getattr(info, "parser", None) is not None or getattr(info, "path_type", None) is not None:
        return None
    if annotation is str or annotation is bool:
        return annotation
    if annotation is Path and not getattr(info, "resolve_path", False) and not getattr(info, "allow_dash", False):
        return Path
    return None


def _runtime_class(base: type, coercion: Any) -> Any:
    """A :class:`typer._coercion.RuntimeParam` for plain parameters (defined here: the base is typer's)."""
    from typer._param_types import coerce_cli_path

    @dataclass(frozen=True)
    class PlainRuntimeParam(base):
        leaf: type | None = str  # None: every value goes to typer's runtime parameter
        many: bool = False
        descriptor: Any = None
        _fallback: list[Any] = field(default_factory=list, compare=False)

        @classmethod
        def for_descriptor(cls, descriptor: Any) -> Any:
            annotation, info = descriptor.annotation, descriptor.parameter_info
            if descriptor.file_annotation is not None:
                return None
            many = get_origin(annotation) is list
            leaf = _plain_leaf(get_args(annotation)[0] if many else annotation, info)
            # Not plain (an int, an enum): typer's adapter, built for the first value given, not for a default of None
            return cls(parameter_info=info, annotation=annotation, leaf=leaf, many=many, descriptor=descriptor)

        def _coerce_value(self, value: Any, param: Any, ctx: Any) -> Any:
            items = list(value) if self.many and isinstance(value, (list, tuple)) else [value]
            if self.leaf is None or not all(isinstance(item, _ACCEPTS[self.leaf]) for item in items):
                return self._typer_param()._coerce_value(value, param, ctx)  # bytes, "yes" for a bool, ...
            if self.leaf is Path:
                items = [coerce_cli_path(Path(item), self.parameter_info, path_type=Path, param=param, ctx=ctx)
                         for item in items]
            return items if self.many else items[0]  # typer's list adapter: one value becomes a one-item list

        def _typer_param(self) -> Any:
            if not self._fallback:
                self._fallback.append(coercion.build_runtime_param(self.descriptor))
            return self._fallback[0]

    return PlainRuntimeParam
