"""Numbers as NCCL's C code reads them, for values in environment variables and XML attributes.

NCCL parses numeric settings with ``strtol``/``strtoll`` (base 0) and ignores whatever follows
the digits, so ``NCCL_NTHREADS=256k`` is 256 and ``dev="0x1f"`` is 31.
"""

from __future__ import annotations


def c_strtol(text: str) -> int:
    """C ``strtol(text, NULL, 0)``: leading space, sign, 0x/0 prefixes, stop at the first bad char."""
    s = text.lstrip(" \t\n\r\f\v")
    sign = -1 if s[:1] == "-" else 1
    if s[:1] in "+-" and s:
        s = s[1:]
    base = 10
    if s[:2].lower() == "0x" and len(s) > 2 and s[2] in "0123456789abcdefABCDEF":
        base, s = 16, s[2:]
    elif s[:1] == "0":
        base = 8
    digits = "0123456789abcdef"[:base]
    number = 0
    for ch in s:
        if ch.lower() not in digits:
            break
        number = number * base + digits.index(ch.lower())
    return sign * number
