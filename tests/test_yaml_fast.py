"""The fast YAML reader (C parser events) reads plain YAML exactly as the round-trip loader does.

hpcconf.yamlpos reads plain YAML through the C parser and everything else through ruamel's
round-trip loader; the two must agree on values, key and value spans (with their order) and each
document's first line, or findings would move. Checked over every YAML file of the repository (and of
../shared/upstream when present) and over edge cases written for the purpose.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from hpcconf import yamlpos
from hpcconf.diagnostics import HpcconfError

REPO = Path(__file__).resolve().parents[1]
UPSTREAM = REPO.parent / "shared" / "upstream"

EDGE_CASES = {
    "empty values (round-trip only)": "a:\nb: ~\nc: null\nd: ''\n",
    "quoted keys": "'a b': 1\n\"c\": 'd'\n? e\n: f\n",
    "numbers": "a: 017\nb: 0o17\nc: 0x1F\nd: 1_000\ne: 7.10\nf: .inf\ng: -.5\nh: 1e3\ni: +12\nj: 00\n",
    "booleans and 1.1 words": "a: true\nb: False\nc: yes\nd: on\ne: NO\n",
    "non-string keys": "3: a\n2.5: b\ntrue: c\n~: d\n",
    "duplicate keys, 1 and true (round-trip only)": "1: a\ntrue: b\n",
    "block scalars": "a: |\n  one\n  two\nb: >-\n  folded\n  text\n\nc: |+\n  keep\n\n",
    "flow": "a: {b: 1, c: [2, 3, {d: e}]}\nf: [ ]\ng: { }\n",
    "nested sequences": "- - a\n  - b\n- c: d\n  e: f\n-\n  - g\n",
    "documents": "---\na: 1\n...\n---\n- b\n---\n---\nplain\n",
    "only comments": "# nothing here\n",
    "empty": "",
    "crlf": "a: 1\r\nb:\r\n  - c\r\n",
    "bom and wide characters": "\ufeffname: Grüße 日本語\nnext: [x, 'ÿ']\n",
    "multi-line plain": "a: this is\n  continued\nb: \"quoted\n  too\"\n",
    "tabs (round-trip only)": "a: x\ty\nb: 'p\tq'\n",
    "empty values in sequences and at ends (round-trip only)": "a:\n  - \n  -\n  - x\n  -\nb:\n  c:\nd: {e: , f: }\ng: [ , ]\nh:\n",
    "long key": "k" * 300 + ": v\n",
    "anchors (round-trip only)": "a: &x {b: 1}\nc: *x\n",
    "merge (round-trip only)": "base: &b {x: 1}\nd:\n  <<: *b\n  y: 2\n",
    "tags (round-trip only)": "a: !!str 12\nb: !custom x\n",
    "timestamps (round-trip only)": "a: 2024-01-01\n",
    "directive (round-trip only)": "%YAML 1.1\n---\na: yes\n",
}


def _yaml_files() -> list[Path]:
    roots = [REPO / d for d in ("examples", "out", "skus", "tests", "hpcconf", "templates", "schemas")]
    if UPSTREAM.is_dir():
        roots.append(UPSTREAM)
    return sorted(p for root in roots for p in root.rglob("*") if p.suffix in (".yaml", ".yml") and p.is_file())


def _read_both(text: str) -> tuple[object, object]:
    try:
        slow = [(d.data, list(d.key_spans.items()), list(d.value_spans.items()), d.start_line)
                for d in yamlpos._round_trip_documents(text, "f.yaml")]
    except HpcconfError as error:
        slow = ("error", [d.format() if hasattr(d, "format") else str(d) for d in error.diagnostics])
    fast_docs = yamlpos._fast_documents(text, "f.yaml")
    fast = None if fast_docs is None else [(d.data, list(d.key_spans.items()), list(d.value_spans.items()),
                                            d.start_line) for d in fast_docs]
    return slow, fast


@pytest.mark.parametrize("name", sorted(EDGE_CASES))
def test_edge_cases_read_the_same_or_go_round_trip(name):
    slow, fast = _read_both(EDGE_CASES[name])
    if "round-trip only" in name:
        assert fast is None
    else:
        assert fast is not None, "plain YAML should take the fast path"
        assert repr(fast) == repr(slow)


def test_every_yaml_file_of_the_repository_reads_the_same():
    files = _yaml_files()
    assert len(files) > 50
    fast_count = 0
    for path in files:
        text = path.read_text(encoding="utf-8", errors="replace")
        if len(text) > yamlpos.MAX_YAML_BYTES:
            continue
        slow, fast = _read_both(text)
        if fast is not None:
            fast_count += 1
            assert repr(fast) == repr(slow), path
    assert fast_count > len(files) // 2  # the fast path is the common one, not a rarity


def test_errors_come_from_the_round_trip_reader():
    for text in ("a: [1, 2\n", "a: 1\na: 2\n", "a: b: c\n"):
        assert yamlpos._fast_documents(text, "f.yaml") is None
        with pytest.raises(HpcconfError):
            yamlpos.load_documents(text, "f.yaml")


def test_limits_are_enforced_by_the_fast_reader_too():
    deep = "a:\n" + "".join("  " * i + "- \n" for i in range(1, yamlpos.MAX_YAML_DEPTH + 3))
    flow_deep = "[" * (yamlpos.MAX_YAML_DEPTH + 1) + "]" * (yamlpos.MAX_YAML_DEPTH + 1)
    for text in (deep, flow_deep):
        with pytest.raises(HpcconfError) as fast_error:
            yamlpos.load_documents(text, "f.yaml")
        with pytest.raises(HpcconfError) as slow_error:
            yamlpos._round_trip_documents(text, "f.yaml")
        assert repr(fast_error.value.diagnostics) == repr(slow_error.value.diagnostics)
