"""hpcconf.yamlio's direct writer against ruamel.yaml's round-trip dumper: the same text, or it leaves the
document to ruamel (issue #28: the per-pool documents' dumps were most of a 200-pool build)."""

from __future__ import annotations

from pathlib import Path

import pytest
from ruamel.yaml.scalarstring import LiteralScalarString

from hpcconf import yamlio
from hpcconf.pipeline import compile_spec

REPO = Path(__file__).resolve().parents[1]


def test_every_document_the_examples_build_is_written_as_ruamel_writes_it(monkeypatch, tmp_path):
    seen: list[tuple[object, str | None]] = []
    direct = yamlio.fast_dump

    def recording(data):
        text = direct(data)
        seen.append((data, text))
        return text

    monkeypatch.setattr(yamlio, "fast_dump", recording)
    pools = tmp_path / "pools.yaml"  # AKS with three GPU pools: the per-pool files
    pools.write_text((REPO / "examples" / "ndmv4-aks-current.yaml").read_text(encoding="utf-8").replace(
        "  - name: ndmv4\n", "".join(f"  - name: p{i}\n    sku: Standard_ND96amsr_A100_v4\n    count: 2\n" for i in (1, 2))
        + "  - name: ndmv4\n"), encoding="utf-8")
    for example in [*sorted((REPO / "examples").glob("*.yaml")), pools]:
        compile_spec(example)
    written = [(data, text) for data, text in seen if text is not None]
    assert len(seen) >= 45 and len(written) >= 0.9 * len(seen)  # the writer does the work, ruamel the rest
    for data, text in written:
        assert text == yamlio.ruamel_dump(data)


AWKWARD = ["", " lead", "trail ", "a: b", "a #b", "#c", "- x", "-x", "--flag=1", "? q", ":", "a:", "*", "&a", "!t",
           "%p", "@x", "`x", "|", ">", "'", "it's", '"q"', "[x]", "{x}", "x,y", "1", "-1", "0x1F", "1e3", "1.5", ".5",
           "1_000", "0o17", "true", "True", "FALSE", "no", "yes", "on", "off", "null", "Null", "~", "2024-01-01",
           "2024-01-01T00:00:00Z", "12:30", "1:2:3", "nan", ".nan", ".inf", "-.inf", "é", "tab\there", "a\nb",
           "x" * 2000, "mlx5_0:1", "NCCL_IB_HCA=mlx5", "$(NODE_NAME)", "/dev/shm", "=", "a=b c", "a  b", "<<", "=x"]


@pytest.mark.parametrize("value", AWKWARD)
def test_awkward_strings_match_or_go_to_ruamel(value):
    for data in ({"k": value}, {"k": [value, {"n": value}]}, {value or "k": 1}, {"k": {"m": [value]}}):
        text = yamlio.fast_dump(data)
        assert text is None or text == yamlio.ruamel_dump(data), data


@pytest.mark.parametrize("block", ["a\n", "a\n\nb\n", "a\n  b\n", "#!/bin/bash\nset -e\n\n  x\n", "é\ttab \n",
                                   " lead\n", "\nlead\n", "no end", "two\n\n", "cr\r\n", "---\nx\n"])
def test_blocks_match_or_go_to_ruamel(block):
    for data in ({"k": LiteralScalarString(block)}, {"k": ["-c", LiteralScalarString(block)]},
                 {"a": [{"b": LiteralScalarString(block), "c": 1}]}):
        text = yamlio.fast_dump(data)
        assert text is None or text == yamlio.ruamel_dump(data), data


def test_other_values_match_or_go_to_ruamel():
    cases = [{"a": None}, {"a": [None]}, {"a": {}}, {"a": []}, {"a": [{}]}, {"a": [[1]]}, {"a": 1.5}, {"a": True},
             {"a": -3}, {1: "a"}, {"a": {"b": {"c": [1, "2", {"d": []}]}}}, {"a": ("t",)}]
    for data in cases:
        text = yamlio.fast_dump(data)
        assert text is None or text == yamlio.ruamel_dump(data), data
    assert yamlio.fast_dump([1]) is None and yamlio.fast_dump({}) is None
    assert yamlio.dump_yaml({"a": 1.5}) == "a: 1.5\n"  # left to ruamel, written all the same
