"""audit.references.identifiers at the edges of its rules: where a DOI in a URL ends, which
closing brackets a DOI keeps, the PMID and ISBN limits, and the bare forms of structured
fields (exact spans and problems)."""

from __future__ import annotations

import pytest

from audit.references.identifiers import (
    Found,
    find_identifiers,
    identifiers_in_field,
    isbn_check_digit,
)


@pytest.mark.parametrize(
    ("text", "value", "raw"),
    [
        ("doi:10.5555/a?b=1&c#d", "10.5555/a?b=1&c#d", "doi:10.5555/a?b=1&c#d"),
        ("https://doi.org/10.5555/a?x=1", "10.5555/a", "https://doi.org/10.5555/a"),
        ("https://doi.org/10.5555/a&b", "10.5555/a", "https://doi.org/10.5555/a"),
        ("https://doi.org/10.5555/a#b", "10.5555/a", "https://doi.org/10.5555/a"),
    ],
)
def test_a_query_or_fragment_ends_a_doi_only_in_a_url(text: str, value: str, raw: str) -> None:
    (item,) = find_identifiers(text)
    assert (item.scheme, item.value, item.raw, item.start, item.end) == (
        "doi",
        value,
        raw,
        0,
        len(raw),
    )


@pytest.mark.parametrize(
    ("text", "raw"),
    [
        ("(see 10.5555/a(b)c])", "10.5555/a(b)c"),
        ("{10.5555/x}", "10.5555/x"),
        ("[10.5555/y]", "10.5555/y"),
        ("10.5555/a[1]", "10.5555/a[1]"),
        ("10.5555/a{1}.", "10.5555/a{1}"),
    ],
)
def test_a_doi_keeps_only_the_closing_brackets_it_opens(text: str, raw: str) -> None:
    (item,) = find_identifiers(text)
    assert (item.raw, text[item.start : item.end]) == (raw, raw)


def test_a_doi_written_without_a_suffix_is_invalid_and_a_bare_prefix_is_no_doi() -> None:
    problem = "a DOI has a suffix after the '/' of its prefix"
    found = find_identifiers(
        "doi:10.5555/ and https://doi.org/10.5555%2F, and 10.5555/ or 10.5555%2F."
    )
    assert [(f.raw, f.value, f.valid, f.problem) for f in found] == [
        ("doi:10.5555/", "10.5555/", False, problem),
        ("https://doi.org/10.5555%2F", "10.5555/", False, problem),
    ]


def test_a_doi_ending_in_a_slash_is_kept_whole_but_a_landing_page_slash_is_dropped() -> None:
    found = find_identifiers(
        "10.5555/a/ and https://example.org/doi/10.5555/b/full/ or https://example.org/doi/10.5555/c/"
    )
    assert [(f.raw, f.value, f.valid) for f in found] == [
        ("10.5555/a/", "10.5555/a/", True),
        ("https://example.org/doi/10.5555/b", "10.5555/b", True),
        ("https://example.org/doi/10.5555/c", "10.5555/c", True),
    ]


@pytest.mark.parametrize(
    ("text", "value", "problem"),
    [
        ("PMID: 0", "0", "a PMID is a positive number, got 0"),
        ("PMID: 00000000", "0", "a PMID is a positive number, got 0"),
        ("PMID: 12345678", "12345678", None),
        ("PMID: 012345678", "12345678", None),
        ("PMID: 123456789", "123456789", "a PMID has 1 to 8 digits, got 9"),
    ],
)
def test_a_pmid_is_one_to_eight_digits_and_not_zero(
    text: str, value: str, problem: str | None
) -> None:
    (item,) = find_identifiers(text)
    assert (item.value, item.valid, item.problem, item.raw) == (value, not problem, problem, text)


def test_an_nct_of_eight_digits_is_valid_and_upper_cased() -> None:
    (item,) = find_identifiers("nct12345678")
    assert (item.value, item.valid, item.problem, item.raw) == (
        "NCT12345678",
        True,
        None,
        "nct12345678",
    )


def test_identifiers_side_by_side_each_keep_their_span() -> None:
    found = find_identifiers("PMC1 PMID: 2 NCT12345678 doi:10.5555/a")
    assert [(f.scheme, f.start, f.end) for f in found] == [
        ("pmcid", 0, 4),
        ("pmid", 5, 12),
        ("nct", 13, 24),
        ("doi", 25, 38),
    ]


def test_the_check_digit_of_a_zero_remainder_is_zero() -> None:
    assert isbn_check_digit("000000000") == "0"
    assert isbn_check_digit("000000000000") == "0"
    assert isbn_check_digit("999999002") == "9"


@pytest.mark.parametrize(
    ("text", "raw", "value", "problem"),
    [
        ("ISBN 9 99999 001 0 2099", "ISBN 9 99999 001 0", "9789999990011", None),
        ("ISBN 978-9-99999-000-4 5", "ISBN 978-9-99999-000-4", "9789999990004", None),
        (
            "ISBN 9-99999-001-x",
            "ISBN 9-99999-001-x",
            "999999001X",
            "ISBN check digit is X, expected 0",
        ),
        (
            "ISBN 978999999000",
            "ISBN 978999999000",
            "978999999000",
            "an ISBN has 10 or 13 digits, got '978999999000'",
        ),
    ],
)
def test_an_isbn_ends_at_the_group_boundary_of_its_digits(
    text: str, raw: str, value: str, problem: str | None
) -> None:
    (item,) = find_identifiers(text)
    assert (item.raw, item.value, item.valid, item.problem) == (raw, value, not problem, problem)
    assert (item.start, item.end) == (0, len(raw))


def test_a_structured_field_keeps_the_offsets_of_its_bare_form() -> None:
    assert identifiers_in_field("pmcid", " pmc9900001") == [
        Found("pmcid", "PMC9900001", "pmc9900001", 1, 11)
    ]
    assert identifiers_in_field("nct", "  NCT99000001 ") == [
        Found("nct", "NCT99000001", "NCT99000001", 2, 13)
    ]
    assert identifiers_in_field("isbn", "  999999001X") == [
        Found(
            "isbn",
            "999999001X",
            "999999001X",
            2,
            12,
            None,
            False,
            "ISBN check digit is X, expected 0",
        )
    ]


def test_a_field_holding_no_identifier_names_its_scheme_and_at_most_80_characters() -> None:
    (item,) = identifiers_in_field("pmid", "  12a ")
    assert (item.value, item.raw, item.start, item.end, item.valid, item.problem) == (
        "12a",
        "12a",
        2,
        5,
        False,
        "the pmid field holds no PMID: got '12a'",
    )
    (long,) = identifiers_in_field("doi", "x" * 100)
    assert long.problem == f"the doi field holds no DOI: got {'x' * 80!r}"
    assert (long.start, long.end) == (0, 100)
