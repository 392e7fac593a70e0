"""A lint run imports only the rule modules for the kinds it checks, and finds exactly the same.

``DOCUMENT_RULE_MODULE_KINDS`` (hpcconf.lint.registry) lists the modules whose rules are all
per-document, with their kinds; a run over other kinds skips them (their imports are most of a small
run's start-up). Each row must cover its module's rules, or a rule would silently not run.
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

from hpcconf.lint.registry import DOCUMENT_RULE_MODULE_KINDS, load_rules

REPO = Path(__file__).resolve().parents[1]


def test_each_listed_module_holds_only_document_rules_of_its_kinds():
    by_module: dict[str, list] = {}
    for rule in load_rules().values():
        if rule.check is not None and rule.check.__module__.startswith("hpcconf.lint.rules."):
            by_module.setdefault(rule.check.__module__.rsplit(".", 1)[1], []).append(rule)
    for module, kinds in DOCUMENT_RULE_MODULE_KINDS.items():
        assert module in by_module, f"{module} is listed but registers no rule"
        for rule in by_module[module]:
            assert rule.scope == "document" and set(rule.kinds) <= kinds, \
                f"{rule.code} ({module}): scope {rule.scope}, kinds {rule.kinds}; update DOCUMENT_RULE_MODULE_KINDS"


PROBE = """
import json, sys
from hpcconf.lint.context import LintContext
from hpcconf.lint.engine import lint_paths
result = lint_paths(sys.argv[1:], LintContext())
loaded = sorted(m.rsplit(".", 1)[1] for m in sys.modules if m.startswith("hpcconf.lint.rules."))
print(json.dumps({"findings": [repr(f) for f in result.findings], "loaded": loaded,
                  "spec_models": "hpcconf.spec.model" in sys.modules}))
"""


def _lint_in_a_fresh_process(*paths: str) -> dict:
    out = subprocess.run([sys.executable, "-c", PROBE, *paths], capture_output=True, text=True, check=True, cwd=REPO)
    return json.loads(out.stdout)


def test_an_azhop_config_loads_the_azhop_rules_alone_and_finds_the_same():
    from hpcconf.lint.context import LintContext
    from hpcconf.lint.engine import lint_paths

    config = "out/azhop-ncv4/azhop/config.yml"
    run = _lint_in_a_fresh_process(config)
    assert "azhop_schema" in run["loaded"] and "nccl_xml" not in run["loaded"] and "volcano" not in run["loaded"]
    assert not run["spec_models"]
    load_rules()  # this process: every rule loaded
    every_rule = [repr(f) for f in lint_paths([str(REPO / config)], LintContext()).findings]
    assert [f.replace(str(REPO) + "/", "") for f in every_rule] == run["findings"]


def test_the_whole_out_tree_finds_the_same_as_with_every_rule():
    from hpcconf.lint.context import LintContext
    from hpcconf.lint.engine import lint_paths

    run = _lint_in_a_fresh_process("out")
    load_rules()
    import os

    cwd = os.getcwd()
    try:
        os.chdir(REPO)
        every_rule = [repr(f) for f in lint_paths(["out"], LintContext()).findings]
    finally:
        os.chdir(cwd)
    assert every_rule == run["findings"]


CLI_PROBE = """
import sys
sys.argv = ["hpcconf", "lint", *sys.argv[1:]]
from hpcconf.cli import main
try:
    main()
except SystemExit:
    pass
print(" ".join(sorted(m.rsplit(".", 1)[1] for m in sys.modules if m.startswith("hpcconf.lint.rules."))), file=sys.stderr)
"""


def test_the_lint_command_itself_loads_only_what_the_kinds_need():
    out = subprocess.run([sys.executable, "-c", CLI_PROBE, "out/azhop-ncv4/azhop/config.yml"], capture_output=True,
                         text=True, cwd=REPO)
    loaded = out.stderr.strip().splitlines()[-1].split()
    assert "azhop_schema" in loaded and "nccl_xml" not in loaded and "volcano" not in loaded, loaded
    out = subprocess.run([sys.executable, "-c", CLI_PROBE, "out/azhop-ncv4/azhop/config.yml", "--ignore", "AZH011"],
                         capture_output=True, text=True, cwd=REPO)
    assert "nccl_xml" in out.stderr.strip().splitlines()[-1].split()  # a named code: every rule
