"""What a spec rule judging after resolving (``@spec_rule(moment=Moment.JUDGE)``) reads: the spec as
written, the cluster it resolved to and its pools' catalog entries, all typed, plus where to point.

Built by the engine for each hpcconf spec that compiled; a spec that did not compile has only its
refusals (``Moment.REFUSE``) to report, so these rules never see one.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Mapping

from ..diagnostics import Diagnostic, Severity

if TYPE_CHECKING:
    from pydantic import BaseModel

    from ..catalog import Sku
    from ..resolve import ResolvedCluster
    from ..spec.load import LoadedSpec
    from ..spec.model import Cluster
    from .context import LintContext
    from .document import Document


@dataclass(frozen=True)
class CompiledSpec:
    loaded: LoadedSpec
    cluster: ResolvedCluster
    pool_skus: Mapping[str, Sku]  # each pool's catalog entry, by pool name
    document: Document  # the spec as linted: findings point into it

    @property
    def spec(self) -> Cluster:
        """The spec's model as written (defaults filled in)."""
        return self.loaded.cluster

    def at(self, path: tuple[Any, ...], message: str, *, hint: str = "", prefer_value: bool = False,
           severity: Severity | None = None) -> Diagnostic:
        """A finding at the spec key ``path``; the engine fills in the rule's code and name."""
        return self.document.at_path(path, message, hint=hint, prefer_value=prefer_value, severity=severity)


def set_by_user(model: BaseModel, field: str) -> bool:
    """Whether the spec file itself sets ``field`` of ``model`` (not a default)."""
    return field in model.model_fields_set


def compiled_spec(doc: Document, ctx: LintContext) -> CompiledSpec | None:
    """The compiled view of a spec document, or None when it was not compiled (an in-memory spec)."""
    if ctx.spec is None or ctx.cluster is None:
        return None
    return CompiledSpec(loaded=ctx.spec, cluster=ctx.cluster, pool_skus=ctx.pool_skus, document=doc)
