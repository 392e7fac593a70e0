"""hpcconf's settings (``.hpcconf.toml`` / ``[tool.hpcconf]``), read alike by build, lint and review.

A leaf of the linter: nothing here imports :mod:`hpcconf.lint` (an import-linter contract keeps it so).
"""
