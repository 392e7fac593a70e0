"""Rule modules, one per family (``nccl_conf.py``, ``dockerfile.py``, ``k8s_*.py``, ...).

Every module in this package is imported by ``hpcconf.lint.rule_loading.load_rules``; a new
module needs no registration beyond its ``@rule`` decorators.
"""
