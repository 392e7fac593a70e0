"""Refusals only the resolved values show (``Moment.REFUSE_RESOLVED``): a value hpcconf generates that the
platform's consumer would refuse, reported at the spec key it came from.

Each is the spec side of the file rule with the same code (its page), so ``hpcconf explain`` and the build
agree on the code, name and severity; :mod:`hpcconf.pipeline` runs them after resolving, before any target
renders. CCWS: ``resolve.ccws`` judges the parameters it generates against the release's schema and subnet plan
(``knowledge.ccws``), the same judgement the CCWS001-CCWS005 file rules make of a hand-written parameters.json.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Iterator

from ..diagnostics import Diagnostic, Severity
from ..rules_registry import Moment, spec_rule
from ..spec.checks import at
from ..spec.load import LoadedSpec

if TYPE_CHECKING:
    from . import ResolvedCluster


def _ccws_problems(loaded: LoadedSpec, cluster: ResolvedCluster, code: str) -> Iterator[Diagnostic]:
    for problem in cluster.ccws.problems if cluster.ccws is not None else ():
        if problem.code == code:
            yield at(loaded, problem.path, problem.message, problem.hint)


@spec_rule(code="CCWS001", name="ccws-parameter-unknown", severity=Severity.ERROR, moment=Moment.REFUSE_RESOLVED,
           file_rule=True)
def ccws_parameter_unknown(loaded: LoadedSpec, cluster: ResolvedCluster) -> Iterator[Diagnostic]:
    return _ccws_problems(loaded, cluster, "CCWS001")


@spec_rule(code="CCWS002", name="ccws-parameter-missing", severity=Severity.ERROR, moment=Moment.REFUSE_RESOLVED,
           file_rule=True)
def ccws_parameter_missing(loaded: LoadedSpec, cluster: ResolvedCluster) -> Iterator[Diagnostic]:
    return _ccws_problems(loaded, cluster, "CCWS002")


@spec_rule(code="CCWS003", name="ccws-parameter-type", severity=Severity.ERROR, moment=Moment.REFUSE_RESOLVED,
           file_rule=True)
def ccws_parameter_type(loaded: LoadedSpec, cluster: ResolvedCluster) -> Iterator[Diagnostic]:
    return _ccws_problems(loaded, cluster, "CCWS003")


@spec_rule(code="CCWS005", name="ccws-subnet-plan", severity=Severity.ERROR, moment=Moment.REFUSE_RESOLVED,
           file_rule=True)
def ccws_subnet_plan(loaded: LoadedSpec, cluster: ResolvedCluster) -> Iterator[Diagnostic]:
    return _ccws_problems(loaded, cluster, "CCWS005")


def load_resolved_refusals() -> None:
    """Importing this module registers its rules; the pipeline calls this to say so."""
