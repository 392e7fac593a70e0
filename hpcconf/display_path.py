"""The name a finding carries for a file (``SPEC -> ARTIFACT`` for a compiled artifact).

A leaf module: the settings globs (:mod:`hpcconf.settings.config`) and the linter both split such names.
"""

from __future__ import annotations

from dataclasses import dataclass

SPEC_ARTIFACT_SEPARATOR = " -> "  # "cluster.yaml -> aks/volcano-job.yaml": an artifact compiled from a spec


@dataclass(frozen=True)
class DisplayPath:
    """The name findings carry for a file: the file as given, or ``SPEC -> ARTIFACT`` for an
    artifact compiled from a spec. The one place that builds and splits such names."""

    file: str  # the file as given, or the artifact's path in the output tree
    spec: str = ""  # the spec the artifact was compiled from ("" for a file given directly)

    @classmethod
    def parse(cls, display: str) -> "DisplayPath":
        spec, separator, artifact = display.partition(SPEC_ARTIFACT_SEPARATOR)
        return cls(artifact, spec) if separator else cls(display)

    @property
    def compiled(self) -> bool:
        return bool(self.spec)

    @property
    def name(self) -> str:
        """The file's own name (last path component), for recognising its kind."""
        return self.file.replace("\\", "/").rsplit("/", 1)[-1]

    def __str__(self) -> str:
        return f"{self.spec}{SPEC_ARTIFACT_SEPARATOR}{self.file}" if self.spec else self.file
