"""What NCCL's XML reader rejects or misreads, as NCCL020-NCCL023 report it, per NCCL version."""

from __future__ import annotations

import pytest

from hpcconf.lint.context import LintContext, parse_chart_option
from hpcconf.lint.engine import lint_text

GOOD = ('<system version="1">\n'
        '  <cpu numaid="0" affinity="0000ffff" arch="x86_64" vendor="AuthenticAMD" familyid="175" modelid="1">\n'
        '    <pci busid="0001:00:00.0" class="0x030200" link_speed="16.0 GT/s PCIe" link_width="16">\n'
        '      <gpu dev="0" sm="80" rank="0" gdr="1"/>\n'
        '    </pci>\n'
        '  </cpu>\n'
        '</system>\n')


def findings(text: str, version: str = "2.28.9", name: str = "topo.xml") -> list[tuple[str, int]]:
    return [(f.code, f.line) for f in lint_text(text, name, LintContext(nccl_version=version)).findings]


def test_good_file_is_clean():
    assert findings(GOOD) == []


@pytest.mark.parametrize("broken, line", [
    ('<?xml version="1.0"?>\n' + GOOD, 1),                                     # prolog
    (GOOD.replace("  <cpu", "\t<cpu"), 2),                                   # tab indentation
    (GOOD.replace('version="1"', 'version="2"'), 1),                         # wrong version
    (GOOD.replace("    </pci>\n", ""), 5),                                   # unclosed <pci>: </cpu> mismatches
    (GOOD.replace(' arch="x86_64"', '\n       arch="x86_64"'), 2),          # attributes over two lines
])
def test_files_nccl_rejects(broken, line):
    found = findings(broken)
    assert ("NCCL020", line) in found, found
    assert {code for code, _ in found} <= {"NCCL020", "NCCL021", "NCCL022"}


def test_single_quotes_depend_on_the_version():
    quoted = GOOD.replace('sm="80"', "sm='80'")
    assert ("NCCL020", 4) in findings(quoted, "2.26.2")
    assert "NCCL020" not in {code for code, _ in findings(quoted, "2.27.3")}


def test_silent_misreads():
    assert findings(GOOD.replace('link_speed="16.0 GT/s PCIe"', 'link_speed="Gen4"')) == [("NCCL023", 3)]
    assert findings(GOOD.replace("<gpu dev", "<gpus dev")) == [("NCCL021", 4)]
    assert findings(GOOD.replace('dev="0" sm', 'dev="0"  sm')) == [("NCCL022", 4)]


def test_rules_on_the_tree_stay_quiet_when_nccl_rejects_the_file():
    broken = '<?xml version="1.0"?>\n' + GOOD.replace('affinity="0000ffff"', 'affinity="zz"')
    assert findings(broken) == [("NCCL020", 1)]


def test_graph_version_checked_too():
    graph = '<graphs version="3">\n</graphs>\n'
    assert findings(graph, name="graph.xml") == [("NCCL020", 1)]


def test_chart_option_accepts_a_leading_v_and_short_names():
    assert parse_chart_option("network-operator=v26.4.1") == ("network-operator", "26.4.1")
    assert parse_chart_option("nfd=0.19.0") == ("node-feature-discovery", "0.19.0")
