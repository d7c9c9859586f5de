"""audit.references.resolve, rule by rule: what a record carries, how each key and title is
answered (matched, unmatched with why, unreachable with the error), and how the online resolvers
and the chain combine answers.

The snapshots here are in-memory DuckDB databases with the snapshot schema (no file, no seal):
the resolver takes any connection, and a test can write the odd row a harvest never would.
"""

from __future__ import annotations

import json
from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import Any

import duckdb
import pytest

from audit.errors import CorpusError
from audit.references.resolve import (
    RESOLVABLE,
    Asked,
    ChainResolver,
    Key,
    Lookup,
    LookupResolver,
    SnapshotResolver,
    TitleIndex,
    WorkRecord,
)
from pipeline.snapshot.schema import MIGRATIONS


def work(record_id: str, **fields: Any) -> WorkRecord:
    values: dict[str, Any] = {
        "source": "pubmed",
        "title": None,
        "authors": (),
        "year": None,
        "venue": None,
        "doi": None,
        "pmid": None,
        "pmcid": None,
        "publication_types": (),
        "content_type": None,
        "retracted": None,
        "expression_of_concern": None,
        "preprint": None,
        "withdrawn": False,
    }
    values.update(fields)
    return WorkRecord(record_id=record_id, **values)


ROW_COLUMNS = (
    "record_id, version, source, content_hash, title, doi, pmid, pmcid, year, journal, authors,"
    " publication_types, content_type, retracted, expression_of_concern, preprint"
)
INSERT_ROW = (
    "INSERT INTO records (record_id, version, source, content_hash, title, doi, pmid, pmcid,"
    " year, journal, authors, publication_types, content_type, retracted,"
    " expression_of_concern, preprint) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)"
)


def snapshot(
    rows: Sequence[dict[str, Any]],
    relations: Sequence[tuple[str, str, str]] = (),
    current: dict[str, str] | None = None,
    withdrawn: frozenset[str] = frozenset(),
) -> duckdb.DuckDBPyConnection:
    """An in-memory snapshot of ``rows`` (version '1' current unless ``current`` says)."""
    con = duckdb.connect(":memory:")
    for migration in MIGRATIONS:
        con.execute(migration.sql)
    for row in rows:
        values = [row.get(c.strip()) for c in ROW_COLUMNS.split(",")]
        values[1] = values[1] or "1"
        values[2] = values[2] or "pubmed"
        values[3] = "h"
        con.execute(INSERT_ROW, values)
    for record_id in sorted({row["record_id"] for row in rows}):
        version = (current or {}).get(record_id, "1")
        con.execute(
            "INSERT INTO record_state VALUES (?, 'pubmed', ?, ?, NULL)",
            [record_id, version, record_id in withdrawn],
        )
    for record_id, kind, target in relations:
        con.execute(
            "INSERT INTO relations VALUES (?, ?, ?, 'pubmed', NULL, NULL, NULL)",
            [record_id, kind, target],
        )
    return con


def odd_snapshot() -> duckdb.DuckDBPyConnection:
    """Records a harvest would rarely write: two current versions' worth of history, two records
    of one DOI, malformed JSON lists, withdrawn records, several preprint relations."""
    rows = [
        {
            "record_id": "pmid:2",
            "title": "Second work on vitamins",
            "doi": "10.5555/Shared",
            "pmid": "2",
            "year": 2001,
            "journal": "J Two",
            "authors": json.dumps(["A B", 3]),
            "publication_types": json.dumps(["Journal Article", "Review"]),
            "content_type": "article",
            "retracted": True,
            "expression_of_concern": False,
            "preprint": False,
        },
        {"record_id": "pmid:1", "version": "old", "title": "Old title of the first work"},
        {
            "record_id": "pmid:1",
            "version": "new",
            "title": "First work on vitamins",
            "doi": "10.5555/shared",
            "pmcid": "pmc11",
            "authors": "not json",
            "publication_types": json.dumps({"a": 1}),
        },
        {"record_id": "ppr:P1", "title": "A preprint", "authors": "", "preprint": True},
        {"record_id": "nct:NCT01", "title": None},
    ]
    relations = [
        ("ppr:P1", "preprint_of", "pmid:2"),
        ("ppr:P1", "preprint_of", "pmid:1"),
        ("ppr:P1", "cites", "pmid:0"),
        ("pmid:2", "retracted_by", "pmid:9"),
    ]
    return snapshot(rows, relations, current={"pmid:1": "new"}, withdrawn=frozenset({"pmid:2"}))


@pytest.fixture
def odd() -> Iterator[SnapshotResolver]:
    resolver = SnapshotResolver(odd_snapshot(), "odd")
    yield resolver
    resolver.close()


# --- WorkRecord.value ------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("scheme", "value"),
    [("doi", "10.5555/abc"), ("pmid", "123"), ("pmcid", "PMC9"), ("arxiv", None), ("nct", None)],
)
def test_a_record_gives_each_identifier_normalised_like_the_reader(
    scheme: str, value: str | None
) -> None:
    record = work("pmid:123", doi="10.5555/ABC", pmid="123", pmcid="pmc9")
    assert record.value(scheme) == value


def test_a_record_without_identifiers_gives_none_and_a_trial_its_nct_number() -> None:
    bare = work("pmid:1")
    assert [bare.value(s) for s in ("doi", "pmid", "pmcid", "nct")] == [None, None, None, None]
    assert work("nct:NCT0001").value("nct") == "NCT0001"
    assert work("nct:NCT0001").value("doi") is None


# --- SnapshotResolver: records --------------------------------------------------------------


def test_each_current_record_carries_every_column_read_as_its_type(
    odd: SnapshotResolver,
) -> None:
    key = ("doi", "10.5555/shared")
    assert odd.by_identifiers([key])[key] == Lookup(
        "snapshot",
        "doi:10.5555/shared",
        "matched",
        (
            work(
                "pmid:1",
                title="First work on vitamins",
                doi="10.5555/shared",
                pmcid="pmc11",
            ),
            work(
                "pmid:2",
                title="Second work on vitamins",
                authors=("A B", "3"),
                year=2001,
                venue="J Two",
                doi="10.5555/Shared",
                pmid="2",
                publication_types=("Journal Article", "Review"),
                content_type="article",
                retracted=True,
                expression_of_concern=False,
                preprint=False,
                withdrawn=True,
            ),
        ),
    )


def test_a_preprint_names_its_first_published_version_and_no_other_relation(
    odd: SnapshotResolver,
) -> None:
    keys: list[Key] = [("pmcid", "PMC11"), ("nct", "P1"), ("pmid", "2")]
    answers = odd.by_identifiers(keys)
    assert [r.record_id for r in answers[("pmcid", "PMC11")].records] == ["pmid:1"]
    assert answers[("nct", "P1")].status == "unmatched"
    assert answers[("pmid", "2")].records[0].published_version is None
    (preprint,) = odd.by_title("A preprint").records
    assert (preprint.record_id, preprint.preprint, preprint.published_version) == (
        "ppr:P1",
        True,
        "pmid:1",
    )


def test_keys_of_schemes_the_resolver_does_not_hold_are_not_queried() -> None:
    narrow = SnapshotResolver(odd_snapshot(), "odd", frozenset({"pmid"}))
    keys: list[Key] = [("doi", "10.5555/shared"), ("pmid", "2"), ("pmid", "2")]
    answers = narrow.by_identifiers(keys)
    assert answers[("doi", "10.5555/shared")] == Lookup(
        "snapshot", "doi:10.5555/shared", "unmatched", detail="the snapshot holds no doi records"
    )
    assert [r.record_id for r in answers[("pmid", "2")].records] == ["pmid:2"]
    assert (narrow.label, narrow.schemes) == ("odd", frozenset({"pmid"}))


def test_only_unknown_schemes_make_no_query_and_a_closed_snapshot_is_unreachable() -> None:
    con = snapshot([])
    closed = SnapshotResolver(con, "closed")
    con.close()
    assert closed.by_identifiers([("arxiv", "1")]) == {
        ("arxiv", "1"): Lookup(
            "snapshot", "arxiv:1", "unmatched", detail="the snapshot holds no arxiv records"
        )
    }
    assert closed.by_identifiers([("pmid", "1"), ("isbn", "1")]) == {
        ("pmid", "1"): Lookup(
            "snapshot",
            "pmid:1",
            "unreachable",
            detail="snapshot lookup failed: Connection Error: Connection already closed!",
        ),
        ("isbn", "1"): Lookup(
            "snapshot", "isbn:1", "unmatched", detail="the snapshot holds no isbn records"
        ),
    }
    assert closed.by_title("A preprint") == Lookup(
        "snapshot",
        "title:A preprint",
        "unreachable",
        detail="snapshot title search failed: Connection Error: Connection already closed!",
    )


def test_the_title_index_is_built_on_the_first_search_and_handed_on(
    odd: SnapshotResolver,
) -> None:
    before = odd.title_index
    assert before is None
    assert odd.by_title("Nothing like any of them") == Lookup(
        "snapshot", "title:Nothing like any of them", "unmatched"
    )
    index = odd.title_index
    assert index is not None
    assert sorted(r.record_id for r in index.records) == ["pmid:1", "pmid:2", "ppr:P1"]
    con = snapshot([])
    con.close()  # every query would fail: only the index can answer
    reused = SnapshotResolver(con, "again", titles=index)
    assert reused.title_index is index
    found = reused.by_title("First work on vitamins")
    assert (found.status, [r.record_id for r in found.records]) == ("matched", ["pmid:1"])


# --- TitleIndex ------------------------------------------------------------------------------


def test_titles_of_a_length_that_could_still_score_90_are_compared() -> None:
    # a query of 22 folded characters is compared with titles of ceil(22 * 9 / 11) = 18 to
    # floor(22 * 11 / 9) = 26 characters: the shortest and the longest both score over 90
    query = "abcdefghij klmnopqrstu"  # 22 characters
    shorter = "abcdefghij klmnopq"  # 18: ratio 90.0
    longer = "abcdefghij klmnopqrstuvwxy"  # 26: ratio 91.7
    index = TitleIndex([work("pmid:1", title=shorter), work("pmid:2", title=longer)])
    assert sorted(r.record_id for r in index.same_title(query)) == ["pmid:1", "pmid:2"]


def test_a_title_index_of_untitled_records_finds_nothing() -> None:
    index = TitleIndex([work("pmid:1"), work("pmid:2", title="")])
    assert index.same_title("Anything at all") == ()
    assert TitleIndex([]).same_title("Anything at all") == ()


# --- Asked, LookupResolver ------------------------------------------------------------------


class Fixed:
    """A snapshot resolver stand-in answering every key and title with one lookup."""

    label = "fixed"

    def __init__(self, status: str, records: tuple[WorkRecord, ...] = (), detail: str = "") -> None:
        self.status, self.records, self.detail = status, records, detail or None
        self.closed = False

    def by_identifiers(self, keys: Sequence[Key]) -> dict[Key, Lookup]:
        return {
            k: Lookup("snapshot", f"{k[0]}:{k[1]}", self.status, self.records, self.detail)  # type: ignore[arg-type]
            for k in keys
        }

    def by_title(self, title: str) -> Lookup:
        return Lookup("snapshot", f"title:{title}", self.status, self.records, self.detail)  # type: ignore[arg-type]

    def close(self) -> None:
        self.closed = True


ASKED = Asked(
    keys={("doi", "10.1/a"): ("crossref", "pubmed", "openalex"), ("doi", "10.1/b"): ("crossref",)},
    titles={"Asked title": ("openalex", "pubmed"), "Fine title": ("crossref",)},
    failed={"openalex": "openalex: works: HTTP 503", "pubmed": "pubmed: efetch: HTTP 500"},
)


def lookup_of(inner: Fixed) -> LookupResolver:
    return LookupResolver(inner, ASKED)  # type: ignore[arg-type]


def test_the_first_failed_source_asked_names_the_outage() -> None:
    key = ("doi", "10.1/a")
    assert lookup_of(Fixed("unmatched")).by_identifiers([key])[key] == Lookup(
        "lookup", "doi:10.1/a", "unreachable", detail="pubmed: efetch: HTTP 500"
    )
    assert lookup_of(Fixed("unmatched")).by_title("Asked title") == Lookup(
        "lookup", "title:Asked title", "unreachable", detail="openalex: works: HTTP 503"
    )


def test_a_lookup_keeps_what_its_snapshot_found_and_names_itself() -> None:
    found = work("pmid:1", title="Fine title")
    resolver = lookup_of(Fixed("matched", (found,)))
    assert resolver.label == "fixed"
    key = ("doi", "10.1/zzz")
    assert resolver.by_identifiers([key])[key] == Lookup(
        "lookup", "doi:10.1/zzz", "matched", (found,)
    )
    assert resolver.by_title("Fine title") == Lookup(
        "lookup", "title:Fine title", "matched", (found,)
    )
    down = lookup_of(Fixed("unreachable", detail="snapshot lookup failed: x"))
    assert down.by_identifiers([key])[key] == Lookup(
        "lookup", "doi:10.1/zzz", "unreachable", detail="snapshot lookup failed: x"
    )
    assert down.by_title("Fine title") == Lookup(
        "lookup", "title:Fine title", "unreachable", detail="snapshot lookup failed: x"
    )
    inner = Fixed("unmatched")
    lookup_of(inner).close()
    assert inner.closed


def test_a_title_searched_online_and_not_found_is_absent_with_the_near_records_kept() -> None:
    near = work("pmid:1", title="Some other title entirely")
    resolver = lookup_of(Fixed("matched", (near,)))
    assert resolver.by_title("Fine title") == Lookup(
        "lookup",
        "title:Fine title",
        "unmatched",
        (near,),
        "no work of this title at crossref (searched online)",
        absent=True,
    )
    assert resolver.by_title("Never searched") == Lookup(
        "lookup", "title:Never searched", "unmatched", detail="title not searched online"
    )
    key = ("doi", "10.1/b")
    assert lookup_of(Fixed("unmatched")).by_identifiers([key])[key] == Lookup(
        "lookup",
        "doi:10.1/b",
        "unmatched",
        detail="no such record at crossref (asked online)",
        absent=True,
    )


# --- ChainResolver --------------------------------------------------------------------------


class Counted(Fixed):
    def __init__(self, name: str, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.name, self.titles = name, 0

    def by_identifiers(self, keys: Sequence[Key]) -> dict[Key, Lookup]:
        found = super().by_identifiers(keys)
        return {key: _renamed(lookup, self.name) for key, lookup in found.items()}

    def by_title(self, title: str) -> Lookup:
        self.titles += 1
        return _renamed(super().by_title(title), self.name)


def _renamed(lookup: Lookup, name: str) -> Lookup:
    return Lookup(name, lookup.key, lookup.status, lookup.records, lookup.detail, lookup.absent)


def test_the_chain_stops_at_the_first_resolver_that_finds_the_title() -> None:
    same = work("pmid:1", title="Fine title")
    first, second = Counted("a", "matched", (same,)), Counted("b", "matched", (same,))
    chain = ChainResolver([first, second])  # type: ignore[list-item]
    assert chain.by_title("Fine title").resolver == "a"
    assert (first.titles, second.titles) == (1, 0)


def test_a_matched_title_search_that_holds_only_other_titles_does_not_place_it() -> None:
    other = work("pmid:1", title="Some other title entirely")
    same = work("pmid:2", title="Fine title")
    first, second = Counted("a", "matched", (other,)), Counted("b", "matched", (same,))
    assert ChainResolver([first, second]).by_title("Fine title").resolver == "b"  # type: ignore[list-item]
    assert (first.titles, second.titles) == (1, 1)
    lone = Counted("a", "matched", (other,))
    last = Counted("b", "unmatched")
    assert ChainResolver([lone, last]).by_title("Fine title").resolver == "b"  # type: ignore[list-item]


def test_the_chain_prefers_an_outage_to_an_earlier_or_later_unmatched_answer() -> None:
    key = ("doi", "10.1/zzz")
    down = Counted("down", "unreachable", detail="x")
    for order in ([Counted("a", "unmatched"), down], [down, Counted("a", "unmatched")]):
        chain = ChainResolver(order)  # type: ignore[arg-type]
        assert chain.by_identifiers([key])[key].resolver == "down"
        assert chain.by_title("Fine title").resolver == "down"
    unmatched = ChainResolver([Counted("a", "unmatched"), Counted("b", "unmatched")])  # type: ignore[list-item]
    assert unmatched.by_identifiers([key])[key].resolver == "b"


def test_the_chain_keeps_an_earlier_match_over_later_answers() -> None:
    key = ("doi", "10.1/zzz")
    found = work("pmid:1", title="Fine title")
    chain = ChainResolver(
        [Counted("a", "matched", (found,)), Counted("b", "unmatched")]  # type: ignore[list-item]
    )
    assert chain.by_identifiers([key])[key] == Lookup("a", "doi:10.1/zzz", "matched", (found,))
    assert chain.by_title("Fine title") == Lookup("a", "title:Fine title", "matched", (found,))


def test_a_title_found_after_an_outage_is_placed_and_unmatched_near_titles_are_not() -> None:
    same = work("pmid:1", title="Fine title")
    after_outage = ChainResolver(
        [Counted("down", "unreachable", detail="x"), Counted("b", "matched", (same,))]  # type: ignore[list-item]
    )
    assert after_outage.by_title("Fine title") == Lookup(
        "b", "title:Fine title", "matched", (same,)
    )
    unmatched = ChainResolver(
        [Counted("a", "unmatched", (same,)), Counted("b", "unmatched")]  # type: ignore[list-item]
    )
    assert unmatched.by_title("Fine title").resolver == "b"


def test_the_last_of_several_unmatched_answers_is_kept() -> None:
    key = ("doi", "10.1/zzz")
    chain = ChainResolver([Counted(n, "unmatched") for n in "abc"])  # type: ignore[misc]
    assert chain.by_identifiers([key])[key].resolver == "c"
    assert chain.by_title("Fine title").resolver == "c"


def test_a_key_or_title_never_asked_online_is_plainly_unmatched() -> None:
    key = ("doi", "10.1/never")
    assert lookup_of(Fixed("unmatched")).by_identifiers([key])[key] == Lookup(
        "lookup", "doi:10.1/never", "unmatched", detail="not asked online"
    )


def test_a_title_absent_from_several_sources_names_each() -> None:
    asked = Asked(keys={}, titles={"Two places": ("crossref", "europepmc")}, failed={})
    resolver = LookupResolver(Fixed("unmatched"), asked)  # type: ignore[arg-type]
    assert resolver.by_title("Two places") == Lookup(
        "lookup",
        "title:Two places",
        "unmatched",
        detail="no work of this title at crossref, europepmc (searched online)",
        absent=True,
    )


class Failing:
    """A connection whose every query fails with the DuckDB error given."""

    def __init__(self, error: duckdb.Error) -> None:
        self.error = error

    def execute(self, sql: str, params: object) -> object:
        raise self.error


@pytest.mark.parametrize(
    ("error", "detail"),
    [(duckdb.IOException(""), "IOException"), (duckdb.Error("first\nsecond"), "first")],
)
def test_a_failed_query_is_named_by_its_first_line_or_its_kind(
    error: duckdb.Error, detail: str
) -> None:
    resolver = SnapshotResolver(Failing(error), "failing")  # type: ignore[arg-type]
    key = ("pmid", "1")
    assert resolver.by_identifiers([key])[key].detail == f"snapshot lookup failed: {detail}"
    assert resolver.by_title("x").detail == f"snapshot title search failed: {detail}"


def test_a_resolver_opened_on_a_file_is_named_by_it_unless_given_a_label(tmp_path: Path) -> None:
    path = tmp_path / "works-2.duckdb"
    duckdb.connect(str(path)).close()
    for label, named in ((None, "works-2"), ("", "works-2"), ("given", "given")):
        opened = SnapshotResolver.open(path, label)
        try:
            assert (opened.label, opened.schemes) == (named, frozenset(RESOLVABLE))
        finally:
            opened.close()
    narrow = SnapshotResolver.open(path, schemes=frozenset({"doi"}))
    try:
        assert narrow.schemes == frozenset({"doi"})
    finally:
        narrow.close()


def test_a_file_that_will_not_open_is_named_with_duckdbs_own_reason(tmp_path: Path) -> None:
    missing = tmp_path / "gone" / "x.duckdb"
    with pytest.raises(CorpusError) as caught:
        SnapshotResolver.open(missing)
    assert caught.value.message == (
        f'cannot open snapshot x.duckdb: IO Error: Cannot open database "{missing}" in read-only'
        " mode: database does not exist"
    )


class Typed:
    """A connection answering every key with one row of the wrong types (a snapshot written
    by another tool), and no relations."""

    ROW: tuple[object, ...] = (
        "pmid",
        "7",
        1,
        2,
        3,
        4,
        "2020",
        5,
        6,
        7,
        8,
        9,
        10,
        "yes",
        1,
        0,
        "no",
    )

    def execute(self, sql: str, params: object) -> Typed:
        self.rows: list[tuple[object, ...]] = [self.ROW] if "UNION" in sql else []
        return self

    def fetchall(self) -> list[tuple[object, ...]]:
        return self.rows


def test_a_column_of_the_wrong_type_reads_as_missing() -> None:
    resolver = SnapshotResolver(Typed(), "typed")  # type: ignore[arg-type]
    key = ("pmid", "7")
    (record,) = resolver.by_identifiers([key])[key].records
    assert record == work("1", source="2", withdrawn=True)
