"""Values the settings file and the command-line options share: the chart names, a Kubernetes version."""

from __future__ import annotations

import re

KNOWN_CHARTS = ("network-operator", "gpu-operator", "node-feature-discovery", "volcano")
CHART_ALIASES = {"nfd": "node-feature-discovery"}


class UsageError(ValueError):
    """A bad option value (exit code 2)."""


def checked_kubernetes_version(text: str, where: str) -> str:
    """A Kubernetes version the installed schemas serve ('1.33', 'v1.33.2'); UsageError naming them otherwise."""
    from ..knowledge.k8s_openapi import SchemaVersionError, schema_version

    version = text.strip().lstrip("v")
    if not re.match(r"^\d+\.\d+(\.\d+)?$", version):
        raise UsageError(f"{where}: '{text}' is not a Kubernetes version such as 1.33")
    try:
        schema_version(version)
    except SchemaVersionError as exc:
        raise UsageError(f"{where}: {exc}") from None
    return version
