"""Rule modules, one per family (``nccl_conf.py``, ``dockerfile.py``, ``k8s_*.py``, ...).

Every module in this package is imported by ``hpcconf.lint.registry.load_rules``; a new
module needs no registration beyond its ``@rule`` decorators.
"""
