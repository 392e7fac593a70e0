"""The secret scanner skips, for a whole text, the token formats that match nowhere in it; findings stay the same.

A format pattern without zero-width assertions (anchors, word boundaries, lookarounds) can match a line only
where it matches the whole text, so one search of the text rules it out for every line.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from hpcconf import secret_scan
from hpcconf.secret_scan import scan_text

REPO = Path(__file__).resolve().parents[1]
# Tokens in the formats of the shortcut (and of the ones kept per line), in shapes files really hold them.
PLANTED = (
    "export AWS_ACCESS_KEY_ID=AKIAIOSFODNN7EXAMPLF\n"
    "token: ghp_aBcDeFgHiJkLmNoPqRsTuVwXyZ0123456789\n"
    "  - value: xoxb-123456789012-1234567890123-AbCdEfGhIjKlMnOpQrStUvWx\n"
    "conn=DefaultEndpointsProtocol=https;AccountName=x;AccountKey=" + "A1b2C3d4" * 11 + ";\n"
    "url: https://user:s3cr3tPassw0rd@example.com/repo.git\n"
    "HF_TOKEN=hf_" + "aB3" * 12 + "\n"
    "line " + "x" * 600 + " sk_live_" + "a1B2" * 6 + " " + "y" * 600 + "\n"
)


def _corpus() -> list[str]:
    roots = [REPO / "out", REPO / "examples", REPO / "tests" / "fixtures", REPO / "tests" / "rules",
             REPO.parent / "shared" / "upstream" / "wild" / "files"]
    texts = []
    for root in roots:
        for path in sorted(root.rglob("*")) if root.is_dir() else ():
            if path.is_file() and path.stat().st_size < 300_000:
                try:
                    texts.append(path.read_text(encoding="utf-8"))
                except UnicodeDecodeError:
                    continue
    return texts


def _without_shortcut(monkeypatch, text: str) -> tuple:
    """The scan with the shortcuts off: every format pattern, every assignment shape and every private-key marker on
    every line."""
    import re

    with monkeypatch.context() as patched:
        patched.setattr(secret_scan, "_absent_formats", lambda text: frozenset())
        patched.setattr(secret_scan, "may_hold_private_key_marker", lambda text: True)
        patched.setattr(secret_scan.det, "ANY_CREDENTIAL_WORD", re.compile(""))
        return secret_scan._scan_text.__wrapped__(text)


def test_findings_are_those_of_every_pattern_on_every_line(monkeypatch):
    texts = _corpus() + [PLANTED, PLANTED.replace("\n", "\r\n"), "\n".join(PLANTED.splitlines()[::-1])]
    assert len(texts) > 200
    found = 0
    for text in texts:
        fast = secret_scan._scan_text.__wrapped__(text)
        assert fast == _without_shortcut(monkeypatch, text)
        found += len(fast)
    assert found > 20  # the corpus and the planted lines hold secrets of many kinds


def test_the_planted_tokens_are_found():
    kinds = {(s.line, s.code) for s in scan_text(PLANTED)}
    assert {(1, "SEC003"), (2, "SEC003"), (3, "SEC003"), (4, "SEC004"), (5, "SEC004"), (6, "SEC003"),
            (7, "SEC003")} <= kinds, kinds


@pytest.mark.parametrize("source, context_free", [
    (r"(?:A3T[A-Z0-9]|ABIA|ACCA|AKIA|ASIA)[0-9A-Z]{16}", True),
    (r"glptt-[A-Za-z0-9_\-]{40}(?!\w)", False),
    (r"\bhf_[A-Za-z0-9]{30,}\b", False),
    (r"(?<=[?&])sig=([A-Za-z0-9%+/]{20,}={0,2})", False),
    (r"^token$", False),
])
def test_only_patterns_without_assertions_take_the_shortcut(source, context_free):
    assert (secret_scan._CONTEXT_ASSERTION.search(source) is None) is context_free


def test_a_text_without_a_format_skips_it_and_one_with_it_does_not():
    aws = next(p for p in secret_scan._CONTEXT_FREE_FORMATS if "AKIA" in p.pattern)
    assert id(aws) in secret_scan._absent_formats("nothing here\n")
    assert id(aws) not in secret_scan._absent_formats("a\nkey=AKIAIOSFODNN7EXAMPLF\n")


def test_every_credential_word_holds_a_core_the_assignment_shortcut_looks_for():
    """_assignments returns early on a line with no CREDENTIAL_WORD_CORES: exact only if every shape needs one."""
    import re

    from hpcconf import secret_detectors as det

    words = (*det.KEYWORD_WORDS, *det.EXTRA_WORDS)
    for word in words:
        assert re.fullmatch(r"[a-zñ]+(?:_\?[a-z]+)?", word), f"{word}: a shape the expansions below miss"
        for variant in (word.replace("_?", ""), word.replace("_?", "_"), word.replace("_?", "-")):
            assert det.ANY_CREDENTIAL_WORD.search(variant), variant
    keyword_group = "(" + "|".join(det.KEYWORD_WORDS) + ")"
    extra_group = "(" + "|".join(det.EXTRA_WORDS) + ")"
    for shape in det.KEYWORD_ASSIGNMENTS:
        assert shape.pattern.pattern.startswith(keyword_group) and shape.pattern.flags & re.IGNORECASE
    for shape in det.EXTRA_ASSIGNMENTS:
        assert shape.pattern.pattern.startswith(extra_group) and shape.pattern.flags & re.IGNORECASE
    flag_words = "|".join(words).replace("_?", "[_-]?")
    assert f"(?:{flag_words})" in det.FLAG_ASSIGNMENT.pattern.pattern


@pytest.mark.parametrize("text", ["DB_PASSWORD=Xk9mQ2vL7pR4\n", "--ToKeN Xk9mQ2vL7pR4zzTT\n",
                                  "\u017fecret: Xk9mQ2vL7pR4\n",  # long s: the shapes' IGNORECASE folds it to s
                                  "api-\u212aey = 'Xk9mQ2vL7pR4'\n"])  # Kelvin sign: folds to k
def test_a_credential_word_in_another_case_or_fold_still_reaches_the_shapes(text, monkeypatch):
    assert secret_scan._scan_text.__wrapped__(text) == _without_shortcut(monkeypatch, text)
    if text.startswith(("DB_", "--")):
        assert [s.code for s in scan_text(text)] == ["SEC002"]


def test_every_private_key_marker_needs_one_of_the_words_the_text_is_searched_for():
    """A text holding none of PRIVATE_KEY_MARKER_WORDS skips the marker patterns on each of its lines: every pattern
    must then hold one of the words literally, case and all."""
    import re

    patterns = [secret_scan.det.PRIVATE_KEY_EXTRA, *secret_scan.det.PRIVATE_KEY.denylist]
    for pattern in patterns:
        assert not pattern.flags & re.IGNORECASE, pattern.pattern
        for alternative in pattern.pattern.split("|"):  # each top-level alternative matches alone
            assert any(word in alternative for word in secret_scan.PRIVATE_KEY_MARKER_WORDS), alternative
    key = "-----BEGIN OPENSSH PRIVATE KEY-----\nb3BlbnNzaC1rZXktdjEAAAAABG5vbmUAAAAEbm9uZQ\n-----END OPENSSH PRIVATE KEY-----\n"
    assert [s.kind for s in scan_text(key)] == ["private-key"] * 3
    assert not secret_scan.may_hold_private_key_marker("token: abc\n")
