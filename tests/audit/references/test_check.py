"""audit.references.check: one test per tier rule, the flags and the trace."""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from audit.references import extract_bytes
from audit.references.check import (
    DocumentCheck,
    FieldDiff,
    ReferenceCheck,
    TraceStep,
    check_document,
)
from audit.references.resolve import Key, Lookup, SnapshotResolver
from tests.audit.fixture_scope import per_module
from tests.audit.references.works import write_works

DATA = Path(__file__).resolve().parent / "data"


@pytest.fixture(scope=per_module)
def works(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return write_works(tmp_path_factory.mktemp("works") / "works.duckdb")


@pytest.fixture(scope=per_module)
def fixture_checks(works: Path) -> Iterator[DocumentCheck]:
    resolver = SnapshotResolver.open(works)
    try:
        yield check_document(extract_bytes((DATA / "check.md").read_bytes(), "check.md"), resolver)
    finally:
        resolver.close()


def entry(document: DocumentCheck, label: str) -> ReferenceCheck:
    return next(c for c in document.references if c.label == label)


def one(works: Path, text: str, name: str = "one.md") -> ReferenceCheck:
    resolver = SnapshotResolver.open(works)
    try:
        checks = check_document(extract_bytes(text.encode(), name), resolver).references
    finally:
        resolver.close()
    assert len(checks) == 1
    return checks[0]


def test_the_fixture_has_every_tier(fixture_checks: DocumentCheck) -> None:
    assert fixture_checks.counts == {
        "verified": 6,
        "mismatch": 3,
        "hallucinated": 2,
        "needs_review": 2,
        "unresolved": 2,
    }


def test_a_doi_of_the_work_described_is_verified(fixture_checks: DocumentCheck) -> None:
    check = entry(fixture_checks, "1")
    assert (check.tier, check.record, check.diffs) == ("verified", "pmid:99100001", ())
    assert check.reason == "doi:10.5555/ref.0001 is pmid:99100001"
    assert check.trace == (
        TraceStep(
            resolver="snapshot",
            key="doi:10.5555/ref.0001",
            outcome="matched",
            records=("pmid:99100001",),
        ),
    )


def test_running_text_identifiers_are_verified_by_lookup_alone(
    fixture_checks: DocumentCheck,
) -> None:
    running = [c for c in fixture_checks.references if c.kind == "running_text"]
    assert [(c.identifiers, c.tier, c.record) for c in running] == [
        (("nct:NCT99100001",), "verified", "nct:NCT99100001"),
        (("pmcid:PMC99100001",), "verified", "pmid:99100001"),
    ]


def test_flags_are_tri_state_from_the_record(fixture_checks: DocumentCheck) -> None:
    retracted = entry(fixture_checks, "2").flags
    assert (retracted.retracted, retracted.expression_of_concern, retracted.preprint) == (
        True,
        False,
        False,
    )
    preprint = entry(fixture_checks, "3").flags
    assert (preprint.preprint, preprint.published_version) == (True, "pmid:99100003")
    unknown = entry(fixture_checks, "9").flags  # no record found: unknown, not False
    assert (unknown.retracted, unknown.expression_of_concern, unknown.preprint) == (None,) * 3


def test_a_shifted_year_is_a_mismatch_naming_seen_and_expected(
    fixture_checks: DocumentCheck,
) -> None:
    check = entry(fixture_checks, "4")
    assert check.tier == "mismatch"
    assert check.diffs == (FieldDiff(field="year", seen="2018", expected="2022"),)
    assert check.flags.expression_of_concern is True


def test_swapped_authors_are_a_mismatch(fixture_checks: DocumentCheck) -> None:
    check = entry(fixture_checks, "5")
    assert check.tier == "mismatch"
    assert check.diffs == (
        FieldDiff(field="authors", seen="Roe R; Doe J", expected="Doe J; Roe R"),
    )


def test_a_real_title_with_another_works_doi_is_a_mismatch_on_the_doi(
    fixture_checks: DocumentCheck,
) -> None:
    check = entry(fixture_checks, "6")
    assert (check.tier, check.record) == ("mismatch", "pmid:99100001")
    assert check.diffs == (
        FieldDiff(field="doi", seen="10.5555/ref.0002", expected="10.5555/ref.0001"),
    )
    assert [(s.key, s.outcome) for s in check.trace] == [
        ("doi:10.5555/ref.0002", "matched"),
        ("title:A synthetic cohort of vitamin X in adults: ten-year outcomes", "matched"),
    ]


def test_a_doi_of_a_different_work_with_no_title_match_is_hallucinated(
    fixture_checks: DocumentCheck,
) -> None:
    check = entry(fixture_checks, "7")
    assert check.tier == "hallucinated"
    assert check.reason == "doi:10.5555/ref.0003 is pmid:99100003, a different work"
    assert check.record is None
    assert [d.field for d in check.diffs] == ["title", "authors", "year", "venue"]
    assert check.trace[-1] == TraceStep(
        resolver="snapshot",
        key="title:Quantum effects of vitamin W on bone density",
        outcome="unmatched",
        detail="no title in the snapshot matches",
    )


def test_an_impossible_identifier_is_hallucinated(fixture_checks: DocumentCheck) -> None:
    check = entry(fixture_checks, "8")
    assert check.tier == "hallucinated"
    assert check.reason == "NCT9910001 is not a valid nct: an NCT number has 8 digits, got 7"


def test_an_identifier_absent_offline_is_unresolved_never_hallucinated(
    fixture_checks: DocumentCheck,
) -> None:
    check = entry(fixture_checks, "9")
    assert check.tier == "unresolved"
    assert check.reason == (
        "pmid:99199999: not in this snapshot (offline: not evidence of fabrication)"
    )


def test_an_arxiv_id_is_unresolved_with_the_reason(fixture_checks: DocumentCheck) -> None:
    check = entry(fixture_checks, "10")
    assert (check.tier, check.reason) == (
        "unresolved",
        "arxiv:2099.01234: the snapshot holds no arxiv records (offline: not evidence of "
        "fabrication)",
    )


def test_books_and_unmatched_entries_without_identifier_need_review(
    fixture_checks: DocumentCheck,
) -> None:
    book, guideline = entry(fixture_checks, "11"), entry(fixture_checks, "12")
    assert (book.tier, book.reason) == (
        "needs_review",
        "a book (ISBN): the snapshot does not index books",
    )
    assert (guideline.tier, guideline.reason) == (
        "needs_review",
        "no identifier, and no title in the snapshot matches",
    )


def test_an_entry_without_identifier_is_verified_by_a_confident_title_match(
    fixture_checks: DocumentCheck,
) -> None:
    check = entry(fixture_checks, "13")
    assert (check.tier, check.record, check.reason) == (
        "verified",
        "pmid:99100001",
        "the title is pmid:99100001",
    )


def test_an_entry_without_identifier_and_a_wrong_year_is_a_mismatch(works: Path) -> None:
    check = one(
        works,
        "# References\n\n1. Doe J, Roe R. Vitamin Y and sleep quality in older adults: a "
        "randomised trial. Synth Rev Geriatr. 2015.\n",
    )
    assert (check.tier, check.record) == ("mismatch", "pmid:99100002")
    assert check.diffs == (FieldDiff(field="year", seen="2015", expected="2021"),)


def test_a_bibtex_record_is_checked_like_an_entry(works: Path) -> None:
    bib = (
        '@article{berg2020, author = {van der Berg, Karin and M{\\"u}ller, Jan}, title = {A '
        "synthetic cohort of vitamin {X} in adults: ten-year outcomes}, journal = {J. Synth. "
        "Med.}, year = {2020}, doi = {10.5555/REF.0001}}\n"
    )
    check = one(works, bib, "refs.bib")
    assert (check.label, check.tier, check.record) == ("berg2020", "verified", "pmid:99100001")


def test_an_impossible_identifier_beside_one_that_verifies_the_work_is_a_mismatch(
    works: Path,
) -> None:
    bib = (
        "@article{roe, author = {Doe, J. and Roe, R.}, title = {Vitamin Y and sleep quality in "
        "older adults: a randomised trial}, year = {2021}, doi = {10.5555/ref.0002}, "
        "isbn = {978-9-99999-001-4}}\n"
    )
    check = one(works, bib, "typo.bib")
    assert (check.tier, check.record) == ("mismatch", "pmid:99100002")
    assert check.diffs == (FieldDiff(field="isbn", seen="978-9-99999-001-4", expected=None),)
    assert check.trace[0] == TraceStep(
        resolver="grammar",
        key="isbn:9789999990014",
        outcome="unmatched",
        detail="ISBN check digit is 4, expected 1",
    )


def test_an_impossible_identifier_on_a_title_the_snapshot_holds_is_a_mismatch(
    works: Path,
) -> None:
    check = one(
        works,
        "# References\n\n1. Ng L, Okafor C. Vitamin Z protects against liver injury in mice. "
        "J Synth Med. 2022. NCT9910001\n",
    )
    assert (check.tier, check.record) == ("mismatch", "pmid:99100003")
    assert check.reason == "the title is pmid:99100003, but nct:NCT9910001 is not"
    assert check.diffs == (FieldDiff(field="nct", seen="NCT9910001", expected=None),)


class _Down:
    """A resolver whose every lookup is unreachable (an outage)."""

    name = "down"

    def by_identifiers(self, keys: Sequence[Key]) -> dict[Key, Lookup]:
        return {
            k: Lookup(self.name, f"{k[0]}:{k[1]}", "unreachable", detail="connection refused")
            for k in keys
        }

    def by_title(self, title: str) -> Lookup:
        return Lookup(self.name, f"title:{title}", "unreachable", detail="connection refused")


def test_an_outage_is_unresolved_never_hallucinated() -> None:
    document = extract_bytes(
        b"# References\n\n1. Zed Q. Anything at all. J Synth Med. 2020. doi:10.5555/ref.0001\n",
        "down.md",
    )
    check = check_document(document, _Down()).references[0]
    assert (check.tier, check.reason) == ("unresolved", "a lookup failed (see the trace)")
    assert [(s.resolver, s.key, s.outcome, s.detail) for s in check.trace] == [
        ("down", "doi:10.5555/ref.0001", "unreachable", "connection refused"),
        ("down", "title:Anything at all", "unreachable", "connection refused"),
    ]


FRAGMENTS = st.sampled_from(
    [
        "# References\n",
        "1. ",
        "Doe J, Roe R. ",
        "Vitamin Y and sleep quality in older adults. ",
        "doi:10.5555/ref.0002 ",
        "doi:10.5555/ref.0003 ",
        "PMID: 99100001 ",
        "PMC99100001 ",
        "NCT99100001 ",
        "NCT991 ",
        "ISBN 978-9-99999-001-4 ",
        "arXiv:2099.01234v2 ",
        "(2020). ",
        "\n",
        "\n\n",
    ]
)


@settings(
    max_examples=60, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(st.lists(st.one_of(FRAGMENTS, st.text(max_size=12)), max_size=25))
def test_checking_any_document_never_raises_and_counts_every_reference(
    works: Path, parts: list[str]
) -> None:
    document = extract_bytes("".join(parts).encode(), "fuzz.md")
    resolver = SnapshotResolver.open(works)
    try:
        checked = check_document(document, resolver)
    finally:
        resolver.close()
    assert len(checked.references) == len(document.references)
    assert sum(checked.counts.values()) == len(document.references)
