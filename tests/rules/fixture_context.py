"""The lint options a rule's bad fixture is judged with, from its expect.yaml (tests/rules/README.md):
one definition for the fixture test and the rendered-snapshot test, so the two never judge differently."""

from __future__ import annotations

from pathlib import Path

from hpcconf.lint.context import LintContext, lookup_sku, parse_chart_option

HERE = Path(__file__).resolve().parent


def fixture_context(expect: dict) -> LintContext:
    ctx = LintContext()
    if expect.get("nccl_version"):
        ctx.nccl_version = str(expect["nccl_version"])
    if expect.get("sku"):
        # ``sku_dirs``: SKU files of the fixture itself (a drafted `hpcconf sku import` file), relative to tests/rules
        ctx.sku = lookup_sku(str(expect["sku"]), [HERE / d for d in expect.get("sku_dirs") or ()])
    if expect.get("openmpi_version"):
        ctx.openmpi_version = str(expect["openmpi_version"])
    if expect.get("ucx_version"):
        ctx.ucx_version = str(expect["ucx_version"])
    if expect.get("kubernetes_version"):
        ctx.kubernetes_version = str(expect["kubernetes_version"])
    if expect.get("provider"):
        ctx.provider = str(expect["provider"])
    ctx.charts = dict(parse_chart_option(f"{k}={v}") for k, v in (expect.get("charts") or {}).items())
    return ctx
