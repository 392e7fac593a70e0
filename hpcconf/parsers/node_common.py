"""What the node-fact parsers share: a fact with its origin, and the error for malformed input.

The parsers read the files ``hpcconf sku collect-script`` writes on a node (nvidia-smi, lscpu,
numactl, ibstat output and a few kernel files). Each value they return is a :class:`Fact` that
remembers the file and line it came from, so the SKU file ``hpcconf sku import`` writes can say
where every number came from; a file that is not what its name says is reported at file:line
(HPC330), never guessed around.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Generic, NoReturn, TypeVar

from ..diagnostics import Diagnostic, HpcconfError

T = TypeVar("T")


@dataclass(frozen=True)
class Fact(Generic[T]):
    """One value read from a collected file: ``file`` (its name in the collection), ``line`` (1-based)
    and ``what`` (the field or column it is, as the tool names it)."""

    value: T
    file: str
    line: int | None
    what: str

    @property
    def origin(self) -> str:
        where = f"{self.file}:{self.line}" if self.line else self.file
        return f"{where} {self.what}"


def malformed(path: str, line: int | None, message: str, hint: str) -> NoReturn:
    """Stop on input that is not what its file name says (HPC330), pointing at the line."""
    raise HpcconfError([Diagnostic(code="HPC330", name="node-file-malformed", message=message, hint=hint)
                        .at(path, line, 1 if line else None)])


RECOLLECT = "Collect the file again with `hpcconf sku collect-script` on the node, or delete it to import without it."
