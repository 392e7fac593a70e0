"""The spec: models (`model`), loading with positions (`load`), semantic checks (`checks`)."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from .model import API_VERSION, Cluster

__all__ = ["API_VERSION", "Cluster"]


def __getattr__(name: str) -> Any:
    """``Cluster`` and ``API_VERSION`` load the pydantic models on first use: ``hpcconf lint`` of a
    config file imports ``hpcconf.spec.checks`` (for the rule registry) but needs no model."""
    if name in __all__:
        from . import model

        return getattr(model, name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
