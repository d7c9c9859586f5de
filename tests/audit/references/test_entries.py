"""audit.references.entries: reference lists, entries, metadata and running text."""

from __future__ import annotations

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from audit.errors import CiteSealError
from audit.references import extract_bytes
from audit.references.model import ExtractedDocument
from tests.audit.references.pdfs import text_pdf


def _md(text: str) -> ExtractedDocument:
    return extract_bytes(text.encode(), "doc.md")


def _entries(document: ExtractedDocument) -> list[tuple[str | None, list[str]]]:
    return [
        (r.label, [i.value for i in r.identifiers])
        for r in document.references
        if r.kind == "entry"
    ]


def test_numbered_entries_in_brackets_and_with_dots_each_become_a_reference() -> None:
    document = _md(
        "Intro.\n\n## References\n\n[1] A. doi:10.5555/n1\n[2] B.\n3. C. PMID: 99000001\n"
        "4) D.\n   continued doi:10.5555/n4\n"
    )
    assert _entries(document) == [
        ("1", ["10.5555/n1"]),
        ("2", []),
        ("3", ["99000001"]),
        ("4", ["10.5555/n4"]),
    ]


def test_an_entry_without_any_identifier_is_still_surfaced() -> None:
    (reference,) = _md("# Bibliography\n\n1. Roe R. A title. Synth Rev. 2098;7:1.\n").references
    assert (reference.kind, reference.identifiers, reference.title) == ("entry", (), "A title")
    assert (reference.span.line, reference.span.column, reference.span.end_column) == (3, 1, 40)


def test_author_year_entries_split_at_lines_that_start_with_a_surname() -> None:
    document = _md(
        "References:\n"
        "Alvarez, M. (2099). One. Synth J, 1, 2.\n"
        "Brown, T., & de la Cruz, A. (2098). Two: a subtitle. Made-Up Letters, 3(4), 5.\n"
        "  https://doi.org/10.5555/ay2\n"
        "\n"
        "de la Cruz, A. (2097). Three. Synth J.\n"
    )
    entries = [r for r in document.references if r.kind == "entry"]
    assert [(r.title, r.authors, r.year, r.venue) for r in entries] == [
        ("One", ("Alvarez, M.",), 2099, "Synth J"),
        ("Two: a subtitle", ("Brown, T.", "de la Cruz, A."), 2098, "Made-Up Letters"),
        ("Three", ("de la Cruz, A.",), 2097, "Synth J"),
    ]
    assert [i.value for i in entries[1].identifiers] == ["10.5555/ay2"]


def test_vancouver_metadata_reads_authors_title_venue_and_year() -> None:
    (reference,) = _md(
        "## References\n1. Smith AB, Doe C, et al. A trial of X. J Synth Med. 2099;1(2):3-4.\n"
    ).references
    assert (reference.authors, reference.title, reference.venue, reference.year) == (
        ("Smith AB", "Doe C"),
        "A trial of X",
        "J Synth Med",
        2099,
    )


def test_a_quoted_title_is_the_title() -> None:
    (reference,) = _md(
        '## References\n[7] K. Kim and L. Lee, "Quoted and found," Synth. Lett., vol. 3, 2096.\n'
    ).references
    assert (reference.label, reference.title, reference.authors, reference.year) == (
        "7",
        "Quoted and found",
        ("K. Kim", "L. Lee"),
        2096,
    )


def test_the_section_ends_at_the_next_heading_of_its_level() -> None:
    document = _md(
        "## References\n1. A. doi:10.5555/s1\n### Books\n2. B. doi:10.5555/s2\n"
        "## Appendix\n1. Not a reference entry, only text with doi:10.5555/s3\n"
    )
    assert _entries(document) == [("1", ["10.5555/s1"]), ("2", ["10.5555/s2"])]
    assert [r.kind for r in document.references][-1] == "running_text"


def test_a_setext_heading_opens_a_reference_section() -> None:
    document = _md("Text.\n\nReferences\n----------\n\n- A. PMID: 99000002\n- B.\n")
    assert _entries(document) == [(None, ["99000002"]), (None, [])]


def test_footnote_definitions_are_entries_wherever_they_stand() -> None:
    document = _md("A claim.[^a]\n\n[^a]: Smith AB. Foot. J Synth. 2099. NCT99000001\n\nEnd.\n")
    assert _entries(document) == [("a", ["NCT99000001"])]


def test_identifiers_in_running_text_are_references_of_their_own() -> None:
    document = _md("We cite doi:10.5555/r1 and PMID: 99000003 on one line.\n")
    assert [(r.kind, r.raw, [i.value for i in r.identifiers]) for r in document.references] == [
        ("running_text", "We cite doi:10.5555/r1 and PMID: 99000003 on one line.", ["10.5555/r1"]),
        ("running_text", "We cite doi:10.5555/r1 and PMID: 99000003 on one line.", ["99000003"]),
    ]
    assert [i.value for i in document.identifiers] == ["10.5555/r1", "99000003"]


def test_an_identifier_written_twice_in_one_entry_is_listed_once() -> None:
    (reference,) = _md(
        "## References\n1. A. doi:10.5555/Twice https://doi.org/10.5555/twice\n"
    ).references
    assert [(i.value, i.raw) for i in reference.identifiers] == [
        ("10.5555/twice", "doi:10.5555/Twice")
    ]


def test_crlf_line_ends_read_like_lf() -> None:
    document = extract_bytes(
        b"Text.\r\n\r\n## References\r\n\r\n1. A. doi:10.5555/c1\r\n2. B.\r\n", "w.md"
    )
    assert _entries(document) == [("1", ["10.5555/c1"]), ("2", [])]
    assert document.references[0].raw == "1. A. doi:10.5555/c1"


def test_an_entry_keeps_its_raw_text_as_written() -> None:
    text = "## References\n1. Smith AB. **Bold** title.\n   doi:10.5555/raw1\n"
    (reference,) = _md(text).references
    assert reference.raw == "1. Smith AB. **Bold** title.\n   doi:10.5555/raw1"
    assert reference.title == "Bold title"


@pytest.mark.parametrize("fmt", ["markdown", "text", "html"])
@settings(suppress_health_check=[HealthCheck.too_slow], max_examples=150)
@given(text=st.text(max_size=400))
def test_prose_extraction_never_raises_on_arbitrary_text(fmt: str, text: str) -> None:
    document = extract_bytes(text.encode(), "fuzz", fmt)
    for reference in document.references:
        for identifier in reference.identifiers:
            assert identifier.span.line >= 1 and identifier.span.column >= 1


_REFERENCE_NOISE = st.lists(
    st.sampled_from(
        [
            "## References",
            "References",
            "1. ",
            "[2] ",
            "- ",
            "Smith, A. (2099). ",
            "\n",
            "\n\n",
            "doi:10.5555/x",
            "PMID: 99000001",
            "ISBN 9-99999-001-0",
            "   ",
            '"q," ',
            "arXiv:",
            "2099.01234",
            "et al. ",
            "(",
            ")",
            "&",
            "<li>",
            "<h2>",
            "&amp;",
            "[^1]: ",
            "=====",
        ]
    ),
    max_size=40,
).map("".join)


@pytest.mark.parametrize("fmt", ["markdown", "html"])
@settings(max_examples=200)
@given(text=_REFERENCE_NOISE)
def test_extraction_never_raises_on_reference_shaped_noise(fmt: str, text: str) -> None:
    extract_bytes(text.encode(), "noise", fmt)


def _only_our_errors(data: bytes, fmt: str) -> None:
    try:
        extract_bytes(data, "fuzz", fmt)
    except CiteSealError as error:
        assert "\n" not in str(error)
        assert str(error).startswith("fuzz: ")


_STRUCTURED_NOISE = st.lists(
    st.sampled_from(
        [
            "@article{k,",
            "title={",
            "}",
            "{",
            "doi = ",
            "10.5555/b",
            ",",
            "\n",
            "TY  - JOUR",
            "ER  - ",
            "AU  - ",
            "DO  - ",
            "[",
            "]",
            '{"DOI": ',
            '"10.5555/c"',
            '"author": ',
            "null",
            "1",
            '"',
            "@string{s = ",
            "#",
            "\\",
        ]
    ),
    max_size=30,
).map("".join)


@pytest.mark.parametrize("fmt", ["bibtex", "ris", "csl-json"])
@settings(max_examples=150, deadline=None)
@given(data=st.one_of(st.binary(max_size=300), _STRUCTURED_NOISE.map(str.encode)))
def test_structured_inputs_raise_only_our_own_one_line_errors(fmt: str, data: bytes) -> None:
    _only_our_errors(data, fmt)


@settings(max_examples=150, deadline=None)
@given(data=st.binary(max_size=300))
def test_pdf_input_raises_only_our_own_one_line_errors(data: bytes) -> None:
    _only_our_errors(b"%PDF-1.4\n" + data, "pdf")


@settings(max_examples=150, deadline=None)
@given(
    edits=st.lists(
        st.tuples(st.integers(min_value=0, max_value=10_000), st.binary(min_size=0, max_size=4)),
        min_size=1,
        max_size=6,
    )
)
def test_a_damaged_pdf_raises_only_our_own_one_line_errors(
    edits: list[tuple[int, bytes]],
) -> None:
    data = bytearray(text_pdf([["References", "1. A. doi:10.5555/pdf.fuzz"]]))
    for at, replacement in edits:
        at %= len(data)
        data[at : at + len(replacement)] = replacement
    _only_our_errors(bytes(data), "pdf")
