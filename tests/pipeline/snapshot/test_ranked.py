"""The fast search path (pipeline.snapshot.ranked) over the works and postings a build stores
(schema 6) gives the pages and counts of the single statement that groups works at search
time, which every snapshot without them (older ones) still takes."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import duckdb
import pytest

from pipeline.snapshot.filters import make_filters
from pipeline.snapshot.search import SearchPage, open_snapshot, search_page
from pipeline.snapshot.store import connect
from pipeline.snapshot.works import WORKS_VERSION, store_postings, stored_works
from tests.conftest import TEST_KEYRING
from tests.pipeline.snapshot.planted_facets import FACET_RECORDS
from tests.pipeline.snapshot.planted_search import (
    QUERY,
    RECORDS,
    WORK_RECORDS,
    WORKS_QUERY,
    write_planted,
)

CASES: list[dict[str, Any]] = [
    {},
    {"retracted": "exclude"},
    {"retracted": "only"},
    {"expression_of_concern": "exclude", "preprint": "exclude"},
    {"preprint": "only"},
    {"sources": ["pubmed", "europepmc"]},
    {"published_from": "2021", "published_to": "2021-06"},
    {"statuses": ["RECRUITING", "COMPLETED"]},
]
FACET_CASES: list[dict[str, Any]] = [  # the filters of tests/pipeline/snapshot/planted_facets.py
    {"designs": ["rct"]},
    {"designs": ["review", "case-report"]},
    {"open_access": "only"},
    {"open_access": "exclude"},
    {"phases": ["PHASE2"], "condition": "asthma"},
    {"has_results": "yes"},
    {"condition": "farrow syndrome"},
    {"intervention": "zbx-1"},
    {"started_from": "2021"},
    {"completed_from": "2023-06", "completed_to": "2023-06"},
    {"drug": "Zorblax"},
]


@pytest.fixture(scope="module")
def pairs(
    tmp_path_factory: pytest.TempPathFactory,
) -> Iterator[dict[str, tuple[duckdb.DuckDBPyConnection, duckdb.DuckDBPyConnection]]]:
    """Per planted set: (stored works, grouped at search time) connections."""
    out = {}
    for name, records in (("filters", RECORDS), ("works", WORK_RECORDS), ("facets", FACET_RECORDS)):
        folder = tmp_path_factory.mktemp(name)
        fast = write_planted(folder / "fast" / f"{name}-1.duckdb", records)
        slow = write_planted(folder / "slow" / f"{name}-1.duckdb", records, works=False)
        out[name] = (open_snapshot(fast), open_snapshot(slow))
    yield out
    for fast_con, slow_con in out.values():
        fast_con.close()
        slow_con.close()


def _both(
    cons: tuple[duckdb.DuckDBPyConnection, duckdb.DuckDBPyConnection],
    query: str,
    limit: int,
    offset: int,
    given: dict[str, Any],
) -> tuple[SearchPage, SearchPage]:
    filters = make_filters(**given)
    return tuple(  # type: ignore[return-value]
        search_page(con, query, TEST_KEYRING, filters, limit=limit, offset=offset) for con in cons
    )


def test_a_snapshot_takes_the_fast_path_only_where_it_stored_its_works(
    pairs: dict[str, tuple[duckdb.DuckDBPyConnection, duckdb.DuckDBPyConnection]],
) -> None:
    fast, slow = pairs["works"]
    assert stored_works(fast) and not stored_works(slow)


@pytest.mark.parametrize("given", CASES)
@pytest.mark.parametrize(("limit", "offset"), [(50, 0), (3, 2)])
def test_the_fast_path_gives_the_pages_and_counts_of_the_grouping_statement(
    pairs: dict[str, tuple[duckdb.DuckDBPyConnection, duckdb.DuckDBPyConnection]],
    given: dict[str, Any],
    limit: int,
    offset: int,
) -> None:
    for name, query in (("filters", QUERY), ("works", WORKS_QUERY)):
        fast, slow = _both(pairs[name], query, limit, offset, given)
        assert fast == slow, (name, given)
        assert fast.total > 0 or given  # the unfiltered planted query always matches


@pytest.mark.parametrize("given", FACET_CASES)
def test_the_fast_path_decides_every_literature_trial_and_label_filter_as_the_statement_does(
    pairs: dict[str, tuple[duckdb.DuckDBPyConnection, duckdb.DuckDBPyConnection]],
    given: dict[str, Any],
) -> None:
    fast, slow = _both(pairs["facets"], QUERY, 50, 0, given)
    assert fast == slow, given
    assert fast.total > 0 or fast.excluded_unknown  # each case keeps or counts something


@pytest.mark.parametrize(
    "given",
    [{"retracted": "exclude"}, {"expression_of_concern": "exclude"}, {"sources": ["crossref"]}],
)
def test_work_flags_and_other_records_agree_on_both_paths(
    pairs: dict[str, tuple[duckdb.DuckDBPyConnection, duckdb.DuckDBPyConnection]],
    given: dict[str, Any],
) -> None:
    fast, slow = _both(pairs["works"], WORKS_QUERY, 50, 0, given)
    assert fast == slow
    assert fast.excluded_by_work == slow.excluded_by_work
    assert [h.also for h in fast.hits] == [h.also for h in slow.hits]


def test_a_query_of_no_held_term_is_an_empty_page_on_both_paths(
    pairs: dict[str, tuple[duckdb.DuckDBPyConnection, duckdb.DuckDBPyConnection]],
) -> None:
    fast, slow = _both(pairs["filters"], "vlorpish qwzx", 10, 0, {"retracted": "exclude"})
    assert (
        fast
        == slow
        == SearchPage(
            hits=[],
            offset=0,
            total=0,
            excluded_unknown={"retracted": 0},
            passages=0,
            excluded_by_work={"retracted": 0},
        )
    )


def test_works_stored_for_another_snapshot_id_are_not_taken_for_this_ones(
    tmp_path: Path,
) -> None:
    """A child that copies its parent's meta (a backfill does) carries the parent's marker:
    it names the parent's id, so the child is grouped at search time until it stores its own."""
    path = write_planted(tmp_path / "planted" / "planted-1.duckdb", WORK_RECORDS)
    con = connect(path)
    try:
        assert con.execute("SELECT value FROM meta WHERE key = 'search_works'").fetchone() == (
            f"{WORKS_VERSION} planted-1",
        )
        con.execute("UPDATE meta SET value = 'planted-2' WHERE key = 'snapshot_id'")
        assert not stored_works(con)
    finally:
        con.close()


def test_stored_works_number_records_in_id_order_and_name_each_work_by_its_smallest_id(
    pairs: dict[str, tuple[duckdb.DuckDBPyConnection, duckdb.DuckDBPyConnection]],
) -> None:
    fast, _ = pairs["works"]
    rows = fast.execute(
        "SELECT record_id, work, record_no, work_no FROM search_works ORDER BY record_no"
    ).fetchall()
    assert [r[0] for r in rows] == sorted(r[0] for r in rows)
    assert [r[2] for r in rows] == list(range(1, len(rows) + 1))
    number = {r[0]: r[2] for r in rows}
    for record_id, work, _, work_no in rows:
        assert number[work] == work_no
        assert work == min(r[0] for r in rows if r[1] == work) <= record_id
    works = {r[0]: r[1] for r in rows}
    assert works["pmid:99200001"] == works["pmcid:PMC99200001"] == "doi:10.5555/quorvex.a"
    assert works["ppr:PPR99200002"] == works["pmid:99200002"] == "pmid:99200002"
    postings = fast.execute("SELECT count(*), count(record_no) FROM search_postings").fetchone()
    held = fast.execute("SELECT count(*) FROM search_terms").fetchone()
    assert postings is not None and held is not None and postings[0] == postings[1] == held[0]


def test_a_snapshot_from_before_schema_6_is_searched_with_the_same_pages(
    tmp_path: Path,
    pairs: dict[str, tuple[duckdb.DuckDBPyConnection, duckdb.DuckDBPyConnection]],
) -> None:
    path = write_planted(tmp_path / "old" / "works-1.duckdb", WORK_RECORDS, works=False)
    con = connect(path)
    try:  # what a snapshot written before migration 6 holds
        con.execute("DROP TABLE search_works")
        con.execute("DROP TABLE search_postings")
    finally:
        con.close()
    old = open_snapshot(path)
    try:
        assert not stored_works(old)
        page = search_page(old, WORKS_QUERY, TEST_KEYRING, limit=4, offset=1)
    finally:
        old.close()
    fast, _ = pairs["works"]
    assert page == search_page(fast, WORKS_QUERY, TEST_KEYRING, limit=4, offset=1)
    assert len(page.hits) == 4


@pytest.mark.parametrize("chunk", [1, 7, 10_000])
def test_postings_written_range_by_range_are_the_whole_index_in_term_order(
    tmp_path: Path, chunk: int
) -> None:
    """However many ranges the postings are sorted in (one a term, a few terms, all at
    once), the table holds every posting once, each with its passage's facts, in term order."""
    path = write_planted(tmp_path / "planted" / "planted-1.duckdb", FACET_RECORDS)
    con = connect(path)
    try:
        con.execute("DELETE FROM search_postings")
        con.execute("SET preserve_insertion_order = false")  # as a build's writer runs
        store_postings(con, chunk=chunk)
        held = con.execute(
            "SELECT term_id, docid FROM search_postings WHERE rowid >= 0"  # storage order
        ).fetchall()
        assert held == sorted(held)
        assert held == sorted(con.execute("SELECT term_id, docid FROM search_terms").fetchall())
        joined = con.execute(
            "SELECT count(*) FROM search_postings p JOIN search_docs d USING (docid) "
            "JOIN search_works w ON w.record_id = d.record_id AND w.version = d.version "
            "JOIN search_terms t ON t.docid = p.docid AND t.term_id = p.term_id "
            "WHERE p.tf = t.tf AND p.length = d.length AND p.record_no = w.record_no "
            "AND p.work_no = w.work_no"
        ).fetchone()
        assert joined == (len(held),)
        terms = con.execute("SELECT count(DISTINCT term_id) FROM search_terms").fetchone()
        assert terms is not None and terms[0] > 7  # chunks of 1 and 7 postings cut it up
    finally:
        con.close()
