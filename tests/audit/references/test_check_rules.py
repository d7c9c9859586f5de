"""audit.references.check, rule by rule on built references and records (no snapshot): the
tie-breaks, the identifier conflicts, the online "resolves to nothing" rule, ``--fail-on`` and
the text lines."""

from __future__ import annotations

from collections.abc import Sequence

from audit.references import extract_bytes
from audit.references.check import (
    CheckReport,
    DocumentCheck,
    FieldDiff,
    Flags,
    LookupRef,
    ReferenceCheck,
    SnapshotRef,
    check_documents,
    check_reference,
    failing,
    make_report,
    reference_lines,
    render_text,
    tier_counts,
)
from audit.references.model import Identifier, Reference, Span
from audit.references.resolve import Key, Lookup, WorkRecord

SPAN = Span(file="a.md", line=3, column=1, end_line=3, end_column=40)
ID_SPAN = Span(file="a.md", line=3, column=20, end_line=3, end_column=39)
TITLE = "Vitamin Y and sleep quality in older adults"


def record(record_id: str = "pmid:1", **fields: object) -> WorkRecord:
    values: dict[str, object] = {
        "source": "pubmed",
        "title": TITLE,
        "authors": ("Doe J", "Roe R"),
        "year": 2021,
        "venue": "Synthetic Reviews in Geriatrics",
        "doi": "10.5555/a",
        "pmid": "1",
        "pmcid": None,
        "publication_types": (),
        "content_type": None,
        "retracted": False,
        "expression_of_concern": False,
        "preprint": False,
        "withdrawn": False,
    }
    values.update(fields)
    return WorkRecord(record_id=record_id, **values)  # type: ignore[arg-type]


def ident(scheme: str, value: str, **fields: object) -> Identifier:
    return Identifier(scheme=scheme, value=value, raw=value, span=ID_SPAN, **fields)  # type: ignore[arg-type]


def ref(*identifiers: Identifier, **fields: object) -> Reference:
    values: dict[str, object] = {"title": TITLE, "authors": ("Doe J", "Roe R"), "year": 2021}
    values.update(fields)
    return Reference(kind="entry", label="1", identifiers=identifiers, raw="x", span=SPAN, **values)  # type: ignore[arg-type]


def hit(key: str, *records: WorkRecord) -> Lookup:
    return Lookup("snapshot", key, "matched", records)


class Titles:
    """A resolver whose title search answers ``lookup`` (unmatched when not given)."""

    name = "snapshot"

    def __init__(self, *records: WorkRecord, status: str = "matched", absent: bool = False):
        self.records, self.status, self.absent = records, status, absent

    def by_identifiers(self, keys: Sequence[Key]) -> dict[Key, Lookup]:
        return {}

    def by_title(self, title: str) -> Lookup:
        status = self.status if self.records or self.status != "matched" else "unmatched"
        return Lookup(self.name, f"title:{title}", status, self.records, absent=self.absent)  # type: ignore[arg-type]


def test_of_records_equally_close_the_pubmed_one_then_the_lowest_id_is_chosen() -> None:
    doi = ident("doi", "10.5555/a")
    records = (
        record("openalex:W1", source="openalex"),
        record("pmid:9"),
        record("pmid:2"),
    )
    found = {("doi", "10.5555/a"): hit("doi:10.5555/a", *records)}
    check = check_reference(ref(doi), Titles(), found)
    assert (check.tier, check.record, check.reason) == (
        "verified",
        "pmid:2",
        "doi:10.5555/a is pmid:2",
    )
    assert check.location == ID_SPAN
    assert check.trace[0].records == ("openalex:W1", "pmid:9", "pmid:2")


def test_a_same_record_beats_a_differing_one_whatever_the_source() -> None:
    doi = ident("doi", "10.5555/a")
    differing = record("pmid:1", year=2010)
    same = record("openalex:W1", source="openalex")
    found = {("doi", "10.5555/a"): hit("doi:10.5555/a", differing, same)}
    check = check_reference(ref(doi), Titles(), found)
    assert (check.tier, check.record) == ("verified", "openalex:W1")


def test_the_closest_identifier_decides_when_two_resolve() -> None:
    pmid, doi = ident("pmid", "1"), ident("doi", "10.5555/a")
    differing = record("pmid:1", year=2010)
    same = record("pmid:1")
    found = {
        ("pmid", "1"): hit("pmid:1", differing),
        ("doi", "10.5555/a"): hit("doi:10.5555/a", same),
    }
    check = check_reference(ref(pmid, doi), Titles(), found)
    assert (check.tier, check.reason) == ("verified", "doi:10.5555/a is pmid:1")


def test_a_shared_doi_or_pmid_makes_two_records_one_work() -> None:
    pubmed = record("pmid:1")
    by_doi = record("openalex:W1", source="openalex", pmid=None, doi="10.5555/A")
    by_pmid = record("openalex:W2", source="openalex", doi=None)
    for other in (by_doi, by_pmid):
        found = {
            ("pmid", "1"): hit("pmid:1", pubmed),
            ("doi", "10.5555/a"): hit("doi:10.5555/a", other),
        }
        check = check_reference(ref(ident("pmid", "1"), ident("doi", "10.5555/a")), Titles(), found)
        assert (check.tier, check.diffs) == ("verified", ()), other.record_id


def test_a_record_sharing_neither_doi_nor_pmid_is_a_conflict() -> None:
    pubmed = record("pmid:1", doi=None)
    other = record("openalex:W1", source="openalex", doi="10.5555/b", pmid="2")
    found = {
        ("pmid", "1"): hit("pmid:1", pubmed),
        ("doi", "10.5555/a"): hit("doi:10.5555/a", other),
    }
    check = check_reference(ref(ident("pmid", "1"), ident("doi", "10.5555/a")), Titles(), found)
    assert (check.tier, check.record) == ("mismatch", "pmid:1")
    assert check.diffs == (FieldDiff(field="doi", seen="10.5555/a", expected=None),)
    assert check.reason == "pmid:1 disagrees on doi"


def test_an_identifier_not_found_is_no_conflict_unless_the_record_holds_another() -> None:
    found = {("pmid", "1"): hit("pmid:1", record("pmid:1", doi=None))}
    missing = {("doi", "10.5555/zz"): Lookup("snapshot", "doi:10.5555/zz", "unmatched")}
    check = check_reference(
        ref(ident("pmid", "1"), ident("doi", "10.5555/zz")), Titles(), found | missing
    )
    assert (check.tier, check.diffs) == ("verified", ())
    found = {("pmid", "1"): hit("pmid:1", record("pmid:1"))}
    check = check_reference(
        ref(ident("pmid", "1"), ident("doi", "10.5555/zz")), Titles(), found | missing
    )
    assert check.diffs == (FieldDiff(field="doi", seen="10.5555/zz", expected="10.5555/a"),)


def test_another_title_and_another_first_author_is_another_work() -> None:
    doi = ident("doi", "10.5555/a")
    other = record(title="Quantum chromodynamics of heavy mesons at low energy", authors=("Ng L",))
    found = {("doi", "10.5555/a"): hit("doi:10.5555/a", other)}
    check = check_reference(ref(doi), Titles(), found)
    assert (check.tier, check.reason, check.record) == (
        "hallucinated",
        "doi:10.5555/a is pmid:1, a different work",
        None,
    )
    assert [d.field for d in check.diffs] == ["title", "authors"]


def test_another_title_by_the_same_first_author_is_the_same_work_differing() -> None:
    doi = ident("doi", "10.5555/a")
    other = record(title="Quantum chromodynamics of heavy mesons at low energy")
    found = {("doi", "10.5555/a"): hit("doi:10.5555/a", other)}
    check = check_reference(ref(doi), Titles(), found)
    assert (check.tier, check.reason) == ("mismatch", "pmid:1 disagrees on title")


def test_without_a_title_other_authors_and_another_year_are_another_work() -> None:
    doi = ident("doi", "10.5555/a")
    found = {("doi", "10.5555/a"): hit("doi:10.5555/a", record(authors=("Ng L",), year=2010))}
    check = check_reference(ref(doi, title=None), Titles(), found)
    assert check.tier == "hallucinated"
    found = {("doi", "10.5555/a"): hit("doi:10.5555/a", record(authors=("Ng L",), year=2020))}
    check = check_reference(ref(doi, title=None), Titles(), found)
    assert (check.tier, check.reason) == ("mismatch", "pmid:1 disagrees on authors")


def test_a_title_match_holding_none_of_the_identifiers_is_unresolved() -> None:
    nct = ident("nct", "NCT12345678")
    missing = {("nct", "NCT12345678"): Lookup("snapshot", "nct:NCT12345678", "unmatched")}
    check = check_reference(ref(nct), Titles(record(doi=None)), missing)
    assert (check.tier, check.record, check.reason) == (
        "unresolved",
        "pmid:1",
        "the title is pmid:1, which holds none of its identifiers",
    )


def test_a_title_match_disagreeing_names_every_field() -> None:
    doi = ident("doi", "10.5555/zz")
    missing = {("doi", "10.5555/zz"): Lookup("snapshot", "doi:10.5555/zz", "unmatched")}
    check = check_reference(ref(doi, year=2010), Titles(record()), missing)
    assert (check.tier, check.reason) == (
        "mismatch",
        "the title is pmid:1, which disagrees on year, doi",
    )
    assert check.diffs == (
        FieldDiff(field="year", seen="2010", expected="2021"),
        FieldDiff(field="doi", seen="10.5555/zz", expected="10.5555/a"),
    )


def test_a_title_found_only_with_other_authors_is_not_a_match() -> None:
    check = check_reference(ref(), Titles(record(authors=("Ng L",))), {})
    assert (check.tier, check.record) == ("needs_review", None)
    assert check.trace[0].outcome == "unmatched"


def test_a_title_search_that_failed_leaves_a_reference_unresolved() -> None:
    down = Titles(status="unreachable")
    check = check_reference(ref(), down, {})
    assert (check.tier, check.reason) == ("unresolved", "a lookup failed (see the trace)")
    assert [s.outcome for s in check.trace] == ["unreachable"]


def _absent(*keys: Key) -> dict[Key, Lookup]:
    return {k: Lookup("lookup", f"{k[0]}:{k[1]}", "unmatched", absent=True) for k in keys}


def test_every_identifier_absent_online_and_no_title_is_hallucinated() -> None:
    doi, pmid = ident("doi", "10.5555/zz"), ident("pmid", "7")
    found = _absent(("doi", "10.5555/zz"), ("pmid", "7"))
    check = check_reference(ref(doi, pmid, title=None), Titles(), found)
    assert (check.tier, check.reason) == (
        "hallucinated",
        "doi:10.5555/zz, pmid:7 resolves to nothing at registries that answered",
    )
    check = check_reference(ref(doi, pmid), Titles(absent=True, status="unmatched"), found)
    assert check.reason == (
        "doi:10.5555/zz, pmid:7 resolves to nothing at registries that answered; no work of "
        "its title exists either"
    )


def test_nothing_online_is_no_fabrication_with_a_title_not_absent_or_one_id_not_absent() -> None:
    doi, pmid = ident("doi", "10.5555/zz"), ident("pmid", "7")
    found = _absent(("doi", "10.5555/zz"), ("pmid", "7"))
    check = check_reference(ref(doi, pmid), Titles(), found)
    assert check.tier == "unresolved"
    half = found | {("pmid", "7"): Lookup("snapshot", "pmid:7", "unmatched")}
    check = check_reference(ref(doi, pmid, title=None), Titles(), half)
    assert check.tier == "unresolved"
    isbn = ident("isbn", "9789999990011")
    with_isbn = found | _absent(("isbn", "9789999990011"))
    check = check_reference(ref(doi, isbn, title=None), Titles(), with_isbn)
    assert check.tier == "unresolved"


def test_an_entry_without_identifiers_is_never_hallucinated() -> None:
    nothing = Titles(absent=True, status="unmatched")
    assert check_reference(ref(), nothing, {}).tier == "needs_review"
    check = check_reference(ref(title=None), nothing, {})
    assert (check.tier, check.reason, check.trace) == (
        "needs_review",
        "no identifier, and no title in the snapshot matches",
        (),
    )


def test_an_isbn_beside_a_resolvable_identifier_is_no_book() -> None:
    isbn, doi = ident("isbn", "9789999990011"), ident("doi", "10.5555/zz")
    missing = {("doi", "10.5555/zz"): Lookup("snapshot", "doi:10.5555/zz", "unmatched")}
    check = check_reference(ref(isbn, doi, title=None), Titles(), missing)
    assert (check.tier, check.reason) == (
        "unresolved",
        "isbn:9789999990011: not in this snapshot; doi:10.5555/zz: not in this snapshot "
        "(offline: not evidence of fabrication)",
    )


def _checked(tier: str, **flags: object) -> ReferenceCheck:
    return ReferenceCheck(
        label="1",
        kind="entry",
        span=SPAN,
        location=SPAN,
        identifiers=(),
        title=None,
        tier=tier,  # type: ignore[arg-type]
        reason="r",
        flags=Flags(**flags),  # type: ignore[arg-type]
    )


def _report(*checks: ReferenceCheck, lookup: LookupRef | None = None) -> CheckReport:
    document = DocumentCheck(
        file="a.md",
        format="markdown",
        references=checks,
        counts=tier_counts([c.tier for c in checks]),
    )
    snapshot = SnapshotRef(name="works", sha256="0123456789abcdef" * 4, snapshot_id=None)
    return make_report([document], snapshot, "citeseal 1", online=lookup is not None, lookup=lookup)


def test_fail_on_takes_a_tier_or_a_flag_that_is_true() -> None:
    verified = _checked("verified")
    retracted = _checked("verified", retracted=True)
    unknown = _checked("unresolved", retracted=None, preprint=None)
    mismatch = _checked("mismatch", expression_of_concern=True)
    report = _report(verified, retracted, unknown, mismatch)
    assert failing(report, ["retracted"]) == [retracted]
    assert failing(report, ["mismatch"]) == [mismatch]
    assert failing(report, ["expression_of_concern", "unresolved"]) == [unknown, mismatch]
    assert failing(report, ["preprint"]) == []
    assert failing(report, []) == []


def test_the_report_counts_every_tier_and_leaves_out_an_absent_lookup() -> None:
    report = _report(_checked("verified"), _checked("verified"), _checked("needs_review"))
    assert report.counts == {
        "verified": 2,
        "mismatch": 0,
        "hallucinated": 0,
        "needs_review": 1,
        "unresolved": 0,
    }
    assert (report.tool, report.online, report.lookup) == ("citeseal 1", False, None)
    assert "lookup" not in report.model_dump()


def test_a_reference_line_shows_where_label_tier_flags_reason_and_each_diff() -> None:
    check = _checked("mismatch", retracted=True, preprint=True, published_version="pmid:2\n")
    check = check.model_copy(
        update={
            "label": "a\nb",
            "reason": "line\nbreak",
            "diffs": (FieldDiff(field="year", seen="2010", expected=None),),
        }
    )
    assert reference_lines(check, "> ") == [
        "> 3:1 [a b] mismatch [retracted, preprint, published as pmid:2 ]: line break",
        ">     year: seen '2010', expected None",
    ]
    plain = _checked("verified", retracted=False).model_copy(update={"label": None})
    assert reference_lines(plain) == ["  3:1 verified: r"]


def test_the_text_report_names_snapshot_mode_lookup_and_totals() -> None:
    lookup = LookupRef(
        name="lookup.duckdb", sha256="fedcba9876543210" * 4, snapshot_id=None, path="l"
    )
    report = _report(_checked("verified"), _checked("hallucinated"), lookup=lookup)
    assert render_text(report) == (
        "snapshot: works (sha256 0123456789ab), online\n"
        "lookup snapshot: lookup.duckdb (sha256 fedcba987654)\n"
        "a.md (markdown): 1 verified, 1 hallucinated\n"
        "  3:1 [1] verified: r\n"
        "  3:1 [1] hallucinated: r\n"
        "total: 1 verified, 1 hallucinated\n"
    )
    named = lookup.model_copy(update={"snapshot_id": "lk-1"})
    assert "lookup snapshot: lk-1 (sha256 fedcba987654)\n" in render_text(_report(lookup=named))
    assert render_text(_report()) == (
        "snapshot: works (sha256 0123456789ab), offline\n"
        "a.md (markdown): no references\n"
        "total: no references\n"
    )


def test_an_outage_of_one_identifier_leaves_the_reference_unresolved() -> None:
    doi, pmid = ident("doi", "10.5555/zz"), ident("pmid", "7")
    found = {
        ("doi", "10.5555/zz"): Lookup("lookup", "doi:10.5555/zz", "unreachable", detail="HTTP 500"),
        ("pmid", "7"): Lookup("lookup", "pmid:7", "unmatched"),
    }
    check = check_reference(ref(doi, pmid, title=None), Titles(), found)
    assert (check.tier, check.reason) == ("unresolved", "a lookup failed (see the trace)")
    assert [(s.key, s.outcome, s.detail) for s in check.trace] == [
        ("doi:10.5555/zz", "unreachable", "HTTP 500"),
        ("pmid:7", "unmatched", None),
    ]


def test_an_impossible_identifier_before_one_that_resolves_is_a_mismatch() -> None:
    bad = ident("nct", "NCT991", valid=False, problem="an NCT number has 8 digits, got 3")
    doi = ident("doi", "10.5555/a")
    found = {("doi", "10.5555/a"): hit("doi:10.5555/a", record())}
    check = check_reference(ref(bad, doi), Titles(), found)
    assert (check.tier, check.record, check.reason) == (
        "mismatch",
        "pmid:1",
        "pmid:1 disagrees on nct",
    )
    assert check.diffs == (FieldDiff(field="nct", seen="NCT991", expected=None),)
    assert [(s.resolver, s.key, s.outcome) for s in check.trace] == [
        ("grammar", "nct:NCT991", "unmatched"),
        ("snapshot", "doi:10.5555/a", "matched"),
    ]


def test_another_title_by_the_same_authors_differs_as_much_as_another_year() -> None:
    """A record whose title is another work's (same authors) differs; it does not beat a
    record that differs only in its year: of two equally close records the lower id wins."""
    doi = ident("doi", "10.5555/a")
    retitled = record("pmid:2", title="Quantum chromodynamics of heavy mesons at low energy")
    other_year = record("pmid:1", year=2010)
    found = {("doi", "10.5555/a"): hit("doi:10.5555/a", retitled, other_year)}
    check = check_reference(ref(doi), Titles(), found)
    assert (check.tier, check.record, check.reason) == (
        "mismatch",
        "pmid:1",
        "pmid:1 disagrees on year",
    )


def test_a_record_disagreeing_on_two_fields_names_both() -> None:
    doi = ident("doi", "10.5555/a")
    found = {("doi", "10.5555/a"): hit("doi:10.5555/a", record(year=2010, authors=("Doe J",)))}
    check = check_reference(
        ref(doi, authors=("Doe J",), title=TITLE + " revisited"), Titles(), found
    )
    assert check.tier == "mismatch"
    fields = [d.field for d in check.diffs]
    assert len(fields) == 2
    assert check.reason == f"pmid:1 disagrees on {fields[0]}, {fields[1]}"


def test_an_impossible_identifier_is_shown_beside_the_works_own() -> None:
    bad = ident("pmid", "0", valid=False, problem="a PMID is a positive number")
    doi = ident("doi", "10.5555/a")
    found = {("doi", "10.5555/a"): hit("doi:10.5555/a", record())}
    check = check_reference(ref(bad, doi), Titles(), found)
    assert (check.tier, check.reason) == ("mismatch", "pmid:1 disagrees on pmid")
    assert check.diffs == (FieldDiff(field="pmid", seen="0", expected="1"),)


def test_an_impossible_identifier_is_never_looked_up_though_the_batch_holds_its_text() -> None:
    """The batch looked ``doi:10.5555/a`` up for another reference; this reference's DOI of
    the same text failed the grammar, so it is reported impossible, not resolved."""
    bad = ident("doi", "10.5555/a", valid=False, problem="a DOI holds no space")
    found = {("doi", "10.5555/a"): hit("doi:10.5555/a", record())}
    check = check_reference(ref(bad), Titles(), found)
    assert check.tier == "hallucinated"
    assert check.reason == "10.5555/a is not a valid doi: a DOI holds no space"
    looked = [(s.resolver, s.outcome) for s in check.trace if s.key == "doi:10.5555/a"]
    assert looked == [("grammar", "unmatched")]


class Counting(Titles):
    """A resolver that records every identifier batch it is asked for."""

    def __init__(self) -> None:
        super().__init__()
        self.batches: list[list[Key]] = []

    def by_identifiers(self, keys: Sequence[Key]) -> dict[Key, Lookup]:
        self.batches.append(list(keys))
        return {}


def test_documents_without_a_valid_identifier_ask_the_resolver_for_none() -> None:
    """No look-up is made for nothing (an online resolver would send a request)."""
    resolver = Counting()
    plain = extract_bytes(b"Doe J. Vitamin Y and sleep. 2021.\n", "a.md")
    checks = check_documents([plain, plain], resolver)
    assert resolver.batches == []
    assert len(checks) == 2
    mixed = extract_bytes(b"See doi:10.5555/a and PMID 99000001.\n", "b.md")
    check_documents([plain, mixed], resolver)
    assert resolver.batches == [[("doi", "10.5555/a"), ("pmid", "99000001")]]
