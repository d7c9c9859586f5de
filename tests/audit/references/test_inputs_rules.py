"""audit.references.inputs, rule by rule: formats, the offset → line/column map across anchors,
HTML read as text with each piece anchored in the source, PDF limits and exact errors."""

from __future__ import annotations

import io
import logging
from pathlib import Path

import pytest

from audit.errors import DocumentError, InputError, LimitExceeded
from audit.references import inputs
from audit.references.inputs import (
    Anchor,
    Field,
    Input,
    Record,
    SourceText,
    format_for,
    json_string_offset,
    parse_input,
    pdf_pages,
    quiet_loggers,
    read_input,
)
from audit.references.model import Span
from tests.audit.references.pdfs import text_pdf

# --- formats and reading --------------------------------------------------------------------


@pytest.mark.parametrize(
    ("name", "expected"),
    [
        ("a.markdown", "markdown"),
        ("a.TEXT", "text"),
        ("a.xhtml", "html"),
        ("a.bibtex", "bibtex"),
        ("A.RIS", "ris"),
        ("a.JSON", "csl-json"),
        ("a.PDF", "pdf"),
    ],
)
def test_every_extension_names_its_format_whatever_its_case(name: str, expected: str) -> None:
    assert format_for(name) == expected


def test_a_given_format_is_taken_even_for_a_name_without_extension() -> None:
    assert format_for("-", "csl-json") == "csl-json"
    assert format_for("notes", "text") == "text"


def test_a_file_of_exactly_the_limit_is_read(tmp_path: Path) -> None:
    path = tmp_path / "refs.txt"
    path.write_bytes(b"x" * 100)
    assert read_input(path, max_bytes=100).source.text == "x" * 100
    assert read_input(path, "markdown").source.format == "markdown"


def test_a_folder_given_as_a_file_is_one_line_naming_it(tmp_path: Path) -> None:
    folder = tmp_path / "refs.md"
    folder.mkdir()
    with pytest.raises(DocumentError) as caught:
        read_input(folder)
    assert str(caught.value) == f"{folder}: cannot read: Is a directory"


def test_bytes_of_exactly_the_limit_are_parsed() -> None:
    assert parse_input(b"abc", "-", "text", max_bytes=3).source.text == "abc"
    with pytest.raises(LimitExceeded) as caught:
        parse_input(b"abcd", "-", "pdf", max_bytes=3)
    assert str(caught.value) == "-: 4 bytes is over the limit of 3 bytes"


@pytest.mark.parametrize("fmt", ["markdown", "text"])
def test_prose_formats_are_text_without_records(fmt: str) -> None:
    assert parse_input("\ufeffé".encode(), "n", fmt) == Input(SourceText("n", fmt, "é"))  # type: ignore[arg-type]


def test_each_structured_format_is_read_into_records() -> None:
    bib = parse_input(b"@misc{k, title={T}}", "r", "bibtex")
    assert (bib.source.format, bib.records) == ("bibtex", (Record("k", 0, 19, title="T"),))
    ris = parse_input(b"TY  - JOUR\nTI  - T\nER  - \n", "r", "ris")
    assert (ris.source.format, ris.records) == ("ris", (Record(None, 0, 25, title="T"),))
    csl = parse_input(b'[{"id": "k"}]', "r", "csl-json")
    assert (csl.source.format, csl.records) == ("csl-json", (Record("k", 1, 12),))


def test_a_bad_byte_after_the_first_is_named_with_its_offset() -> None:
    with pytest.raises(DocumentError) as caught:
        parse_input("é\x80".encode() + b"\xc3(", "t.txt", "text")
    assert str(caught.value) == "t.txt: not UTF-8 text: byte 0xc3 at offset 4"
    with pytest.raises(DocumentError) as after_mark:
        parse_input(b"\xef\xbb\xbfab\xffc", "t.txt", "text")
    # the byte order mark is part of the input: the offset is the byte's in the file
    assert str(after_mark.value) == "t.txt: not UTF-8 text: byte 0xff at offset 5"


def test_a_field_and_a_record_default_to_no_position_and_nothing_read() -> None:
    assert Field("x") == Field("x", -1)
    assert Record("k", 1, 2) == Record("k", 1, 2, None, (), None, None, ())


# --- quiet_loggers ------------------------------------------------------------------------------


def test_quiet_loggers_silence_each_logger_named_and_restore_its_level() -> None:
    first, second = logging.getLogger("h4.first"), logging.getLogger("h4.second")
    first.setLevel(logging.INFO)
    second.setLevel(logging.NOTSET)
    try:
        with quiet_loggers("h4.first", "h4.second"):
            assert (first.level, second.level) == (logging.CRITICAL + 1, logging.CRITICAL + 1)
        assert (first.level, second.level) == (logging.INFO, logging.NOTSET)
        with pytest.raises(KeyError), quiet_loggers("h4.first"):
            raise KeyError("x")
        assert first.level == logging.INFO
    finally:
        first.setLevel(logging.NOTSET)


# --- positions ----------------------------------------------------------------------------------

ANCHORED = SourceText(
    "t", "text", "ab\ncd\n\nef", (Anchor(0, 1, 1), Anchor(3, 5, 7, 2), Anchor(7, 9, 1, 3))
)


def test_each_offset_is_placed_from_the_anchor_before_it() -> None:
    assert [ANCHORED.position(offset) for offset in range(10)] == [
        (1, 1, None),
        (1, 2, None),
        (1, 3, None),
        (5, 7, 2),
        (5, 8, 2),
        (5, 9, 2),
        (6, 1, 2),
        (9, 1, 3),
        (9, 2, 3),
        (9, 3, 3),
    ]


def test_an_offset_before_the_first_anchor_is_placed_from_it() -> None:
    text = SourceText("t", "text", "a\nbc", (Anchor(2, 3, 4),))
    assert [text.position(0), text.position(3)] == [(3, 4, None), (3, 5, None)]


@pytest.mark.parametrize(
    ("start", "end", "where"),
    [
        (0, 2, (1, 1, 1, 3, None)),
        (2, 3, (1, 3, 1, 4, None)),
        (3, 3, (5, 7, 5, 7, 2)),
        (1, 5, (1, 2, 5, 9, None)),
        (4, 9, (5, 8, 9, 3, 2)),
    ],
)
def test_a_span_runs_from_its_first_character_to_after_its_last(
    start: int, end: int, where: tuple[int, int, int, int, int | None]
) -> None:
    line, column, end_line, end_column, page = where
    assert ANCHORED.span(start, end) == Span(
        file="t", line=line, column=column, end_line=end_line, end_column=end_column, page=page
    )


# --- HTML -------------------------------------------------------------------------------------


def html(source: str) -> tuple[str, list[tuple[int, int, int]]]:
    read = parse_input(source.encode(), "h.html", "html").source
    assert read.format == "html"
    return read.text, [(a.offset, a.line, a.column) for a in read.anchors]


def test_headings_lists_and_blocks_become_markdown_lines() -> None:
    assert html("<h3>T</h3>")[0] == "\n\n### T\n"
    assert html("<h1>A</h1><h6>B</h6>")[0] == "\n\n# A\n\n\n###### B\n"
    assert html("<ol><li>a<li>b</ol><ul><li>c</ul><li>d")[0] == "\n\n1. a\n2. b\n\n\n- c\n\n- d"
    assert html("<ol><li>a<ul><li>b</ul><li>c</ol>")[0] == "\n\n1. a\n\n- b\n\n2. c\n"
    assert html("<p>x<br>y<br/>z<hr/>w<hr>v</p>")[0] == "\nx\ny\nz\nw\nv\n"
    assert html("<div><span>a</span></div></p>")[0] == "\na\n\n"
    assert html("<table><tr><td>a</td><td>b</td></tr></table>")[0] == "\n\nab\n\n"


def test_script_style_and_template_content_is_dropped_and_nothing_else() -> None:
    text, anchors = html(
        "<script>s</script>a<style>t</style>b<template>u<p>x</p></template>c"
        '<script><a href="https://x">t</a></script>d'
    )
    assert (text, anchors) == ("abcd", [(0, 1, 19), (1, 1, 36), (2, 1, 67), (3, 1, 110)])
    assert html("<template><template>x</template>y</template>z")[0] == "z"


def test_entities_are_decoded_and_unknown_ones_kept() -> None:
    assert html("&amp;&#65;&#x42;&nbsp;&bogus;") == (
        "&AB\xa0&bogus;",
        [(0, 1, 1), (1, 1, 6), (2, 1, 11), (3, 1, 17), (4, 1, 23)],
    )


def test_a_link_target_is_text_after_the_link_unless_the_link_shows_it() -> None:
    source = (
        '<a href="https://x.org/1">t</a>|<a href="HTTPS://X">HTTPS://X</a>|'
        '<a href="mailto:m">m</a>|<a href="doi:10.1/z">z</a>|<a>n</a>|<a href="">e</a>'
        '|<a name="x" href="http://y.org">y</a>'
    )
    text, anchors = html(source)
    assert text == ("t <https://x.org/1> |HTTPS://X|m|z <doi:10.1/z> |n|e|y <http://y.org> ")
    href_column = source.index("https://x.org/1") + 1
    assert anchors[:4] == [(0, 1, 27), (1, 1, href_column), (3, 1, href_column), (18, 1, 10)]
    target = text.index("http://y.org")
    assert (target, 1, source.index("http://y.org") + 1) in anchors


def test_a_link_target_on_a_later_line_of_its_tag_points_at_the_target() -> None:
    text, anchors = html('<p>\n<a\n  class="c"\n  href="https://x.org/2">t</a></p>')
    assert text == "\n\nt <https://x.org/2> \n"
    assert anchors == [
        (0, 1, 1),
        (1, 1, 4),
        (2, 4, 26),
        (3, 4, 9),
        (5, 4, 9),
        (20, 4, 9),
        (22, 4, 31),
    ]


def test_a_link_target_written_with_entities_points_at_its_tag() -> None:
    text, anchors = html('x <a href="https://x.org/&amp;q">t</a>')
    assert text == "x t <https://x.org/&q> "
    assert anchors == [(0, 1, 1), (2, 1, 34), (3, 1, 3), (5, 1, 3), (21, 1, 3)]


def test_a_link_inside_a_dropped_element_or_after_its_text_closes_cleanly() -> None:
    assert html("</a><p>a</p>")[0] == "\na\n"
    assert html('<a href="https://x.org/3"><b>https://x.org/3</b></a>')[0] == "https://x.org/3"
    assert html("</ul></ol>x")[0] == "\n\nx"


def test_an_empty_html_file_is_empty_text_anchored_at_its_start() -> None:
    assert html("") == ("", [(0, 1, 1)])
    assert html("<script>only</script>") == ("", [(0, 1, 1)])


# --- PDF --------------------------------------------------------------------------------------


def test_pdf_pages_are_joined_by_a_blank_line_each_anchored_at_its_page() -> None:
    read = parse_input(text_pdf([["a"], ["b c"]]), "p.pdf", "pdf").source
    assert (read.format, read.text, read.anchors) == (
        "pdf",
        "a\n\n\nb c\n",
        (Anchor(0, 1, 1, 1), Anchor(4, 1, 1, 2)),
    )


def test_a_pdf_may_start_after_blank_bytes() -> None:
    assert pdf_pages(b"\n  " + text_pdf([["x"]]), "p.pdf") == ["x\n"]


def test_a_pdf_of_more_pages_than_the_limit_is_refused(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(inputs, "MAX_PDF_PAGES", 1)
    with pytest.raises(LimitExceeded) as caught:
        pdf_pages(text_pdf([["a"], ["b"]]), "p.pdf")
    assert str(caught.value) == "p.pdf: 2 pages is over the limit of 1 pages"
    assert pdf_pages(text_pdf([["a"]]), "p.pdf") == ["a\n"]


def test_an_encrypted_pdf_is_refused_naming_the_file() -> None:
    from pypdf import PdfReader, PdfWriter

    writer = PdfWriter()
    writer.append(PdfReader(io.BytesIO(text_pdf([["secret"]]))))
    writer.encrypt("pw")
    out = io.BytesIO()
    writer.write(out)
    with pytest.raises(DocumentError) as caught:
        pdf_pages(out.getvalue(), "lock.pdf")
    assert str(caught.value) == "lock.pdf: the PDF is encrypted; citeseal reads unencrypted PDFs"


def test_a_pdf_that_does_not_parse_names_the_first_line_of_the_error() -> None:
    with pytest.raises(DocumentError) as caught:
        pdf_pages(b"%PDF-1.4\n", "short.pdf")
    assert str(caught.value).startswith("short.pdf: the PDF does not parse: ")
    detail = str(caught.value).removeprefix("short.pdf: the PDF does not parse: ")
    assert detail and "\n" not in detail and len(detail) <= 200


# --- json_string_offset -------------------------------------------------------------------


@pytest.mark.parametrize(
    ("text", "value", "start", "end", "offset"),
    [
        ('["é", "\\u00e9"]', "é", 0, 14, 2),
        ('["\\u00e9", "é"]', "é", 0, 14, 12),
        ('["\\u00e9"]', "é", 0, 10, 2),
        ('["\\u00e9"]', "é", 3, 10, -1),
        ('["\\"q\\""]', '"q"', 0, 9, 2),
        ('["a\\u00e9\\n"]', "aé\n", 0, 14, 2),
        ('["aé\\n"]', "aé\n", 0, 9, 2),
        ('["x"]', "é", 0, 5, -1),
        ('["é"]', "é", 0, 2, -1),
    ],
)
def test_a_json_string_is_found_as_written_raw_or_escaped(
    text: str, value: str, start: int, end: int, offset: int
) -> None:
    assert json_string_offset(text, value, start, end) == offset


def test_a_format_that_is_no_format_is_refused_before_any_reading() -> None:
    with pytest.raises(InputError):
        format_for("a.md", "PDF")


@pytest.mark.skipif(not Path("/proc/self/status").is_file(), reason="needs Linux's /proc")
def test_a_file_longer_than_its_stated_size_is_still_cut_at_the_limit() -> None:
    status = Path("/proc/self/status")  # stat says 0 bytes; reading gives far more
    with pytest.raises(LimitExceeded) as caught:
        read_input(status, "text", max_bytes=10)
    assert str(caught.value) == f"{status}: 11 bytes is over the limit of 10 bytes"


def test_a_link_showing_its_target_across_entities_gets_no_second_copy() -> None:
    assert html('<a href="https://x.org/a&b">https://x.org/a&amp;b</a>')[0] == "https://x.org/a&b"


def test_a_closed_list_item_ends_its_line() -> None:
    assert html("<ul><li>a</li><li>b</li></ul>")[0] == "\n\n- a\n\n- b\n\n"


def test_a_json_string_is_found_whole_even_at_the_start_of_the_text() -> None:
    assert json_string_offset("x", "x", 0, 1) == 0
    assert json_string_offset('["\\u00e8", "\\u00e9"]', "é", 0, 20) == 12


def test_each_pdf_page_is_anchored_after_all_the_pages_before_it() -> None:
    read = parse_input(text_pdf([["a"], ["bb"], ["c"]]), "p.pdf", "pdf").source
    assert [(a.offset, a.page) for a in read.anchors] == [(0, 1), (4, 2), (9, 3)]
    assert read.text == "a\n\n\nbb\n\n\nc\n"


def test_a_pdf_parse_error_is_its_first_line_cut_at_200_or_else_its_kind(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    import pypdf

    assert (
        refused_pdf(b"%PDF-1.4\n") == "s.pdf: the PDF does not parse: Stream has ended unexpectedly"
    )

    def raising(error: Exception) -> object:
        def reader(stream: object) -> object:
            raise error

        return reader

    monkeypatch.setattr(pypdf, "PdfReader", raising(ValueError("x" * 250 + "\nsecond line")))
    assert refused_pdf(b"%PDF-1.4\n") == "s.pdf: the PDF does not parse: " + "x" * 200
    monkeypatch.setattr(pypdf, "PdfReader", raising(KeyError()))
    assert refused_pdf(b"%PDF-1.4\n") == "s.pdf: the PDF does not parse: KeyError"


def refused_pdf(data: bytes) -> str:
    with pytest.raises(DocumentError) as caught:
        pdf_pages(data, "s.pdf")
    return str(caught.value)


def test_pypdf_stays_quiet_even_when_its_logger_is_verbose(
    caplog: pytest.LogCaptureFixture,
) -> None:
    caplog.set_level("DEBUG", logger="pypdf")
    with pytest.raises(DocumentError):
        pdf_pages(b"%PDF-1.4\n1 0 obj << /Type", "broken.pdf")
    assert [r.name for r in caplog.records if r.name.startswith("pypdf")] == []


@pytest.mark.parametrize(
    ("source", "column"),
    [
        ('<a/href="https://x.org/1">t</a>', 10),
        ('<a title="x"href="https://x.org/1">t</a>', 19),
        ('<a href="https://x.org/1" title="https://x.org/1">t</a>', 10),
        ('<a data-href="https://x.org/1" href="https://x.org/1">t</a>', 38),
    ],
)
def test_a_link_target_points_at_the_href_attribute_however_it_is_written(
    source: str, column: int
) -> None:
    text, anchors = html(source)
    assert text == "t <https://x.org/1> "
    assert anchors[1:] == [(1, 1, column), (3, 1, column), (18, 1, column)]
