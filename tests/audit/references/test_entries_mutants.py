"""audit.references.entries in detail: the author splits, footnote bounds, where an entry's
identifiers stop, the metadata rules' edge cases and identifiers a structured field could not
locate.

test_entries.py shows each rule on a typical input; these pin the details a typical input
leaves open (the survivors of the module's first mutation run, docs/mutation.md).
"""

from __future__ import annotations

from audit.references import extract_bytes
from audit.references.entries import extract_document
from audit.references.inputs import Field, Input, Record, SourceText
from audit.references.model import ExtractedDocument, Reference


def _md(text: str) -> ExtractedDocument:
    return extract_bytes(text.encode(), "doc.md")


def _entry(text: str) -> Reference:
    (reference,) = _md(text).references
    assert reference.kind == "entry"
    return reference


def _kinds(document: ExtractedDocument) -> list[tuple[str, str | None, list[str]]]:
    return [(r.kind, r.label, [i.value for i in r.identifiers]) for r in document.references]


# --- authors -------------------------------------------------------------------------------------


def test_authors_joined_by_an_ampersand_without_initials_are_split_there() -> None:
    reference = _entry("## References\n1. Smith J & Doe K (2099). Title. Venue.\n")
    assert reference.authors == ("Smith J", "Doe K")


def test_a_comma_before_the_ampersand_is_no_part_of_the_author_before_it() -> None:
    reference = _entry("## References\n1. Kim K, & Lee L (2099). Title. Venue.\n")
    assert reference.authors == ("Kim K", "Lee L")


def test_authors_with_initials_are_split_after_each_initial_without_an_ampersand() -> None:
    reference = _entry("## References\n1. Alvarez, M., Brown, T. (2099). Title. Venue.\n")
    assert reference.authors == ("Alvarez, M.", "Brown, T.")


def test_the_last_author_after_and_is_split_off_in_a_list_with_initials() -> None:
    reference = _entry("## References\n1. Kim, K., Lee, L. and Park, P. (2099). Title. Venue.\n")
    assert reference.authors == ("Kim, K.", "Lee, L.", "Park, P.")


def test_a_serial_comma_before_and_is_no_part_of_the_last_author() -> None:
    reference = _entry(
        '## References\n1. K. Kim, L. Lee, and M. Park, "A title," Synth. Lett., 2099.\n'
    )
    assert reference.authors == ("K. Kim", "L. Lee", "M. Park")


def test_a_colon_after_the_authors_is_no_part_of_them() -> None:
    reference = _entry('## References\n1. Smith, J.: "A title," Venue, 2099.\n')
    assert (reference.authors, reference.title) == (("Smith, J.",), "A title")


def test_an_author_whose_name_starts_with_x_keeps_it() -> None:
    reference = _entry("## References\n1. Xu, Y. (2099). Title. Venue.\n")
    assert reference.authors == ("Xu, Y.",)


def test_et_al_with_its_full_stop_is_not_an_author() -> None:
    reference = _entry("## References\n1. Kim K, Lee L, et al. (2099). Title. Venue.\n")
    assert reference.authors == ("Kim K", "Lee L")


def test_an_entry_of_one_sentence_has_no_authors() -> None:
    reference = _entry("## References\n1. Synthetic data handbook\n")
    assert (reference.title, reference.authors) == ("Synthetic data handbook", ())


# --- footnotes -----------------------------------------------------------------------------------


def test_a_footnote_definition_before_the_reference_section_is_an_entry() -> None:
    document = _md("[^a]: Foot. doi:10.5555/f1\n\n## References\n1. X.\n")
    assert _kinds(document) == [("entry", "a", ["10.5555/f1"]), ("entry", "1", [])]


def test_a_footnote_line_inside_a_reference_section_is_one_entry() -> None:
    document = _md("## References\n[^a]: Smith AB. Foot. doi:10.5555/f4\n")
    assert _kinds(document) == [("entry", "a", ["10.5555/f4"])]


def test_footnote_definitions_listed_under_a_references_heading_are_one_entry_each() -> None:
    document = _md(
        "Claim.[^1] Other.[^2]\n\n## References\n\n"
        "[^1]: Smith AB. One. J Synth. 2099. doi:10.5555/q1\n"
        "[^2]: Doe C. Two. J Synth. 2098. doi:10.5555/q2\n"
    )
    assert _kinds(document) == [
        ("entry", "1", ["10.5555/q1"]),
        ("entry", "2", ["10.5555/q2"]),
    ]
    assert [(r.authors, r.title) for r in document.references] == [
        (("Smith AB",), "One"),
        (("Doe C",), "Two"),
    ]


def test_a_footnote_continues_on_lines_indented_by_four_spaces() -> None:
    document = _md("Text.\n\n[^a]: Smith AB. Foot.\n    doi:10.5555/f2\nNext doi:10.5555/after\n")
    assert _kinds(document) == [
        ("entry", "a", ["10.5555/f2"]),
        ("running_text", None, ["10.5555/after"]),
    ]
    assert document.references[0].raw == "[^a]: Smith AB. Foot.\n    doi:10.5555/f2"


def test_a_footnote_continues_on_lines_indented_by_a_tab() -> None:
    document = _md("Text.\n\n[^a]: Smith AB. Foot.\n\tdoi:10.5555/f3\n")
    assert _kinds(document) == [("entry", "a", ["10.5555/f3"])]
    assert document.references[0].raw == "[^a]: Smith AB. Foot.\n\tdoi:10.5555/f3"


def test_a_footnote_is_read_from_after_its_colon() -> None:
    reference = _entry("[^a]: Smith AB. A foot title. J Synth. 2099.\n")
    assert (reference.label, reference.authors, reference.title, reference.venue) == (
        "a",
        ("Smith AB",),
        "A foot title",
        "J Synth",
    )


def test_an_identifier_at_the_start_of_the_line_after_a_footnote_is_running_text() -> None:
    document = _md("[^1]: Smith AB. Foot. J Synth. 2099.\nPMID: 99000004 is cited here.\n")
    assert _kinds(document) == [
        ("entry", "1", []),
        ("running_text", None, ["99000004"]),
    ]


# --- entries -------------------------------------------------------------------------------------


def test_an_unindented_continuation_line_of_an_author_year_entry_continues_it() -> None:
    document = _md("References:\nAlvarez, M. (2099). One.\nSynth J, 1, 2.\n")
    (reference,) = document.references
    assert (reference.raw, reference.title, reference.venue) == (
        "Alvarez, M. (2099). One.\nSynth J, 1, 2.",
        "One",
        "Synth J",
    )


def test_an_entry_that_starts_with_its_identifier_holds_it() -> None:
    document = _md("References\n\nhttps://doi.org/10.5555/b1\n\nhttps://doi.org/10.5555/b2\n")
    assert _kinds(document) == [
        ("entry", None, ["10.5555/b1"]),
        ("entry", None, ["10.5555/b2"]),
    ]


def test_identifiers_before_the_metadata_are_removed_before_it_is_read() -> None:
    reference = _entry(
        "## References\n1. doi:10.5555/m1 PMID: 99000001 Roe R. A title. Synth Rev. 2098.\n"
    )
    assert [i.value for i in reference.identifiers] == ["10.5555/m1", "99000001"]
    assert (reference.authors, reference.title, reference.venue, reference.year) == (
        ("Roe R",),
        "A title",
        "Synth Rev",
        2098,
    )


def test_a_url_is_removed_before_the_metadata_is_read() -> None:
    reference = _entry("## References\n1. Roe, R. (2098). A title. https://example.org/t\n")
    assert (reference.title, reference.venue) == ("A title", None)


def test_underscore_emphasis_is_removed_before_the_metadata_is_read() -> None:
    reference = _entry("## References\n1. Roe R. A _synthetic_ title. Synth Rev. 2098.\n")
    assert reference.title == "A synthetic title"


def test_emphasis_closed_just_before_a_full_stop_leaves_the_sentence_whole() -> None:
    apa = _entry("## References\n1. Roe, R. (2098). *A title*. Synth Rev, 7, 1.\n")
    vancouver = _entry("## References\n1. Roe R. _A title_. Synth Rev. 2098.\n")
    assert (apa.title, apa.venue) == ("A title", "Synth Rev")
    assert (vancouver.title, vancouver.venue) == ("A title", "Synth Rev")


# --- year, title, venue --------------------------------------------------------------------------


def test_the_parenthesised_year_wins_over_a_year_in_the_title() -> None:
    reference = _entry("## References\n1. Roe, R. (2099). Results of 2050. Venue.\n")
    assert (reference.year, reference.title) == (2099, "Results of 2050")


def test_a_year_written_before_a_quoted_title_is_the_year() -> None:
    reference = _entry('## References\n1. Kim, Kelly. 2099. "A Title." Synth Letters 3: 1-2.\n')
    assert (reference.year, reference.title, reference.venue) == (2099, "A Title", "Synth Letters")


def test_a_one_letter_author_before_the_year_is_the_author() -> None:
    reference = _entry("## References\n1. X(2099). Title. Venue.\n")
    assert (reference.authors, reference.title) == (("X",), "Title")


def test_an_entry_that_starts_with_its_year_has_no_authors() -> None:
    reference = _entry("## References\n1. (2099). A title. Synth Rev.\n")
    assert (reference.authors, reference.title, reference.venue, reference.year) == (
        (),
        "A title",
        "Synth Rev",
        2099,
    )


def test_a_title_after_the_year_keeps_its_first_letter() -> None:
    reference = _entry("## References\n1. Kim, K. (2099). Xenon imaging. Venue.\n")
    assert reference.title == "Xenon imaging"


def test_a_stray_closing_quote_after_the_year_does_not_hide_the_title() -> None:
    reference = _entry("## References\n1. Kim, K. (2099).\u201d Title. Venue.\n")
    assert (reference.title, reference.venue) == ("Title", "Venue")


# --- running text --------------------------------------------------------------------------------


def test_an_arxiv_datacite_doi_in_running_text_is_one_reference_with_both_ids() -> None:
    document = _md("We cite doi:10.48550/arXiv.2099.00001 here.\n")
    assert [
        (r.kind, [(i.scheme, i.value) for i in r.identifiers]) for r in document.references
    ] == [("running_text", [("doi", "10.48550/arxiv.2099.00001"), ("arxiv", "2099.00001")])]


def test_running_text_on_a_last_line_without_a_newline_keeps_its_last_character() -> None:
    (reference,) = _md("We cite doi:10.5555/r1.").references
    assert (reference.kind, reference.raw) == ("running_text", "We cite doi:10.5555/r1.")


# --- records -------------------------------------------------------------------------------------


def test_an_identifier_whose_field_is_not_located_stands_at_its_record() -> None:
    document = extract_bytes(b'[\n  {"id": "a", "DOI": "10.5555\\/esc"}\n]\n', "r.json")
    (reference,) = document.references
    (identifier,) = reference.identifiers
    assert identifier.value == "10.5555/esc"
    assert (identifier.span.line, identifier.span.column) == (2, 3)
    assert (identifier.span.end_line, identifier.span.end_column) == (2, 3)


def test_a_field_located_at_the_very_start_of_the_text_is_located() -> None:
    text = "10.5555/zero and more"
    source = SourceText("r.json", "csl-json", text)
    record = Record(
        label="z", start=0, end=len(text), identifier_fields=(("doi", Field("10.5555/zero", 0)),)
    )
    (reference,) = extract_document(Input(source, (record,))).references
    (identifier,) = reference.identifiers
    assert (identifier.value, identifier.span.column, identifier.span.end_column) == (
        "10.5555/zero",
        1,
        13,
    )
