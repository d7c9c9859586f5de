"""audit.references.inputs and .structured: formats, positions, limits and exact errors."""

from __future__ import annotations

import builtins
import sys
from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st

from audit.errors import DocumentError, InputError, LimitExceeded
from audit.references import extract_bytes, read_document
from audit.references.inputs import SourceText, format_for, parse_input
from tests.audit.references.pdfs import blank_pdf, text_pdf


@pytest.mark.parametrize(
    ("name", "expected"),
    [
        ("a.md", "markdown"),
        ("A.MARKDOWN", "markdown"),
        ("a.txt", "text"),
        ("a.htm", "html"),
        ("a.html", "html"),
        ("refs.bib", "bibtex"),
        ("refs.ris", "ris"),
        ("refs.csl.json", "csl-json"),
        ("paper.pdf", "pdf"),
    ],
)
def test_the_format_comes_from_the_extension(name: str, expected: str) -> None:
    assert format_for(name) == expected


def test_a_given_format_overrides_the_extension() -> None:
    assert format_for("notes.txt", "markdown") == "markdown"
    document = extract_bytes(b"TY  - JOUR\nDO  - 10.5555/r1\nER  - \n", "export.txt", "ris")
    assert document.format == "ris"
    assert [i.value for i in document.identifiers] == ["10.5555/r1"]


def test_an_unknown_extension_is_an_error_not_a_guess() -> None:
    with pytest.raises(InputError) as caught:
        format_for("paper.docx")
    assert str(caught.value) == (
        "paper.docx: cannot tell the input format from the name; give one of markdown, text,"
        " html, bibtex, ris, csl-json, pdf"
    )


def test_an_unknown_format_name_is_an_error() -> None:
    with pytest.raises(InputError) as caught:
        format_for("a.md", "word")
    assert str(caught.value) == (
        "unknown input format 'word'; expected one of markdown, text, html, bibtex, ris,"
        " csl-json, pdf"
    )


def test_an_input_over_the_size_limit_is_refused_naming_the_file(tmp_path: Path) -> None:
    path = tmp_path / "big.md"
    path.write_bytes(b"x" * 101)
    with pytest.raises(LimitExceeded) as caught:
        read_document(path, max_bytes=100)
    assert str(caught.value) == f"{path}: 101 bytes is over the limit of 100 bytes"
    with pytest.raises(LimitExceeded) as caught:
        extract_bytes(b"x" * 11, "-", "text", max_bytes=10)
    assert str(caught.value) == "-: 11 bytes is over the limit of 10 bytes"


def test_a_missing_file_is_one_line_naming_it(tmp_path: Path) -> None:
    with pytest.raises(DocumentError) as caught:
        read_document(tmp_path / "gone.md")
    assert str(caught.value) == f"{tmp_path / 'gone.md'}: cannot read: No such file or directory"


def test_text_that_is_not_utf8_is_an_error_naming_the_byte() -> None:
    with pytest.raises(DocumentError) as caught:
        extract_bytes(b"ok \xff", "latin.txt")
    assert str(caught.value) == "latin.txt: not UTF-8 text: byte 0xff at offset 3"


def test_a_bom_is_dropped_and_columns_count_from_the_text() -> None:
    document = extract_bytes("\ufeffPMID: 99000001".encode(), "bom.txt")
    (identifier,) = document.identifiers
    assert (identifier.span.line, identifier.span.column) == (1, 1)


@given(st.text(max_size=200), st.integers(min_value=0, max_value=200))
def test_positions_of_plain_text_are_line_and_column_of_the_offset(text: str, at: int) -> None:
    at = min(at, len(text))
    line, column, page = SourceText("t", "text", text).position(at)
    before = text[:at]
    assert line == before.count("\n") + 1
    assert column == at - (before.rfind("\n") + 1) + 1
    assert page is None


# --- HTML ----------------------------------------------------------------------------------


def test_html_positions_point_into_the_html_source() -> None:
    source = b"<p>a &amp; b</p>\n<p>\n  see <b>PMID:</b>&#32;99000001</p>"
    (identifier,) = extract_bytes(source, "p.html").identifiers
    assert identifier.raw == "PMID: 99000001"
    assert (identifier.span.line, identifier.span.column) == (3, 10)
    assert (identifier.span.end_line, identifier.span.end_column) == (3, 32)


def test_a_link_target_is_read_after_the_link_text_once() -> None:
    source = (
        b'<p><a href="https://doi.org/10.5555/l1">paper</a> '
        b'<a href="https://doi.org/10.5555/l2">https://doi.org/10.5555/l2</a> '
        b'<a href="mailto:x@example.org">mail</a></p>'
    )
    document = extract_bytes(source, "links.html")
    assert [(i.value, i.span.column) for i in document.identifiers] == [
        ("10.5555/l1", 13),
        ("10.5555/l2", 88),
    ]


# --- PDF -----------------------------------------------------------------------------------


def test_a_pdf_without_a_text_layer_is_a_one_line_error_naming_the_file() -> None:
    with pytest.raises(DocumentError) as caught:
        extract_bytes(blank_pdf(), "scan.pdf")
    assert str(caught.value) == (
        "scan.pdf: the PDF has no text layer (a scanned image?); citeseal reads only the text"
        " layer and does no OCR"
    )


def test_a_file_that_is_not_a_pdf_is_named() -> None:
    with pytest.raises(DocumentError) as caught:
        extract_bytes(b"<html>", "fake.pdf")
    assert str(caught.value) == "fake.pdf: not a PDF: it does not start with %PDF-"


def test_a_broken_pdf_is_one_line_naming_the_file() -> None:
    with pytest.raises(DocumentError) as caught:
        extract_bytes(b"%PDF-1.4\n1 0 obj << /Type", "broken.pdf")
    assert str(caught.value).startswith("broken.pdf: the PDF does not parse: ")
    assert "\n" not in str(caught.value)


def test_pdf_positions_carry_the_page() -> None:
    data = text_pdf([["no identifiers here"], ["first line", "NCT99000007 cited"]])
    (identifier,) = extract_bytes(data, "p.pdf").identifiers
    assert (identifier.span.page, identifier.span.line, identifier.span.column) == (2, 2, 1)


def test_a_broken_optional_parser_stops_only_its_format(monkeypatch: pytest.MonkeyPatch) -> None:
    real_import = builtins.__import__

    def failing(name: str, *args: object, **kwargs: object) -> object:
        if name.startswith("pypdf"):
            raise ImportError("pypdf is broken here")
        return real_import(name, *args, **kwargs)  # type: ignore[arg-type]

    monkeypatch.delitem(sys.modules, "pypdf", raising=False)
    monkeypatch.setattr(builtins, "__import__", failing)
    with pytest.raises(DocumentError) as caught:
        extract_bytes(text_pdf([["x"]]), "p.pdf")
    assert str(caught.value) == "p.pdf: reading PDF needs pypdf: pypdf is broken here"
    assert extract_bytes(b"PMID: 99000001", "still.md").identifiers[0].value == "99000001"


def test_parse_input_takes_bytes_for_stdin() -> None:
    parsed = parse_input(b"doi:10.5555/stdin", "-", "text")
    assert parsed.source.text == "doi:10.5555/stdin"
    assert parsed.records is None


def test_the_parsers_own_log_lines_do_not_leak(caplog: pytest.LogCaptureFixture) -> None:
    caplog.set_level("DEBUG")
    with pytest.raises(DocumentError):
        extract_bytes(b"@article{bad, title={never closed\n", "refs.bib")
    with pytest.raises(DocumentError):
        extract_bytes(b"%PDF-1.4\n1 0 obj << /Type", "broken.pdf")
    assert [r.name for r in caplog.records if r.name.startswith(("bibtexparser", "pypdf"))] == []


def test_a_link_target_points_at_the_href_value_not_the_same_text_earlier_in_the_tag() -> None:
    source = b'<p><a title="https://doi.org/10.5555/l3" href="https://doi.org/10.5555/l3">x</a></p>'
    (identifier,) = extract_bytes(source, "t.html").identifiers
    assert identifier.span.column == source.index(b"https", 40) + 1
