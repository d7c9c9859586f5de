"""Safe XML/JSON loading: hostile and broken bodies become one-line ParseErrors."""

from __future__ import annotations

import pytest

from pipeline.errors import ParseError
from pipeline.xmlsafe import html_error_title, load_json, parse_xml, text_of

WHAT = "test XML"


def test_text_of_keeps_inline_markup_text_and_skips_named_children() -> None:
    root = parse_xml(
        "<p>IC<sub>50</sub> of <i>zentravir</i>\n  was 12<table-wrap>T</table-wrap> nM</p>",
        what=WHAT,
    )
    assert text_of(root) == "IC50 of zentravir was 12T nM"
    assert text_of(root, skip=("table-wrap",)) == "IC50 of zentravir was 12 nM"
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
