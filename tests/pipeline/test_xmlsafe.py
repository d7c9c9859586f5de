"""Safe XML/JSON loading: hostile and broken bodies become one-line ParseErrors."""

from __future__ import annotations

import json
import re
import unicodedata
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from lxml import etree  # pyright: ignore[reportAttributeAccessIssue]  (no stubs)

from pipeline import xmlsafe
from pipeline.errors import ParseError
from pipeline.xmlsafe import (
    MAX_JSON_DEPTH,
    clean,
    decode_json,
    flatten_scripts,
    html_error_title,
    load_json,
    local,
    parse_xml,
    plain_scripts,
    script,
    text_of,
)

WHAT = "test XML"


def test_text_of_keeps_inline_markup_text_and_skips_named_children() -> None:
    root = parse_xml(
        "<p>IC<sub>50</sub> of <i>zentravir</i>\n  was 12<table-wrap>T</table-wrap> nM</p>",
        what=WHAT,
    )
    assert text_of(root) == "IC\u2085\u2080 of zentravir was 12T nM"
    assert text_of(root, skip=("table-wrap",)) == "IC\u2085\u2080 of zentravir was 12 nM"
    assert text_of(None) == ""


def test_non_breaking_spaces_are_kept_and_undeclared_entities_resolved() -> None:
    body = (
        '<!DOCTYPE a PUBLIC "-//X//EN" "https://example.org/x.dtd">'
        "<a>48&#xa0;210 &nbsp;x &unknownthing; y</a>"
    )
    assert text_of(parse_xml(body, what=WHAT)) == "48\u00a0210 \u00a0x &unknownthing; y"


def test_text_given_as_str_with_an_encoding_declaration() -> None:
    root = parse_xml('<?xml version="1.0" encoding="ISO-8859-1"?><a>caf\u00e9</a>', what=WHAT)
    assert text_of(root) == "caf\u00e9"


@pytest.mark.parametrize(
    ("body", "message"),
    [
        ("", "expected test XML but the body is empty"),
        (
            "<a><b>",
            "expected test XML but the XML is not well-formed: "
            "Premature end of data in tag b line 1",
        ),
        (
            '<!DOCTYPE a [<!ENTITY x "y">]><a>&x;</a>',
            "expected test XML but the XML declares entities (refused: entity expansion and "
            "external entities are not allowed)",
        ),
        (
            "<!doctype html><html><title>Oops</title></html>",
            "expected test XML but got an HTML page ('Oops'); the service may have answered "
            "with an error page",
        ),
    ],
)
def test_bad_xml(body: str, message: str) -> None:
    with pytest.raises(ParseError) as caught:
        parse_xml(body, what=WHAT)
    assert caught.value.message == message


@pytest.mark.parametrize(
    ("body", "message"),
    [
        ("  ", "expected JSON thing but the body is empty"),
        ("<x/>", "expected JSON thing but got XML or markup, not JSON"),
        (
            '{"a": ',
            "expected JSON thing but the JSON is malformed: "
            "Expecting value: line 1 column 7 (char 6)",
        ),
    ],
)
def test_bad_json(body: str, message: str) -> None:
    with pytest.raises(ParseError) as caught:
        load_json(body, what="JSON thing")
    assert caught.value.message == message


def test_html_error_title() -> None:
    assert html_error_title(b"<html><body>x</body></html>") == "untitled"
    assert html_error_title(b"<PubmedArticleSet/>") is None


# -- clean and text_of against their plain definitions (both have fast paths) ----------------
def reference_clean(text: str) -> str:
    return re.sub(r"[ \t\n\r\f\v]+", " ", text).strip()


def reference_text_of(element: Any, skip: tuple[str, ...] = ()) -> str:
    """The full walk: text, children (recursively) and their tails, skipped children's tails;
    the content of a ``<sup>`` / ``<sub>`` below the top written by ``script``."""

    def inner(node: Any) -> str:
        text = node.text or "" if isinstance(node.tag, str) else ""
        for child in node:
            name = local(child.tag)
            if name in skip:
                pass
            elif name in ("sup", "sub"):
                text += script(inner(child), name)
            else:
                text += inner(child)
            text += child.tail or ""
        return text

    return reference_clean(inner(element))


# whitespace of every kind (ASCII runs collapse; NBSP, U+2028, U+3000… are kept), long texts
# (the fast path differs above 64 characters) and non-printable characters
WHITESPACE_AND_FRIENDS = list(" \t\n\r\x0b\x0c\x1c\x85\xa0\u2028\u3000ab\u00e9\x7f.")
# prose: words apart by one space, now and then by one other separator (each ASCII one must
# be found on its own, in short and long texts alike)
prose = st.lists(
    st.tuples(
        st.text(alphabet="ab\u00e9\u00a0.", min_size=1, max_size=9),
        st.sampled_from([" "] * 12 + ["\t", "\n", "\r", "\x0b", "\x0c", "  ", "\x1c", "\u3000"]),
    ),
    max_size=30,
).map(lambda pairs: "".join(word + gap for word, gap in pairs))
spaced_texts = (
    st.text(alphabet=st.sampled_from(WHITESPACE_AND_FRIENDS) | st.characters(), max_size=200)
    | prose
)


@settings(max_examples=250, deadline=None)
@given(spaced_texts)
def test_clean_collapses_ascii_whitespace_only(text: str) -> None:
    assert clean(text) == reference_clean(text)


xml_texts = st.text(alphabet=st.sampled_from(list("ab \t\n\u00a0\u00e9<&")), max_size=80).map(
    lambda t: t.replace("&", "&amp;").replace("<", "&lt;")
)


@st.composite
def xml_trees(draw: st.DrawFn, depth: int = 0) -> str:
    """A small element with mixed content: text, child elements, comments and PIs, tails."""
    tag = draw(st.sampled_from(["p", "i", "table-wrap", "sup"]))
    parts = [draw(xml_texts)]
    if depth < 3:
        for _ in range(draw(st.integers(0, 3))):
            kind = draw(st.sampled_from(["element", "element", "comment", "pi"]))
            if kind == "element":
                parts.append(draw(xml_trees(depth + 1)))
            elif kind == "comment":
                parts.append("<!-- c -->")
            else:
                parts.append("<?pi x?>")
            parts.append(draw(xml_texts))
    return f"<{tag}>{''.join(parts)}</{tag}>"


@settings(max_examples=150, deadline=None)
@given(xml_trees())
def test_text_of_is_the_whole_walk(body: str) -> None:
    root = etree.fromstring(body)  # comments and PIs kept (parse_xml drops them)
    for element in root.iter():
        assert text_of(element) == reference_text_of(element)
        assert text_of(element, skip=("table-wrap",)) == reference_text_of(element, ("table-wrap",))


def test_lone_surrogate_escapes_become_replacement_characters_pairs_stay_whole() -> None:
    body = rb'{"title": "x\ud800y", "authors": ["\ud83d\ude00", "\uDC00"], "\udbff": 1}'
    data = load_json(body, what="a test body")
    assert data == {"title": "x\ufffdy", "authors": ["\U0001f600", "\ufffd"], "\ufffd": 1}
    json.dumps(data, ensure_ascii=False).encode("utf-8")  # raised on a lone surrogate before


TOO_DEEP = "expected JSON thing but the JSON is nested deeper than 64 levels"


@pytest.mark.parametrize(
    "body",
    [
        b"[" * 100_000,  # unbalanced: measured 0 by the old pair-removing scan
        b"[" * 100_000 + b"]" * 100_000,
        b'{"a": ' * 70 + b"1",
        "[" * 100_000,
    ],
    ids=["unbalanced", "balanced", "unbalanced-objects", "str-body"],
)
def test_json_nested_past_the_limit_is_a_parse_error_balanced_or_not(body: str | bytes) -> None:
    for read in (load_json, decode_json):
        with pytest.raises(ParseError) as caught:
            read(body, what="JSON thing")
        assert caught.value.message == TOO_DEEP


def test_json_depth_is_measured_on_the_characters_the_parser_reads_utf16_too() -> None:
    # in UTF-16-LE U+2200 is the bytes 00 22: a scan of raw bytes would see a quote there,
    # think the rest is a string and miss 101 levels of nesting
    text = '["\u2200", ' + "[" * 100 + "]" * 100 + "]"
    body = text.encode("utf-16-le")
    with pytest.raises(ParseError) as caught:
        load_json(body, what="JSON thing")
    assert caught.value.message == TOO_DEEP
    assert load_json('["\u2200", [[1]]]'.encode("utf-16-le"), what="JSON thing") == [
        "\u2200",
        [[1]],
    ]


def test_a_recursion_error_while_parsing_is_a_parse_error_too(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setattr(xmlsafe, "nesting_depth", lambda text, limit: 0)  # a scan that misses
    for read in (load_json, decode_json):
        with pytest.raises(ParseError) as caught:
            read(b"[" * 100_000 + b"]" * 100_000, what="JSON thing")
        assert caught.value.message == TOO_DEEP


def test_json_nested_past_the_limit_is_refused_before_parsing() -> None:
    nested = b"[" * (MAX_JSON_DEPTH + 1) + b"]" * (MAX_JSON_DEPTH + 1)
    with pytest.raises(ParseError) as caught:
        load_json(nested, what="JSON thing")
    assert (
        caught.value.message == "expected JSON thing but the JSON is nested deeper than 64 levels"
    )
    at_limit = b"[" * MAX_JSON_DEPTH + b"]" * MAX_JSON_DEPTH
    assert load_json(at_limit, what="JSON thing") is not None


def test_a_str_body_with_a_lone_surrogate_character_is_read_not_an_encoding_error() -> None:
    assert load_json('{"a": "x\ud800"}', what="a test body") == {"a": "x\ufffd"}


@pytest.mark.parametrize(
    ("content", "kind", "written"),
    [
        ("3", "sup", "\u00b3"),
        ("-1", "sup", "\u207b\u00b9"),
        ("\u22121", "sup", "\u207b\u00b9"),
        ("2+", "sup", "\u00b2\u207a"),
        ("th", "sup", "\u1d57\u02b0"),
        ("50", "sub", "\u2085\u2080"),
        ("max", "sub", "\u2098\u2090\u2093"),
        ("3A4", "sub", "_(3A4)"),
        ("\u2020", "sup", "^(\u2020)"),
        ("q", "sup", "^(q)"),
        ("a b", "sup", "^(a b)"),
        (" a\n", "sup", " \u1d43 "),
        ("  ", "sub", " "),
        ("", "sup", ""),
    ],
)
def test_script_writes_unicode_scripts_only_when_every_character_has_one(
    content: str, kind: str, written: str
) -> None:
    assert script(content, kind) == written


def test_text_of_keeps_mathml_scripts_and_skips_them_in_skipped_children() -> None:
    root = parse_xml(
        '<p xmlns:m="http://www.w3.org/1998/Math/MathML"><m:msup><m:mi>x</m:mi><m:mn>2</m:mn>'
        "</m:msup>, <m:msubsup><m:mi>y</m:mi><m:mi>i</m:mi><m:mn>3</m:mn></m:msubsup> and "
        "<m:msup><m:mi>z</m:mi></m:msup><table-wrap>T<sup>2</sup></table-wrap></p>",
        what=WHAT,
    )
    assert text_of(root) == "x\u00b2, y\u1d62\u00b3 and zT\u00b2"
    assert text_of(root, skip=("table-wrap",)) == "x\u00b2, y\u1d62\u00b3 and z"


def test_flatten_scripts_maps_each_flat_character_back_to_its_offset() -> None:
    flat, where = flatten_scripts("IC\u2085\u2080 CYP_(3A4) x^(\u2020)")
    assert flat == "IC50 CYP3A4 x\u2020"
    assert where == [0, 1, 2, 3, 4, 5, 6, 7, 10, 11, 12, 14, 15, 18, 20]
    assert plain_scripts("10\u00b3 _(x)") == "103 _(x)"


@settings(max_examples=200, deadline=None)
@given(st.text(alphabet=st.sampled_from(list("0123456789+-=abcxyzq\u2020 A")), max_size=12))
def test_flattened_script_is_the_content_it_was_written_from(content: str) -> None:
    for kind in ("sup", "sub"):
        assert flatten_scripts(script(content, kind))[0] == re.sub(" +", " ", content)


def test_script_tables_are_unicodes_own_superscripts_and_subscripts() -> None:
    for table, tag in ((xmlsafe.SUPERSCRIPTS, "<super>"), (xmlsafe.SUBSCRIPTS, "<sub>")):
        for plain, written in table.items():
            base = "\u2212" if plain == "-" else plain  # U+207B/U+208B decompose to U+2212
            assert unicodedata.decomposition(written) == f"{tag} {ord(base):04X}", plain
