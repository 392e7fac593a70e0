"""docs/rules.md and the rule-module index are generated from the rule registry and must not go stale."""

from hpcconf.lint import docs
from hpcconf.lint.docs import DOC_PATH, INDEX_PATH, render_rule_index, render_rules_doc
from hpcconf.lint.rule_loading import load_rules


def test_rules_doc_is_up_to_date():
    assert DOC_PATH.read_text(encoding="utf-8") == render_rules_doc(), \
        "docs/rules.md is stale: run `python -m hpcconf.lint.docs`"


def test_rule_module_index_is_up_to_date():
    assert INDEX_PATH.read_text(encoding="utf-8") == render_rule_index(), \
        "hpcconf/lint/rule_index.py is stale: run `python -m hpcconf.lint.docs`"


def test_check_mode_fails_on_a_stale_index(tmp_path, monkeypatch, capsys):
    stale = tmp_path / "rule_index.py"
    stale.write_text(render_rule_index().replace("'volcano': frozenset", "'volcano_old': frozenset"), encoding="utf-8")
    monkeypatch.setattr(docs, "INDEX_PATH", stale)
    monkeypatch.setattr(docs, "DOC_PATH", tmp_path / "rules.md")
    (tmp_path / "rules.md").write_text(render_rules_doc(), encoding="utf-8")
    assert docs.main(["--check"]) == 1
    assert "rule_index.py is stale" in capsys.readouterr().out
    assert docs.main([]) == 0 and docs.main(["--check"]) == 0  # regenerating fixes it


def test_every_rule_has_a_section_in_the_doc():
    text = DOC_PATH.read_text(encoding="utf-8")
    for rule in load_rules().values():
        assert f"### {rule.code} {rule.name}" in text
