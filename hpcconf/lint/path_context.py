"""A linted file's context from the settings' ``per-path-context`` tables
(:mod:`hpcconf.settings.path_context` reads them and says which value wins where several apply)."""

from __future__ import annotations

import dataclasses
from typing import TYPE_CHECKING

from ..settings.path_context import PathContext, matching

if TYPE_CHECKING:
    from .context import LintContext


def context_for_path(ctx: LintContext, display: str, source_path: str = "") -> LintContext:
    """``ctx`` for one linted file: its matching tables applied under the command line's options.

    Returns ``ctx`` itself when no table matches (the run's context, unchanged).
    """
    layers = matching(ctx.config.path_contexts, display, source_path)
    if not layers:
        return ctx
    # One object per combination of tables: files under one table share it, so a deployment's set
    # rules see the context its files have (hpcconf.lint.engine._shared_context compares identity).
    made: dict[tuple[int, ...], LintContext] = ctx.__dict__.setdefault("_path_contexts", {})
    key = tuple(layer.order for layer in layers)
    if key not in made:
        made[key] = _layered(ctx, layers)
    return made[key]


def _layered(ctx: LintContext, layers: list[PathContext]) -> LintContext:
    sku, nccl_version, kubernetes, charts, provider = ctx.sku, ctx.nccl_version, ctx.kubernetes_version, {}, ctx.provider
    for layer in layers:
        if layer.provider and "provider" not in ctx.given:
            provider = layer.provider
        if layer.sku is not None and "sku" not in ctx.given:
            sku = layer.sku
        if layer.nccl_version and "nccl_version" not in ctx.given:
            nccl_version = layer.nccl_version
        if layer.kubernetes_version and "kubernetes_version" not in ctx.given:
            kubernetes = layer.kubernetes_version
        charts.update(layer.charts)
    charts.update(ctx.charts)  # the run's charts are the command line's: they win
    return dataclasses.replace(ctx, sku=sku, nccl_version=nccl_version, kubernetes_version=kubernetes, charts=charts,
                               provider=provider)
