"""Position-keeping readers for the non-YAML kinds the linter checks.

Each reader keeps 1-based line/column positions, because every finding must point at
the offending key, line or element.
"""
