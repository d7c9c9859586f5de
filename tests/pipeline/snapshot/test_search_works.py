"""One result per work (pipeline.snapshot.works): records of one paper across sources are
grouped at search time, filters decide per record before grouping, pages never repeat a work.

The planted works (synthetic ids), every passage holding the word ``quorvex``:

* A: ``pmid:99200001`` (DOI in mixed case, retracted) — ``pmcid:PMC99200001`` (same PMID, no
  DOI, known not retracted) — ``doi:10.5555/quorvex.a`` (the DOI folded, retraction unknown):
  the Crossref record shares nothing with the Europe PMC one, so only transitivity joins them
* B: ``ppr:PPR99200002`` (a preprint, ``preprint_of`` → ``pmid:99200002``) — ``pmid:99200002``
* C: ``doi:10.5555/quorvex.c`` (``has_preprint`` → ``doi:10.5555/QUORVEX.CPRE``) —
  ``doi:10.5555/quorvex.cpre`` (a preprint)
* seven works of one record each, ``pmid:99200010`` … ``pmid:99200016``
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import duckdb
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from pipeline.snapshot.filters import SearchFilters, parse_sources
from pipeline.snapshot.search import SearchPage, open_snapshot, search_page
from tests.conftest import TEST_KEYRING
from tests.pipeline.snapshot.planted_search import WORK_RECORDS, write_planted
from tests.pipeline.snapshot.planted_search import WORKS_QUERY as QUERY

WORK_A = {"pmid:99200001", "pmcid:PMC99200001", "doi:10.5555/quorvex.a"}
WORK_B = {"ppr:PPR99200002", "pmid:99200002"}
WORK_C = {"doi:10.5555/quorvex.c", "doi:10.5555/quorvex.cpre"}
WORKS = 3 + 7


@pytest.fixture(scope="module")
def con(tmp_path_factory: pytest.TempPathFactory) -> Iterator[duckdb.DuckDBPyConnection]:
    path = write_planted(tmp_path_factory.mktemp("works") / "works-1.duckdb", WORK_RECORDS)
    connection = open_snapshot(Path(path))
    yield connection
    connection.close()


def _page(con: duckdb.DuckDBPyConnection, limit: int = 50, **filters: object) -> SearchPage:
    return search_page(con, QUERY, TEST_KEYRING, SearchFilters(**filters), limit=limit)  # type: ignore[arg-type]


def _members(page: SearchPage) -> dict[str, set[str]]:
    """Each result's work → every record id the result names (its own and ``also``)."""
    return {
        str(hit.work): {hit.record_id, *(other.record_id for other in hit.also)}
        for hit in page.hits
    }


def test_records_sharing_a_pmid_a_pmcid_or_a_case_folded_doi_are_one_work_transitively(
    con: duckdb.DuckDBPyConnection,
) -> None:
    page = _page(con)
    works = _members(page)
    assert works["doi:10.5555/quorvex.a"] == WORK_A  # the work id: its smallest record id
    assert sum(1 for hit in page.hits if hit.record_id in WORK_A) == 1
    hit = next(hit for hit in page.hits if hit.record_id in WORK_A)
    assert hit.record_id == "pmcid:PMC99200001"  # the best passage of the work
    assert [(o.record_id, o.source) for o in hit.also] == [
        ("pmid:99200001", "pubmed"),
        ("doi:10.5555/quorvex.a", "crossref"),
    ]  # best score first
    assert hit.also[0].handle is not None and hit.also[0].handle.startswith(
        "pmid:99200001/abstract.1~"
    )
    assert hit.also[1].handle is None and hit.also[1].score is not None  # doi: has no scheme
    assert (page.total, page.passages) == (WORKS, len(WORK_RECORDS))


def test_a_preprint_and_its_published_version_are_one_work_either_way_the_relation_points(
    con: duckdb.DuckDBPyConnection,
) -> None:
    works = _members(_page(con))
    assert works["pmid:99200002"] == WORK_B  # preprint_of, from the preprint
    assert works["doi:10.5555/quorvex.c"] == WORK_C  # has_preprint (target in upper case)
    singles = {work for work, members in works.items() if len(members) == 1}
    assert singles == {f"pmid:992000{n}" for n in range(10, 17)}


def test_a_work_shows_retracted_when_any_of_its_records_is_even_one_not_shown(
    con: duckdb.DuckDBPyConnection,
) -> None:
    hit = next(hit for hit in _page(con).hits if hit.work == "doi:10.5555/quorvex.a")
    assert hit.record_id == "pmcid:PMC99200001"  # itself known not retracted
    assert hit.flags == {"retracted": True, "expression_of_concern": False, "preprint": False}


def test_excluding_retracted_leaves_out_a_work_another_record_of_which_is_retracted(
    con: duckdb.DuckDBPyConnection,
) -> None:
    page = _page(con, retracted="exclude")
    assert not WORK_A & {hit.record_id for hit in page.hits}
    assert page.excluded_by_work == {"retracted": 1}
    # the Crossref record of work A does not know: left out on its own, counted as undecided
    assert page.excluded_unknown == {"retracted": 1}
    assert page.total == WORKS - 1


def test_filters_decide_per_record_before_grouping_and_also_names_the_records_left_out(
    con: duckdb.DuckDBPyConnection,
) -> None:
    page = _page(con, sources=parse_sources(["pubmed"]))
    hit = next(hit for hit in page.hits if hit.work == "doi:10.5555/quorvex.a")
    assert hit.record_id == "pmid:99200001"
    assert [(o.record_id, o.handle, o.score) for o in hit.also] == [
        ("doi:10.5555/quorvex.a", None, None),
        ("pmcid:PMC99200001", None, None),
    ]  # no passage kept: not of the source asked for
    published = next(
        hit for hit in _page(con, preprint="exclude").hits if hit.work == "pmid:99200002"
    )
    assert published.record_id == "pmid:99200002"
    assert published.flags["preprint"] is False  # the flag of the record shown
    only = _page(con, preprint="only")
    assert {hit.record_id for hit in only.hits} == {"ppr:PPR99200002", "doi:10.5555/quorvex.cpre"}


@settings(max_examples=4, deadline=None)
@given(limit=st.integers(min_value=2, max_value=WORKS + 1), source=st.sampled_from(["", "pubmed"]))
def test_paging_by_any_page_size_shows_every_work_once_in_the_order_of_one_page(
    con: duckdb.DuckDBPyConnection, limit: int, source: str
) -> None:
    filters = SearchFilters(sources=parse_sources([source] if source else []))
    whole = search_page(con, QUERY, TEST_KEYRING, filters, limit=50)
    seen: list[str] = []
    offset = 0
    while offset < whole.total:
        page = search_page(con, QUERY, TEST_KEYRING, filters, limit=limit, offset=offset)
        assert page.total == whole.total and len(page.hits) == min(limit, whole.total - offset)
        seen += [str(hit.work) for hit in page.hits]
        offset += len(page.hits)
    assert seen == [str(hit.work) for hit in whole.hits]
    assert len(set(seen)) == len(seen) == whole.total
