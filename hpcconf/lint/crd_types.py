"""Custom resources the API server refuses at their CRD schema for a value of the wrong type: no webhook reads
them, so hpcconf's webhook rules skip them (K8S041 reports the type error)."""

from __future__ import annotations

import functools
from typing import Callable, Iterator

from ..diagnostics import Diagnostic
from .context import LintContext
from .document import Document

# The last documents judged, by identity: every VOL rule asks about the same document.
_TYPE_REFUSED: list[tuple[Document, bool]] = []


def crd_refuses_a_type(doc: Document, ctx: LintContext) -> bool:
    """The object's CRD schema (every version held) finds a value of the wrong type (K8S041 reports it): the API
    server refuses it there, so no webhook runs on it, and a webhook rule would read a string as a list
    (``events: PodFailed`` as the events 'P', 'o', ...)."""
    for seen, refused in _TYPE_REFUSED:
        if seen is doc:
            return refused
    data = doc.data
    from ..knowledge.crd_schemas import refused_for_a_type  # the CRD tables load with the first object asked

    refused = isinstance(data, dict) and refused_for_a_type(data, {n: v for n, v in ctx.charts.items() if v})
    _TYPE_REFUSED[:] = [*_TYPE_REFUSED[-7:], (doc, refused)]
    return refused


def after_crd_types(check: Callable[[Document, LintContext], Iterator[Diagnostic]]
                    ) -> Callable[[Document, LintContext], Iterator[Diagnostic]]:
    """Run a Volcano rule only on objects whose types the CRD schema accepts (the CEL rules do the same)."""
    @functools.wraps(check)
    def checked(doc: Document, ctx: LintContext) -> Iterator[Diagnostic]:
        if crd_refuses_a_type(doc, ctx):
            return iter(())
        return check(doc, ctx)
    return checked
