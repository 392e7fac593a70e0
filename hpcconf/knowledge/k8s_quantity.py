"""Kubernetes resource quantities (k8s.io/apimachinery/pkg/api/resource/quantity.go): "500m", "1.5", "4Gi"."""

from __future__ import annotations

import re
from decimal import Decimal, InvalidOperation
from typing import Any, Optional

SUFFIXES = {"": 1, "m": Decimal("0.001"), "k": 10**3, "M": 10**6, "G": 10**9, "T": 10**12, "P": 10**15,
            "E": 10**18, "Ki": 2**10, "Mi": 2**20, "Gi": 2**30, "Ti": 2**40, "Pi": 2**50, "Ei": 2**60}
QUANTITY = re.compile(r"^([+-]?(?:\d+\.?\d*|\.\d+))(?:[eE]([+-]?\d{1,3}))?(m|k|M|G|T|P|E|Ki|Mi|Gi|Ti|Pi|Ei)?$")


def parse_quantity(value: Any) -> Optional[Decimal]:
    """The quantity's value in base units; None when it is not a Kubernetes quantity."""
    if isinstance(value, bool) or value is None:
        return None
    match = QUANTITY.match(str(value).strip())
    if match is None:
        return None
    number, exponent, suffix = match.groups()
    try:
        amount = Decimal(number) * (Decimal(10) ** int(exponent) if exponent else 1)
    except InvalidOperation:
        return None
    return amount * Decimal(str(SUFFIXES[suffix or ""]))
