"""AZH013 judges users and groups once, for config.yml and for a spec, with az-hop's own gid semantics.

gid 5000 is every user's primary group (az-hop playbooks/create_user.yml sets gidnumber 5000): an
error when missing. 5001/5002 only name Grafana's admin and the sudoers group: a warning.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from hpcconf.diagnostics import HpcconfError, Severity
from hpcconf.lint.engine import lint_text
from hpcconf.pipeline import compile_spec

REPO = Path(__file__).resolve().parents[1]
GOOD_CONFIG = (REPO / "tests" / "rules" / "AZH013" / "good.yaml").read_text(encoding="utf-8")
SPEC = (REPO / "examples" / "azhop-ncv4.yaml").read_text(encoding="utf-8")


def _azh013(text: str) -> list:
    return [f for f in lint_text(text, "config.yml", kind="azhop-config").findings if f.code == "AZH013"]


@pytest.mark.parametrize("gid, severity", [(5000, Severity.ERROR), (5001, Severity.WARNING), (5002, Severity.WARNING)])
def test_config_missing_builtin_gid(gid, severity):
    lines = [line for line in GOOD_CONFIG.splitlines() if f"gid: {gid}}}" not in line]
    found = [f for f in _azh013("\n".join(lines) + "\n") if "no usergroups entry" in f.message]
    assert [(f.severity, f"gid {gid}" in f.message) for f in found] == [(severity, True)], [f.message for f in found]


def test_spec_without_gid_5000_is_refused_at_its_groups(tmp_path):
    spec = tmp_path / "azhop.yaml"
    spec.write_text(SPEC.replace("    - {name: Domain Users, gid: 5000}\n", ""), encoding="utf-8")
    with pytest.raises(HpcconfError) as caught:
        compile_spec(spec)
    found = [d for d in caught.value.diagnostics if d.code == "AZH013"]
    assert len(found) == 1 and "gid 5000" in found[0].message and found[0].line == SPEC.splitlines().index("  groups:") + 1


def test_spec_without_gid_5001_still_builds_and_lint_warns_on_the_generated_config(tmp_path):
    spec = tmp_path / "azhop.yaml"
    text = SPEC.replace("    - {name: az-hop-admins, gid: 5001, description: For users with azhop admin privileges}\n", "")
    spec.write_text(text.replace("groups: [az-hop-admins, az-hop-localadmins]", "groups: [az-hop-localadmins]"),
                    encoding="utf-8")
    build = compile_spec(spec)  # a warning does not stop build
    config = next(a for a in build.artifacts if a.path.endswith("config.yml"))
    found = _azh013(config.content)
    assert [f.severity for f in found] == [Severity.WARNING] and "5001" in found[0].message
