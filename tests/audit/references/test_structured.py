"""audit.references.structured: BibTeX, RIS and CSL-JSON records and their exact errors."""

from __future__ import annotations

import pytest

from audit.errors import DocumentError
from audit.references import extract_bytes

# --- BibTeX --------------------------------------------------------------------------------


def test_a_bibtex_block_that_does_not_parse_names_its_line() -> None:
    data = b"@article{ok, title={Fine}}\n\n@article{bad, title={never closed\n"
    with pytest.raises(DocumentError) as caught:
        extract_bytes(data, "refs.bib")
    assert str(caught.value) == (
        "refs.bib: line 3: a block that does not parse (Unexpectedly reached end of file.):"
        " @article{bad, title={never closed"
    )


def test_a_duplicate_bibtex_key_is_an_error() -> None:
    data = b"@article{k, title={A}}\n@article{k, title={B}}\n"
    with pytest.raises(DocumentError) as caught:
        extract_bytes(data, "dup.bib")
    assert str(caught.value) == (
        "dup.bib: line 2: a second entry with the same key: @article{k, title={B}}"
    )


@pytest.mark.parametrize(
    "data", [b"just some prose\n", b"Write to me at a@b.org, or @ the desk.\n"]
)
def test_a_bib_file_without_entries_is_an_error_not_an_empty_result(data: bytes) -> None:
    with pytest.raises(DocumentError) as caught:
        extract_bytes(data, "notes.bib")
    assert str(caught.value) == "notes.bib: no BibTeX entry found (expected @type{key, …})"


def test_a_bibtex_entry_inside_a_sentence_is_prose_not_an_entry() -> None:
    with pytest.raises(DocumentError) as caught:
        extract_bytes(b"See a@article{k, title={T}} for more.\n", "notes.bib")
    assert str(caught.value) == "notes.bib: no BibTeX entry found (expected @type{key, …})"
    data = b"@article{a, title={A}}\nsee x@misc{b, title={B}}\n  @book{c, title={C}}\n"
    read = extract_bytes(data, "mixed.bib").references
    assert [(r.label, r.span.line, r.span.column) for r in read] == [("a", 1, 1), ("c", 3, 3)]


def test_bibtex_blocks_one_after_another_on_a_line_are_each_read() -> None:
    data = b"@comment{x} @string{jn = {J}} @article{a, title={A}} @book{b, title={B}}\n"
    read = extract_bytes(data, "row.bib").references
    assert [(r.label, r.span.line, r.span.column) for r in read] == [("a", 1, 31), ("b", 1, 54)]


@pytest.mark.parametrize("data", [b"@comment{only a note}\n", b"  @string{jn = {J}}\n"])
def test_a_bib_file_of_blocks_that_are_not_entries_has_no_records(data: bytes) -> None:
    assert extract_bytes(data, "macros.bib").references == ()


def test_bibtex_eprint_of_type_pubmed_is_a_pmid() -> None:
    data = b"@article{k, title={A}, eprint={99000011}, eprinttype={pubmed}}"
    (identifier,) = extract_bytes(data, "e.bib").identifiers
    assert (identifier.scheme, identifier.value, identifier.span.column) == ("pmid", "99000011", 32)


# --- RIS -----------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("data", "message"),
    [
        (
            b"hello\nTY  - JOUR\nER  - \n",
            "r.ris: line 1: expected a RIS tag line like 'TY  - JOUR', got 'hello'",
        ),
        (b"TI  - A\nER  - \n", "r.ris: line 1: TI outside a record (expected TY)"),
        (b"TY  - JOUR\nTI  - A\n", "r.ris: line 1: the record has no ER line"),
        (
            b"TY  - JOUR\nTY  - BOOK\nER  - \n",
            "r.ris: line 2: TY before the ER of the record at line 1",
        ),
    ],
)
def test_broken_ris_is_one_line_naming_the_line(data: bytes, message: str) -> None:
    with pytest.raises(DocumentError) as caught:
        extract_bytes(data, "r.ris")
    assert str(caught.value) == message


def test_only_a_newline_ends_a_ris_line_as_rispy_reads_it() -> None:
    data = "TY  - JOUR\nTI  - x\u2028ER  - \u2028TY  - JOUR\nER  - \n".encode()
    (record,) = extract_bytes(data, "r.ris").references
    assert (record.title, record.span.end_line) == ("x ER - TY - JOUR", 3)
    with pytest.raises(DocumentError) as caught:
        extract_bytes(b"TY  - JOUR\nTI  - A\x0cB\nER  - \n\nTI  - z\n", "r.ris")
    assert str(caught.value) == "r.ris: line 5: TI outside a record (expected TY)"


def test_an_issn_in_ris_sn_is_not_read_as_an_isbn() -> None:
    data = b"TY  - JOUR\nSN  - 1234-5678\nER  - \n"
    document = extract_bytes(data, "r.ris")
    assert len(document.references) == 1
    assert document.identifiers == ()


# --- CSL-JSON ------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("data", "message"),
    [
        (b'[{"id": "a"}, ]', "c.json: line 1 column 15: Expecting value"),
        (b'[{"id": "a"} {"id": "b"}]', "c.json: line 1 column 14: Expecting ',' or ']'"),
        (b'{"id": "a"} x', "c.json: line 1 column 13: Extra data"),
        (b'["a"]', "c.json: item 1 is not a JSON object"),
        (b'[{"title": {"x": 1}}]', "c.json: item 1: title is not a string"),
        (b'[{"author": "Smith"}]', "c.json: item 1: author is not a list of objects"),
    ],
)
def test_broken_csl_json_is_one_line_naming_the_place(data: bytes, message: str) -> None:
    with pytest.raises(DocumentError) as caught:
        extract_bytes(data, "c.json")
    assert str(caught.value) == message


def test_a_single_csl_item_is_read_like_an_array_of_one() -> None:
    document = extract_bytes(b'{"id": "x", "DOI": "10.5555/one"}', "one.json")
    assert [(r.label, r.identifiers[0].value) for r in document.references] == [
        ("x", "10.5555/one")
    ]


def test_a_csl_identifier_is_located_at_its_own_field_not_where_its_text_first_appears() -> None:
    data = b'[{"title": "Trial 12345678", "PMID": "12345678"}]'
    (identifier,) = extract_bytes(data, "c.json").identifiers
    assert (identifier.scheme, identifier.value, identifier.span.column) == ("pmid", "12345678", 39)
