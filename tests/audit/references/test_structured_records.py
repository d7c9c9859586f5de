"""audit.references.structured, record by record: every field read from BibTeX, RIS, CSL-JSON.

Each test compares whole :class:`Record` values (label, span, title, authors, year, venue and
each identifier field with its offset), so a field read from the wrong place, a fallback taken
in the wrong order or an offset one off is a failure, not a pass.
"""

from __future__ import annotations

import sys

import pytest

from audit.errors import DocumentError
from audit.references.inputs import Field, Record, SourceText
from audit.references.structured import bibtex_records, csl_records, ris_records


def bib(text: str) -> tuple[Record, ...]:
    return bibtex_records(SourceText("a.bib", "bibtex", text))


def ris(text: str) -> tuple[Record, ...]:
    return ris_records(SourceText("a.ris", "ris", text))


def csl(text: str) -> tuple[Record, ...]:
    return csl_records(SourceText("a.json", "csl-json", text))


def refused(read: object, text: str) -> str:
    with pytest.raises(DocumentError) as caught:
        read(text)  # type: ignore[operator]
    return str(caught.value)


# --- BibTeX ----------------------------------------------------------------------------------

ARTICLE = """@Article{Key1,
  Title = {The {Big} Paper~on \\emph{Things}},
  author = {Smith, John and  Doe,  Jane and
            Alice   Roe},
  journal = {J. Things},
  year = {circa 2019},
  doi = {10.5555/abc},
  eprint = {2101.00001},
  url = {https://example.org/x},
}
"""


def test_a_bibtex_article_gives_every_field_latex_decoded_with_its_offsets() -> None:
    assert bib(ARTICLE) == (
        Record(
            label="Key1",
            start=0,
            end=len(ARTICLE) - 1,
            title="The Big Paper on Things",
            authors=("Smith, John", "Doe, Jane", "Alice Roe"),
            year=2019,
            venue="J. Things",
            identifier_fields=(
                ("doi", Field("10.5555/abc", ARTICLE.index("10.5555/abc"))),
                ("arxiv", Field("2101.00001", ARTICLE.index("2101.00001"))),
                ("any", Field("https://example.org/x", ARTICLE.index("https://"))),
            ),
        ),
    )


def test_bibtex_falls_back_to_editor_date_and_the_later_venue_fields() -> None:
    text = (
        '@book{k, title={On $x^2$ and \\"u}, editor={Ed One and Ed Two},'
        " publisher={Pub}, booktitle={BT}, date={2020-05-01}}"
    )
    assert bib(text) == (
        Record(
            label="k",
            start=0,
            end=len(text),
            title="On $x^2$ and ü",
            authors=("Ed One", "Ed Two"),
            year=2020,
            venue="BT",
        ),
    )


@pytest.mark.parametrize(
    ("fields", "venue"),
    [
        ("journal={J}, journaltitle={JT}, booktitle={BT}, publisher={P}", "J"),
        ("journaltitle={JT}, booktitle={BT}, publisher={P}", "JT"),
        ("booktitle={BT}, publisher={P}", "BT"),
        ("publisher={P {and} Co}", "P and Co"),
        ("journal={}, publisher={P}", "P"),
        ("note={n}", None),
    ],
)
def test_the_bibtex_venue_is_the_first_field_written_in_order(fields: str, venue: str) -> None:
    (record,) = bib("@misc{k, " + fields + "}")
    assert record.venue == venue


def test_an_author_field_wins_over_the_editor_and_year_over_date() -> None:
    (record,) = bib("@misc{k, editor={E}, author={A  B}, date={2001}, year={1999}}")
    assert (record.authors, record.year) == (("A B",), 1999)


@pytest.mark.parametrize(
    ("year", "read"),
    [("1499", None), ("1500", 1500), ("1999", 1999), ("2099", 2099), ("2100", None)],
)
def test_a_bibtex_year_is_a_four_digit_year_from_1500_to_2099(year: str, read: int) -> None:
    (record,) = bib("@misc{k, year={" + year + "}}")
    assert record.year == read


def test_an_empty_title_or_author_is_none_and_no_name() -> None:
    (record,) = bib("@misc{k, title={ {} }, author={A and {} and  B}}")
    assert (record.title, record.authors) == (None, ("A", "B"))


@pytest.mark.parametrize(
    "people",
    [
        "A and  and B",
        "A and and B",
        "A  and\tand\nB",
        "A and B and",
        "A and B and ",
        "A and {} and B",
    ],
)
def test_an_empty_name_between_two_ands_is_no_author_and_no_and_is_a_name(people: str) -> None:
    (record,) = bib("@misc{k, author={" + people + "}}")
    assert record.authors == ("A", "B")


def test_and_inside_a_name_or_braces_does_not_split_it() -> None:
    (record,) = bib("@misc{k, author={Anderson, A. and {Barnes and Noble} and Sandy, C.}}")
    assert record.authors == ("Anderson, A.", "Barnes and Noble", "Sandy, C.")


def test_bibtex_identifier_fields_name_their_scheme_in_the_order_written() -> None:
    text = (
        "@misc{k, eprint={PMC123}, archiveprefix={PMC}, note={see 10.1/x}, howpublished={h},"
        " pmid={1}, pmcid={PMC2}, isbn={978}, eprinttype2={x}}"
    )
    (record,) = bib(text)
    assert record.identifier_fields == (
        ("pmcid", Field("PMC123", 17)),
        ("any", Field("see 10.1/x", text.index("see"))),
        ("any", Field("h", text.index("{h}") + 1)),
        ("pmid", Field("1", text.index("{1}") + 1)),
        ("pmcid", Field("PMC2", text.index("PMC2"))),
        ("isbn", Field("978", text.index("978"))),
    )


@pytest.mark.parametrize(
    ("kinds", "scheme"),
    [
        ("eprinttype={PubMed}, archiveprefix={PMC}", "pmid"),
        ("archiveprefix={pmc}", "pmcid"),
        ("archiveprefix={arXiv}", "arxiv"),
        ("eprinttype={hal}", "arxiv"),
        ("", "arxiv"),
    ],
)
def test_an_eprint_is_read_in_the_scheme_its_type_names(kinds: str, scheme: str) -> None:
    (record,) = bib("@misc{k, " + kinds + (", " if kinds else "") + "eprint={1}}")
    assert [s for s, _ in record.identifier_fields] == [scheme]


def test_an_identifier_field_is_located_after_its_own_key_whatever_its_case() -> None:
    text = "@misc{k, title={10.5/x}, DOI = {10.5/x}}"
    (record,) = bib(text)
    assert record.identifier_fields == (("doi", Field("10.5/x", 32)),)
    text = "@misc{k, note={10.5/x}, doi={10.5/x}}"
    (record,) = bib(text)
    assert [f.offset for _, f in record.identifier_fields] == [15, 29]


def test_a_second_entry_is_located_after_the_first_even_when_both_are_written_alike() -> None:
    text = "@misc{a, doi={10.5/x}}\n@misc{a2, doi={10.5/x}}\r\n@misc{b,\r\n doi={10.5/x}}"
    records = bib(text)
    assert [(r.label, r.start, r.end) for r in records] == [
        ("a", 0, 22),
        ("a2", 23, 46),
        ("b", 48, len(text)),
    ]
    assert [r.identifier_fields[0][1].offset for r in records] == [14, 38, 64]


def test_a_block_that_does_not_parse_names_its_line_and_bibtexparsers_reason() -> None:
    text = "@misc{j, title={U}}\n\n@misc{k, title={T}\n\n@misc{j2, title={U}}"
    assert refused(bib, text) == (
        "a.bib: line 3: a block that does not parse (Unexpected block start: `@misc`. Was still"
        " looking for field-value closing `,` or `}`): @misc{k, title={T}"
    )


def test_a_field_written_twice_is_an_error_naming_the_entry() -> None:
    assert refused(bib, "\n@misc{k, title={T}, title={U}}") == (
        "a.bib: line 2: an entry with the same field twice: @misc{k, title={T}, title={U}}"
    )


def test_a_long_first_line_of_a_bad_block_is_cut_at_60_characters() -> None:
    text = "@misc{k, title={" + "x" * 80 + "}, title={y}}"
    assert refused(bib, text) == "a.bib: line 1: an entry with the same field twice: " + text[:60]


def test_bibtex_without_its_parser_is_one_error_naming_what_is_missing(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setitem(sys.modules, "pylatexenc.latex2text", None)
    assert refused(bib, "@misc{k}") == (
        "a.bib: reading BibTeX needs bibtexparser and pylatexenc: import of"
        " pylatexenc.latex2text halted; None in sys.modules"
    )


# --- RIS -------------------------------------------------------------------------------------

RIS = (
    "TY  - JOUR\r\nID  - r1\r\nTI  - A  title\r\nAU  - Smith, J\r\nAU  - Doe, K\r\n"
    "PY  - 2019///\r\nJO  - J One\r\nT2  - Two\r\nDO  - 10.5/x\r\nAN  - 123\r\nDB  - MEDLINE\r\n"
    "SN  - 0-306-40615-2\r\nUR  - http://u\r\nC8  - c8\r\nN2  - abstract\r\nER  - \r\n"
)


def test_a_ris_record_gives_every_field_and_identifier_with_its_offset() -> None:
    assert ris(RIS) == (
        Record(
            label="r1",
            start=0,
            end=len(RIS) - 2,
            title="A title",
            authors=("Smith, J", "Doe, K"),
            year=2019,
            venue="J One",
            identifier_fields=(
                ("doi", Field("10.5/x", RIS.index("10.5/x"))),
                ("pmid", Field("123", RIS.index("123"))),
                ("isbn", Field("0-306-40615-2", RIS.index("0-306"))),
                ("any", Field("http://u", RIS.index("http://u"))),
                ("any", Field("c8", RIS.index("c8"))),
            ),
        ),
    )


def test_ris_falls_back_to_the_other_title_author_year_and_venue_tags() -> None:
    text = (
        "TY  - JOUR\nT1  - Prim\nA1  - First, A\nY1  - 2001\nJ2  - Alt3\nPB  - P\nAN  - 5\n"
        "DP  - PubMed Central\nL1  - l1\nKW  - \nER  - \n\n"
        "TY  - BOOK\nDA  - 1999/01\nJA  - Abbr\nJF  - Full\nPB  - Pub\nM1  - m\nER  - \n"
    )
    second = text.index("TY  - BOOK")
    assert ris(text) == (
        Record(
            label=None,
            start=0,
            end=second - 2,
            title="Prim",
            authors=("First, A",),
            year=2001,
            venue="Alt3",
            identifier_fields=(
                ("pmid", Field("5", text.index("5\n"))),
                ("any", Field("l1", text.index("l1"))),
            ),
        ),
        Record(
            label=None,
            start=second,
            end=len(text) - 1,
            year=1999,
            venue="Full",
            identifier_fields=(("any", Field("m", text.index("M1  - m") + 6)),),
        ),
    )


@pytest.mark.parametrize(
    ("tags", "venue"),
    [
        ("JO  - J\nT2  - S\nJF  - F\nJ2  - A\nPB  - P\n", "J"),
        ("T2  - S\nJF  - F\nJ2  - A\nPB  - P\n", "S"),
        ("JF  - F\nJ2  - A\nPB  - P\n", "F"),
        ("J2  - A\nPB  - P\n", "A"),
        ("JA  - Abbr\nPB  - P\n", "P"),
        ("PB  - P  Q\n", "P Q"),
        ("N1  - n\n", None),
    ],
)
def test_the_ris_venue_is_the_first_tag_present_in_order(tags: str, venue: str) -> None:
    (record,) = ris("TY  - JOUR\n" + tags + "ER  - \n")
    assert record.venue == venue


@pytest.mark.parametrize(
    ("database", "scheme"),
    [("DB  - PubMed\n", "pmid"), ("DP  - ovid MEDLINE(R)\n", "pmid"), ("DB  - Scopus\n", "any")],
)
def test_a_ris_accession_number_is_a_pmid_only_from_pubmed(database: str, scheme: str) -> None:
    (record,) = ris("TY  - JOUR\nAN  - 42\n" + database + "ER  - \n")
    assert record.identifier_fields == (((scheme, Field("42", 17))),)


@pytest.mark.parametrize(
    ("number", "isbn"),
    [("0-306-40615-X", True), ("978-0-306-40615-7", True), ("1234-5678", False), ("1", False)],
)
def test_a_ris_sn_is_an_isbn_when_it_has_10_or_13_digits(number: str, isbn: bool) -> None:
    (record,) = ris("TY  - BOOK\nSN  - " + number + "\nER  - \n")
    assert record.identifier_fields == ((("isbn", Field(number, 17)),) if isbn else ())


@pytest.mark.parametrize("tag", ["UR", "L1", "L2", "LK", "N1", "M1", "C1", "C5", "C8"])
def test_every_scanned_ris_tag_is_read_for_any_identifier(tag: str) -> None:
    (record,) = ris("TY  - JOUR\n" + tag + "  - 10.5/x\nC9  - 10.5/y\nER  - \n")
    assert record.identifier_fields == (("any", Field("10.5/x", 17)),)


def test_a_ris_tag_without_a_value_has_no_offset_and_continuation_lines_join() -> None:
    text = "TY  - JOUR\nUR  -\nTI  - x\n  continued\nER  - \n"
    (record,) = ris(text)
    assert (record.title, record.end, record.identifier_fields) == (
        "x continued",
        len(text) - 1,
        (("any", Field("", -1)),),
    )


def test_blank_lines_around_ris_records_are_no_record() -> None:
    assert ris("\n\n") == ()
    assert [r.start for r in ris("\n  \nTY  - JOUR\nER  - \n\n")] == [4]


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("TY  - JOUR\nER  - \nER  - \n", "a.ris: line 3: ER outside a record (expected TY)"),
        ("TY  - JOUR\nER  - \n\nTY  - JOUR\n", "a.ris: line 4: the record has no ER line"),
        (
            "TY  - JOUR\nER  - \nnotes " + "x" * 50 + "\n",
            "a.ris: line 3: expected a RIS tag line like 'TY  - JOUR', got 'notes "
            + "x" * 34
            + "'",
        ),
    ],
)
def test_broken_ris_names_the_line(text: str, message: str) -> None:
    assert refused(ris, text) == message


@pytest.mark.parametrize(
    ("text", "message"),
    [
        (  # rispy carries the last tag into the next record and fails on the continuation
            "TY  - JOUR\nTI  - a\nER  - \nTY  - JOUR\ncontinued\nER  - \n",
            "a.ris: the RIS does not parse: 'title'",
        ),
        (  # rispy ends a record at 'ER  -x' and starts one at 'TYx': the grammar reads neither
            "TY  - JOUR\nER  -x\nTYx\nER  - \n",
            "a.ris: rispy read 2 records where the file has 1",
        ),
    ],
)
def test_ris_that_rispy_reads_otherwise_than_the_grammar_is_an_error(
    text: str, message: str
) -> None:
    assert refused(ris, text) == message


def test_ris_without_its_parser_is_one_error_naming_it(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setitem(sys.modules, "rispy", None)
    assert refused(ris, "TY  - JOUR\nER  - \n") == (
        "a.ris: reading RIS needs rispy: import of rispy halted; None in sys.modules"
    )


# --- CSL-JSON --------------------------------------------------------------------------------


def test_a_csl_item_gives_every_field_and_identifier() -> None:
    text = (
        ' [ {"id": "a", "title": ["T1", "T2"], "author": [{"family": "Smith", "given": "J"},'
        ' {"literal": "The  Org"}, {}, {"given": "Solo"}], "issued": {"date-parts": [["2019", 5]]},'
        ' "container-title": "C  T", "DOI": "10.5/x", "URL": "http://u", "note": "n",'
        ' "number": 5, "PMID": "1", "PMCID": "PMC1", "ISBN": "978", "ISSN": "9"} ,\n'
        ' {"id": 7, "issued": {"raw": "May 2018"}, "title": []} ] \n'
    )
    first_end = text.index("} ,") + 1
    assert csl(text) == (
        Record(
            label="a",
            start=3,
            end=first_end,
            title="T1",
            authors=("Smith, J", "The Org", "Solo"),
            year=2019,
            venue="C T",
            identifier_fields=(
                ("doi", Field("10.5/x", text.index("10.5/x"))),
                ("any", Field("http://u", text.index("http://u"))),
                ("any", Field("n", text.index('"n"') + 1)),
                ("any", Field("5", text.index("5, "))),
                ("pmid", Field("1", text.index('"1"') + 1)),
                ("pmcid", Field("PMC1", text.index("PMC1"))),
                ("isbn", Field("978", text.index("978"))),
            ),
        ),
        Record(label="7", start=text.index('{"id": 7'), end=len(text) - 4, year=2018),
    )


@pytest.mark.parametrize(
    ("issued", "year"),
    [
        ('{"literal": "c. 1850"}', 1850),
        ('{"date-parts": [[]]}', None),
        ('{"date-parts": []}', None),
        ('{"date-parts": [2001]}', None),
        ('"2019"', None),
        ('{"date-parts": [[2001, 3]]}', 2001),
        ('{"date-parts": [["x"]], "raw": "1999"}', 1999),
        ('{"raw": "", "literal": "1777"}', 1777),
    ],
)
def test_a_csl_year_comes_from_date_parts_then_raw_then_literal(issued: str, year: int) -> None:
    (record,) = csl('[{"issued": ' + issued + "}]")
    assert record.year == year


def test_an_empty_csl_identifier_is_no_identifier_and_json_escapes_are_located() -> None:
    text = '[{"DOI": ""}, {"DOI": "10.5/\\u00e9"}]'
    assert [r.identifier_fields for r in csl(text)] == [
        (),
        (("doi", Field("10.5/é", text.index("10.5/"))),),
    ]


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("[]", None),
        ("\n [ ] \n", None),
        ("  ", "a.json: line 1 column 3: Expecting value"),
        ("[1", "a.json: line 1 column 3: Expecting ',' or ']'"),
        ('[{"title": ["a", 1]}]', "a.json: item 1: title is not a string"),
        ('[{}, {"id": 1.5}]', "a.json: item 2: id is not a string"),
        ('[{"author": [{"family": "A"}, "B"]}]', "a.json: item 1: author is not a list of objects"),
        ("[{}]\n\n  ]", "a.json: line 3 column 3: Extra data"),
    ],
)
def test_csl_json_is_an_array_of_objects_or_one_error(text: str, message: str | None) -> None:
    if message is None:
        assert csl(text) == ()
    else:
        assert refused(csl, text) == message


# --- what mutation testing found unchecked ----------------------------------------------------


def test_a_bibtex_entry_without_people_or_year_has_none() -> None:
    assert bib("@misc{k, title={T}}") == (Record(label="k", start=0, end=19, title="T"),)


def test_a_bibtex_value_from_a_string_macro_has_no_offset_in_its_entry() -> None:
    text = "@string{u = {https://x/y}}\n@misc{a, url = u}\n@misc{b, url = {https://x/y}}\n"
    first, second = bib(text)
    assert first.identifier_fields == (("any", Field("https://x/y", -1)),)
    assert second.identifier_fields == (("any", Field("https://x/y", text.rindex("https"))),)


def test_latex_decoding_keeps_pylatexenc_quiet_even_when_its_logger_is_verbose(
    caplog: pytest.LogCaptureFixture,
) -> None:
    caplog.set_level("DEBUG", logger="pylatexenc")
    (record,) = bib("@misc{k, title={A~b \\textbf}}")  # a macro missing its argument
    assert record.title == "A b"
    assert [r.name for r in caplog.records if r.name.startswith("pylatexenc")] == []


def test_only_json_whitespace_is_skipped_between_csl_items() -> None:
    assert refused(csl, "[X]") == "a.json: line 1 column 2: Expecting value"
    assert refused(csl, "[{}X, {}]") == "a.json: line 1 column 4: Expecting ',' or ']'"


def test_a_csl_identifier_whose_key_or_value_is_escaped_stays_in_its_own_item() -> None:
    text = '[{"\\u0044OI": "10.5/x"}, {"DOI": "10.5/y"}]'
    assert [r.identifier_fields for r in csl(text)] == [
        (("doi", Field("10.5/x", text.index("10.5/x"))),),
        (("doi", Field("10.5/y", text.index("10.5/y"))),),
    ]
    text = '[{"DOI": "10.5\\/x"}, {"DOI": "10.5/x"}]'
    assert [r.identifier_fields for r in csl(text)] == [
        (("doi", Field("10.5/x", -1)),),
        (("doi", Field("10.5/x", text.rindex("10.5/x"))),),
    ]


def test_csl_json_without_spaces_and_with_text_after_the_array() -> None:
    assert [r.label for r in csl('[{"id":"a"},{"id":"b"}]')] == ["a", "b"]
    assert refused(csl, "[{}]X") == "a.json: line 1 column 5: Extra data"
    assert refused(csl, "[]X") == "a.json: line 1 column 3: Extra data"


def test_bibtexparser_stays_quiet_even_when_its_logger_is_verbose(
    caplog: pytest.LogCaptureFixture,
) -> None:
    caplog.set_level("DEBUG", logger="bibtexparser")
    with pytest.raises(DocumentError):
        bib("@misc{k, title={never closed\n")
    assert [r.name for r in caplog.records if r.name.startswith("bibtexparser")] == []


def test_one_character_of_prose_before_an_entry_makes_it_prose() -> None:
    text = "x@misc{k, title={T}}\n\ny@misc{j, title={U}}\n@misc{i, title={V}}"
    assert [(r.label, r.start) for r in bib(text)] == [("i", text.index("@misc{i"))]


def test_blocks_written_alike_are_each_located_in_their_turn() -> None:
    text = "@comment{x} @comment{x} @misc{k, title={T}}"
    assert [(r.label, r.start) for r in bib(text)] == [("k", 24)]
    text = "@comment{x} @misc{k, title={T}} @comment{x}"
    assert [(r.label, r.start, r.end) for r in bib(text)] == [("k", 12, 31)]
