"""audit.references.identifiers: every written form of every scheme, and round trips."""

from __future__ import annotations

import re
from urllib.parse import quote

import pytest
from hypothesis import given
from hypothesis import strategies as st

from audit.references import identifiers
from audit.references.identifiers import (
    Found,
    find_identifiers,
    identifiers_in_field,
    isbn_check_digit,
    normalise_doi,
)

FORMS = [
    # (text, scheme, value, raw, version)
    ("see doi:10.5555/ABC.1.", "doi", "10.5555/abc.1", "doi:10.5555/ABC.1", None),
    ("DOI: 10.5555/x1", "doi", "10.5555/x1", "DOI: 10.5555/x1", None),
    ("DOI 10.5555/x2;", "doi", "10.5555/x2", "DOI 10.5555/x2", None),
    ("https://doi.org/10.5555/X3).", "doi", "10.5555/x3", "https://doi.org/10.5555/X3", None),
    ("http://dx.doi.org/10.5555/x4,", "doi", "10.5555/x4", "http://dx.doi.org/10.5555/x4", None),
    ("doi.org/10.5555/x5", "doi", "10.5555/x5", "doi.org/10.5555/x5", None),
    ("https://doi.org/10.5555%2Fx6", "doi", "10.5555/x6", "https://doi.org/10.5555%2Fx6", None),
    (
        "https://doi.org/10.5555/a%3Cb%3E",
        "doi",
        "10.5555/a<b>",
        "https://doi.org/10.5555/a%3Cb%3E",
        None,
    ),
    (
        "(10.5555/S0140-6736(99)00001-1)",
        "doi",
        "10.5555/s0140-6736(99)00001-1",
        "10.5555/S0140-6736(99)00001-1",
        None,
    ),
    ("<https://doi.org/10.5555/x7>", "doi", "10.5555/x7", "https://doi.org/10.5555/x7", None),
    ("**doi:10.5555/x8**", "doi", "10.5555/x8", "doi:10.5555/x8", None),
    (
        "https://journal.example/doi/full/10.5555/x9/abstract?s=1#f",
        "doi",
        "10.5555/x9",
        "https://journal.example/doi/full/10.5555/x9",
        None,
    ),
    (
        "https://link.example/article/10.5555/x10/pdf",
        "doi",
        "10.5555/x10",
        "https://link.example/article/10.5555/x10",
        None,
    ),
    (
        "10.48550/arXiv.2099.01234v2",
        "doi",
        "10.48550/arxiv.2099.01234",
        "10.48550/arXiv.2099.01234v2",
        "v2",
    ),
    (
        "https://www.biorxiv.org/content/10.1101/2099.01.01.999999v3",
        "doi",
        "10.1101/2099.01.01.999999",
        "https://www.biorxiv.org/content/10.1101/2099.01.01.999999v3",
        "v3",
    ),
    ("PMID: 99000001.", "pmid", "99000001", "PMID: 99000001", None),
    ("PMID99000002", "pmid", "99000002", "PMID99000002", None),
    ("pmid 099000003", "pmid", "99000003", "pmid 099000003", None),
    (
        "https://pubmed.ncbi.nlm.nih.gov/99000004/",
        "pmid",
        "99000004",
        "https://pubmed.ncbi.nlm.nih.gov/99000004",
        None,
    ),
    (
        "https://www.ncbi.nlm.nih.gov/pubmed/99000005",
        "pmid",
        "99000005",
        "https://www.ncbi.nlm.nih.gov/pubmed/99000005",
        None,
    ),
    (
        "https://europepmc.org/abstract/MED/99000006",
        "pmid",
        "99000006",
        "https://europepmc.org/abstract/MED/99000006",
        None,
    ),
    ("PMC9900001", "pmcid", "PMC9900001", "PMC9900001", None),
    ("PMCID: pmc09900002", "pmcid", "PMC9900002", "PMCID: pmc09900002", None),
    (
        "https://www.ncbi.nlm.nih.gov/pmc/articles/PMC9900003/",
        "pmcid",
        "PMC9900003",
        "https://www.ncbi.nlm.nih.gov/pmc/articles/PMC9900003",
        None,
    ),
    (
        "https://pmc.ncbi.nlm.nih.gov/articles/PMC9900004/",
        "pmcid",
        "PMC9900004",
        "https://pmc.ncbi.nlm.nih.gov/articles/PMC9900004",
        None,
    ),
    (
        "https://europepmc.org/article/PMC/PMC9900005",
        "pmcid",
        "PMC9900005",
        "https://europepmc.org/article/PMC/PMC9900005",
        None,
    ),
    ("arXiv:2099.01234", "arxiv", "2099.01234", "arXiv:2099.01234", None),
    ("arXiv preprint arXiv 2099.01235", "arxiv", "2099.01235", "arXiv 2099.01235", None),
    ("arxiv: 2099.0123v4.", "arxiv", "2099.0123", "arxiv: 2099.0123v4", "v4"),
    (
        "https://arxiv.org/abs/2099.54321v1",
        "arxiv",
        "2099.54321",
        "https://arxiv.org/abs/2099.54321v1",
        "v1",
    ),
    (
        "https://arxiv.org/pdf/2099.54321.pdf",
        "arxiv",
        "2099.54321",
        "https://arxiv.org/pdf/2099.54321.pdf",
        None,
    ),
    ("hep-th/9901001", "arxiv", "hep-th/9901001", "hep-th/9901001", None),
    ("arXiv:MATH.ag/9901002v2", "arxiv", "math.AG/9901002", "arXiv:MATH.ag/9901002v2", "v2"),
    (
        "https://arxiv.org/abs/cond-mat/9901003",
        "arxiv",
        "cond-mat/9901003",
        "https://arxiv.org/abs/cond-mat/9901003",
        None,
    ),
    ("NCT99000001", "nct", "NCT99000001", "NCT99000001", None),
    ("nct99000002)", "nct", "NCT99000002", "nct99000002", None),
    ("ISBN 978-9-99999-000-4", "isbn", "9789999990004", "ISBN 978-9-99999-000-4", None),
    ("ISBN-13: 979 9 99999 001 0", "isbn", "9799999990010", "ISBN-13: 979 9 99999 001 0", None),
    ("ISBN-10: 9-99999-001-0 (2099)", "isbn", "9789999990011", "ISBN-10: 9-99999-001-0", None),
    ("isbn 9999990029", "isbn", "9789999990028", "isbn 9999990029", None),
]


@pytest.mark.parametrize(("text", "scheme", "value", "raw", "version"), FORMS)
def test_each_written_form_normalises_and_keeps_its_raw_text(
    text: str, scheme: str, value: str, raw: str, version: str | None
) -> None:
    found = [f for f in find_identifiers(text) if f.scheme == scheme]
    assert len(found) == 1
    item = found[0]
    assert (item.value, item.raw, item.version, item.valid) == (value, raw, version, True)
    assert text[item.start : item.end] == raw


def test_arxiv_datacite_doi_also_yields_its_arxiv_id_with_the_same_span() -> None:
    found = find_identifiers("x 10.48550/arXiv.2099.01234v2 y")
    assert [(f.scheme, f.value, f.start, f.end, f.version) for f in found] == [
        ("doi", "10.48550/arxiv.2099.01234", 2, 29, "v2"),
        ("arxiv", "2099.01234", 2, 29, "v2"),
    ]


def test_an_nct_inside_a_doi_is_part_of_the_doi_only() -> None:
    assert [f.scheme for f in find_identifiers("doi:10.5555/NCT99000001")] == ["doi"]


def test_a_prefix_never_takes_its_number_from_the_next_line() -> None:
    assert find_identifiers("PMID:\n2. doi:\n10 ISBN\n9999990029 arXiv:\n2099.01234") == []


def test_bare_numbers_and_new_style_arxiv_ids_without_prefix_are_not_identifiers() -> None:
    assert find_identifiers("99000001 2099.01234 9789999990004 PMC") == []


@pytest.mark.parametrize(
    ("text", "problem"),
    [
        ("ISBN 978-9-99999-000-3", "ISBN check digit is 3, expected 4"),
        ("ISBN 9-99999-001-X", "ISBN check digit is X, expected 0"),
        ("ISBN 12345", "an ISBN has 10 or 13 digits, got '12345'"),
        ("NCT9900001", "an NCT number has 8 digits, got 7"),
        ("NCT990000011", "an NCT number has 8 digits, got 9"),
        ("PMID: 123456789", "a PMID has 1 to 8 digits, got 9"),
    ],
)
def test_an_identifier_failing_its_own_check_is_reported_not_dropped(
    text: str, problem: str
) -> None:
    (item,) = find_identifiers(text)
    assert (item.valid, item.problem, item.raw) == (False, problem, text)


def test_isbn_check_digits_follow_the_isbn_10_and_isbn_13_rules() -> None:
    assert isbn_check_digit("999999001") == "0"
    assert isbn_check_digit("080442957") == "X"
    assert isbn_check_digit("978999999000") == "4"
    with pytest.raises(ValueError, match=r"^an ISBN body has 9 or 12 digits, got 3$"):
        isbn_check_digit("123")


@pytest.mark.parametrize(
    ("scheme", "value", "expected"),
    [
        ("pmid", " 99000001 ", ("pmid", "99000001", "99000001", 1, 9)),
        ("pmcid", "9900001", ("pmcid", "PMC9900001", "9900001", 0, 7)),
        ("arxiv", "2099.01234v2", ("arxiv", "2099.01234", "2099.01234v2", 0, 12)),
        ("isbn", "9-99999-001-0", ("isbn", "9789999990011", "9-99999-001-0", 0, 13)),
        (
            "doi",
            "https://doi.org/10.5555/F1",
            ("doi", "10.5555/f1", "https://doi.org/10.5555/F1", 0, 26),
        ),
        ("nct", "NCT99000001", ("nct", "NCT99000001", "NCT99000001", 0, 11)),
    ],
)
def test_a_structured_field_reads_the_bare_form_of_its_scheme(
    scheme: str, value: str, expected: tuple[str, str, str, int, int]
) -> None:
    (item,) = identifiers_in_field(scheme, value)  # type: ignore[arg-type]
    assert (item.scheme, item.value, item.raw, item.start, item.end) == expected
    assert value[item.start : item.end] == item.raw


def test_a_structured_field_holding_no_identifier_is_one_invalid_identifier() -> None:
    assert identifiers_in_field("doi", "see the journal") == [
        Found(
            "doi",
            "see the journal",
            "see the journal",
            0,
            15,
            None,
            False,
            "the doi field holds no DOI: got 'see the journal'",
        ),
    ]
    assert identifiers_in_field("pmid", "  ") == []


# --- round trips ---------------------------------------------------------------------------

_SUFFIX = st.from_regex(r"[A-Za-z0-9][A-Za-z0-9._-]{0,20}[A-Za-z0-9]", fullmatch=True)
_REGISTRANT = st.from_regex(r"5[0-9]{3,8}(\.[0-9]{1,3})?", fullmatch=True)


@given(
    registrant=_REGISTRANT,
    suffix=_SUFFIX,
    form=st.sampled_from(
        [
            "doi:{}",
            "DOI {}",
            "https://doi.org/{}",
            "http://dx.doi.org/{}",
            "{}",
            "https://publisher.example/doi/full/{}",
            "https://publisher.example/doi/{}/abstract",
        ]
    ),
    encode=st.booleans(),
    upper=st.booleans(),
    tail=st.sampled_from(["", ".", ",", ";", ")", "].", '"', "'"]),
)
def test_doi_round_trip(
    registrant: str, suffix: str, form: str, encode: bool, upper: bool, tail: str
) -> None:
    doi = f"10.{registrant}/{suffix}"
    written = f"10.{registrant}{'%2F' if encode else '/'}{suffix}"
    written = written.upper() if upper else written
    text = f"cited as {form.format(written)}{tail} here"
    (item,) = find_identifiers(text)
    assert item.value == normalise_doi(doi) == doi.lower()
    assert text[item.start : item.end] == item.raw
    assert normalise_doi(quote(doi, safe="")) == doi.lower()


@given(
    number=st.integers(min_value=1, max_value=99_999_999),
    form=st.sampled_from(
        [
            "PMID: {}",
            "PMID {}",
            "https://pubmed.ncbi.nlm.nih.gov/{}/",
            "https://europepmc.org/article/MED/{}",
        ]
    ),
)
def test_pmid_round_trip(number: int, form: str) -> None:
    (item,) = find_identifiers(f"({form.format(number)})")
    assert (item.scheme, item.value) == ("pmid", str(number))


@given(
    number=st.integers(min_value=1, max_value=99_999_999),
    form=st.sampled_from(["PMC{}", "PMCID: PMC{}", "https://pmc.ncbi.nlm.nih.gov/articles/PMC{}/"]),
)
def test_pmcid_round_trip(number: int, form: str) -> None:
    (item,) = find_identifiers(form.format(number))
    assert (item.scheme, item.value) == ("pmcid", f"PMC{number}")


@given(
    identifier=st.one_of(
        st.from_regex(r"2099\.[0-9]{4,5}", fullmatch=True),
        st.from_regex(r"(hep-th|astro-ph|math\.AG|q-bio\.NC)/99[0-9]{5}", fullmatch=True),
    ),
    version=st.one_of(st.none(), st.integers(min_value=1, max_value=30)),
    form=st.sampled_from(["arXiv:{}", "https://arxiv.org/abs/{}", "https://arxiv.org/pdf/{}"]),
)
def test_arxiv_round_trip(identifier: str, version: int | None, form: str) -> None:
    written = identifier + (f"v{version}" if version else "")
    (item,) = find_identifiers(form.format(written) + ".")
    assert (item.value, item.version) == (identifier, f"v{version}" if version else None)


@given(body=st.from_regex(r"97[89][0-9]{9}", fullmatch=True), sep=st.sampled_from(["", "-", " "]))
def test_isbn13_round_trip(body: str, sep: str) -> None:
    isbn = body + isbn_check_digit(body)
    written = sep.join([isbn[:3], isbn[3], isbn[4:9], isbn[9:12], isbn[12]])
    (item,) = find_identifiers(f"ISBN {written}, 2099")
    assert (item.value, item.valid) == (isbn, True)


@given(body=st.from_regex(r"[0-9]{9}", fullmatch=True))
def test_isbn10_round_trip_normalises_to_isbn13(body: str) -> None:
    (item,) = find_identifiers(f"ISBN-10: {body}{isbn_check_digit(body)}")
    isbn13 = "978" + body
    assert (item.value, item.valid) == (isbn13 + isbn_check_digit(isbn13), True)


@given(body=st.from_regex(r"[0-9]{9}", fullmatch=True), wrong=st.integers(1, 10))
def test_isbn10_with_a_wrong_check_digit_is_invalid(body: str, wrong: int) -> None:
    right = isbn_check_digit(body)
    digits = "0123456789X"
    bad = digits[(digits.index(right) + wrong) % 11]
    (item,) = find_identifiers(f"ISBN {body}{bad}")
    assert (item.valid, item.problem) == (False, f"ISBN check digit is {bad}, expected {right}")


@given(st.text())
def test_finding_never_raises_and_every_raw_is_the_text_at_its_span(text: str) -> None:
    for item in find_identifiers(text):
        assert text[item.start : item.end] == item.raw
        assert item.valid == (item.problem is None)


@given(st.text(alphabet="10.5/doiDOI:PMChttps NCTarXivISBN-X ()[]%2F\n", max_size=80))
def test_finding_never_raises_on_identifier_shaped_noise(text: str) -> None:
    for item in find_identifiers(text):
        assert text[item.start : item.end] == item.raw


_FINDERS = ["_DOI", "_PMID", "_PMCID", "_ARXIV", "_NCT", "_ISBN"]
_GUARD = re.compile(r"\(\?=\[(?P<first>[^\]]+)\]\)\(\?:(?P<pattern>.*)\)", re.DOTALL)
_PIECES = [
    *("doi:", "DOI ", "doi.org/", "dx.", "www.", "https://", "http://x.example/doi/", "%2F"),
    *("10.", "10.5555/", "10.48550/arXiv.", "1101/", "v2", "PMID:", "pmid ", "PMC", "PMCID: "),
    *("pubmed.ncbi.nlm.nih.gov/", "europepmc.org/article/MED/", "arXiv:", "ArXiv ", "hep-th/"),
    *("Q-BIO/", "math.GT/", "arxiv.org/abs/", "2099.01234", "9901001", "NCT", "ISBN-13: ", "978"),
    *("0", "12345678", "-", "X", " ", "\n", "/", ".", ":", '"', "<", ")", "(", "a", "é", "_"),
]


@pytest.mark.parametrize("name", _FINDERS)
@given(pieces=st.lists(st.sampled_from(_PIECES), max_size=24))
def test_each_finder_matches_what_its_pattern_without_the_first_character_guard_matches(
    name: str, pieces: list[str]
) -> None:
    guarded = getattr(identifiers, name)
    parts = _GUARD.fullmatch(guarded.pattern)
    assert parts is not None
    plain = re.compile(parts.group("pattern"), guarded.flags)
    text = "".join(pieces)
    found = [(m.span(), m.groupdict()) for m in guarded.finditer(text)]
    assert found == [(m.span(), m.groupdict()) for m in plain.finditer(text)]
    assert all(text[start].lower() in parts.group("first") for (start, _), _ in found)
