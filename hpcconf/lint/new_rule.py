"""Scaffold a rule: ``python -m hpcconf.lint.new_rule CODE NAME --kind KIND [--severity S] [--module M]``.

Appends a ``@rule`` function with the required docstring sections to
``hpcconf/lint/rules/<module>.py`` (created if needed) and creates ``tests/rules/<CODE>/``
with ``bad``/``good`` fixtures and ``expect.yaml``. Fill in the check, the page and the
fixtures, then run ``python -m hpcconf.lint.docs``, ``pytest tests/rules --update-snapshots`` and the rule
tests (tests/rules/README.md).
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from ..artifacts import Kind
from .rule_loading import CODE_PATTERN, NAME_PATTERN, load_rules

REPO = Path(__file__).resolve().parents[2]
FIXTURE_NAMES = {Kind.NCCL_CONF: "{stem}.nccl.conf", Kind.ENV_FILE: "{stem}.env", Kind.DOCKERFILE: "{stem}.Dockerfile",
                 Kind.SHELL_SCRIPT: "{stem}.sh", Kind.SBATCH_SCRIPT: "{stem}.sh", Kind.NCCL_TOPOLOGY: "{stem}.xml",
                 Kind.NCCL_GRAPH: "{stem}.xml"}
KIND_CONSTANTS = {value: name for name, value in vars(Kind).items() if name.isupper() and isinstance(value, str)}

# A spec is judged by @spec_rule, never a file rule: with --kind spec the stub judges the resolved cluster
# (moment JUDGE, a suppressible lint finding); a check that refuses the spec belongs in hpcconf/spec/checks/.
SIGNATURES = {
    "file": '''@rule(code="{code}", name="{name}", severity=Severity.{severity}, kinds=(Kind.{kind_constant},))
def {function}(doc: Document, ctx: LintContext) -> Iterator[Diagnostic]:''',
    "spec": '''@spec_rule(code="{code}", name="{name}", severity=Severity.{severity}, moment=Moment.JUDGE)
def {function}(compiled: CompiledSpec) -> Iterator[Diagnostic]:''',
}

TEMPLATE = '''

{signature}
    """One line: the pattern this rule flags.

    ## What it catches
    The exact pattern, with the variants it covers and the ones it leaves alone.

    ## Why is this bad?
    What the consumer does with it, with evidence (a seed's numbers, an upstream source line,
    a measurement).

    ## Example
    ```text
    the smallest input that triggers it
    ```

    ## Fix
    What to write instead.
    """
    raise NotImplementedError("{code}: write the check")
'''

MODULE_HEADER = '''"""{title} rules."""

from __future__ import annotations

from typing import Iterator

{imports}
'''
IMPORTS = {
    "file": "from ...artifacts import Kind\nfrom ...diagnostics import Diagnostic, Severity\nfrom ..context import LintContext\n"
            "from ..document import Document\nfrom ...rules_registry import rule",
    "spec": "from ...diagnostics import Diagnostic, Severity\nfrom ..compiled_spec import CompiledSpec\n"
            "from ...rules_registry import Moment, spec_rule",
}


def scaffold(code: str, name: str, kind: str, severity: str, module: str) -> list[Path]:
    if not CODE_PATTERN.match(code):
        raise SystemExit(f"{code}: a family prefix (NCCL, DKR, K8S, ...) and 3 digits")
    if not NAME_PATTERN.match(name):
        raise SystemExit(f"{name}: kebab-case, naming the flagged pattern (e.g. nccl-conf-inline-comment)")
    if code in load_rules():
        raise SystemExit(f"{code} exists already")
    if kind not in KIND_CONSTANTS:
        raise SystemExit(f"--kind must be one of {', '.join(sorted(KIND_CONSTANTS))}")
    path = REPO / "hpcconf" / "lint" / "rules" / f"{module}.py"
    form = "spec" if kind == Kind.SPEC else "file"
    text = path.read_text(encoding="utf-8") if path.exists() else \
        MODULE_HEADER.format(title=module.replace("_", " "), imports=IMPORTS[form])
    signature = SIGNATURES[form]
    text += TEMPLATE.replace("{signature}", signature).format(
        code=code, name=name, severity=severity.upper(), kind_constant=KIND_CONSTANTS[kind], function=name.replace("-", "_"))
    path.write_text(text, encoding="utf-8")
    fixtures = REPO / "tests" / "rules" / code
    fixtures.mkdir(parents=True, exist_ok=True)
    pattern = FIXTURE_NAMES.get(kind, "{stem}.yaml")
    written = [path]
    for stem in ("bad", "good"):
        target = fixtures / pattern.format(stem=stem)
        target.write_text("", encoding="utf-8")
        written.append(target)
    expect = fixtures / "expect.yaml"
    # tests/rules/README.md: each finding's place and severity; each form of the page with the line showing it
    expect.write_text(f"kind: {kind}\nfindings:\n  - {{line: 1, severity: {severity.lower()}}}\n"
                      "catches:\n  - {form: \"The exact pattern\", line: 1}\n", encoding="utf-8")
    written.append(expect)
    return written


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m hpcconf.lint.new_rule", description=__doc__.splitlines()[0])
    parser.add_argument("code")
    parser.add_argument("name")
    parser.add_argument("--kind", required=True, help="document kind the rule checks")
    parser.add_argument("--severity", default="warning", choices=("error", "warning", "info"))
    parser.add_argument("--module", help="rule module under hpcconf/lint/rules (default: from the code family)")
    args = parser.parse_args(argv)
    module = args.module or args.code.rstrip("0123456789").lower()
    for path in scaffold(args.code.upper(), args.name, args.kind, args.severity, module):
        print(f"wrote {path.relative_to(REPO)}")
    print("next: write the check, the page and the fixtures; then python -m hpcconf.lint.docs")
    return 0


if __name__ == "__main__":
    sys.exit(main())
