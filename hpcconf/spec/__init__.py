"""The spec: models (`model`), loading with positions (`load`), semantic checks (`checks`)."""

from .model import API_VERSION, Cluster

__all__ = ["API_VERSION", "Cluster"]
