"""Add each finding's current severity to tests/rules/*/expect.yaml entries that lack one.

For merging branches written before expect.yaml pinned severities (issue 27): run it, then review
``git diff tests/rules`` -- a severity it writes is what the rule reports now, so check it is meant.

    python tools/add_expect_severity.py
"""

from __future__ import annotations

import re
import sys
from collections import defaultdict
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "tests" / "rules"))
from test_rule_fixtures import CODES, HERE, _expect, _lint  # noqa: E402

ENTRY = re.compile(r"^(\s*- \{)([^}]*)\}(.*)$")


def main() -> int:
    ambiguous = 0
    for code in CODES:
        expected = _expect(code)["findings"]
        named = any("file" in e for e in expected)
        severities = defaultdict(list)
        for finding in _lint(code, "bad"):
            key = (Path(finding.file).name if named else "", finding.line)
            severities[key].append((finding.column, finding.severity.value))
        path = HERE / code / "expect.yaml"
        lines = []
        section = None
        for line in path.read_text(encoding="utf-8").splitlines(keepends=True):
            if re.match(r"^[A-Za-z_]+:", line):  # a top-level key: only `findings:` entries are bad.*'s
                section = line.split(":")[0]
            match = ENTRY.match(line.rstrip("\n"))
            if section == "findings" and match and "line:" in match.group(2) and "severity" not in match.group(2):
                fields = dict(re.findall(r"(\w+):\s*([^,]+?)\s*(?:,|$)", match.group(2)))
                column = int(fields["column"]) if "column" in fields else None
                found = {s for c, s in severities[(fields.get("file", ""), int(fields["line"]))]
                         if column is None or c == column}
                if len(found) == 1:
                    line = f"{match.group(1)}{match.group(2)}, severity: {found.pop()}}}{match.group(3)}\n"
                else:
                    ambiguous += 1
                    print(f"tests/rules/{code}/expect.yaml: {line.strip()}: severities {sorted(found)}; set it by hand")
            lines.append(line)
        path.write_text("".join(lines), encoding="utf-8")
    return 1 if ambiguous else 0


if __name__ == "__main__":
    sys.exit(main())
