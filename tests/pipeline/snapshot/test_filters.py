"""Search filters: exact parse errors, and exactly which planted records each filter keeps."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import duckdb
import pytest
from hypothesis import given
from hypothesis import strategies as st

from audit.errors import InputError
from audit.keys import Keyring
from pipeline.snapshot.filters import (
    TRIAL_STATUSES,
    DateBound,
    SearchFilters,
    make_filters,
    parse_date_bound,
    parse_statuses,
)
from pipeline.snapshot.search import held_statuses, search_page
from pipeline.snapshot.trust import trust_snapshot
from tests.conftest import TRUST
from tests.pipeline.snapshot.planted_search import QUERY, write_planted

DEMO = Keyring.demo_keyring()
PAPERS = {
    "pmid:99100001",
    "pmid:99100002",
    "pmid:99100003",
    "pmid:99100004",
    "ppr:PPR99100005",
    "pmcid:PMC99100006",
    "doi:10.5555/zorblax.7",
    "pmcid:PMC99100008",
}
TRIALS = {"nct:NCT99100001", "nct:NCT99100002", "nct:NCT99100003", "nct:NCT99100004"}


@pytest.fixture(scope="module")
def planted(tmp_path_factory: pytest.TempPathFactory) -> Iterator[duckdb.DuckDBPyConnection]:
    path = write_planted(tmp_path_factory.mktemp("planted") / "planted" / "planted-1.duckdb")
    con = trust_snapshot(path, TRUST).search_connection()
    yield con
    con.close()


def _kept(con: duckdb.DuckDBPyConnection, **given: Any) -> tuple[set[str], dict[str, int]]:
    page = search_page(con, QUERY, DEMO, make_filters(**given), limit=100)
    assert page.total == len(page.hits)
    return {hit.record_id for hit in page.hits}, page.excluded_unknown


def test_no_filter_keeps_every_planted_record_and_counts_nothing(
    planted: duckdb.DuckDBPyConnection,
) -> None:
    assert _kept(planted) == (PAPERS | TRIALS, {})


@pytest.mark.parametrize(
    ("given", "kept", "unknown"),
    [
        # pmid:99100004 does not know whether it is retracted or under concern
        ({"retracted": "exclude"}, (PAPERS | TRIALS) - {"pmid:99100002", "pmid:99100004"}, 1),
        ({"retracted": "only"}, {"pmid:99100002"}, 1),
        (
            {"expression_of_concern": "exclude"},
            (PAPERS | TRIALS) - {"pmid:99100003", "pmid:99100004"},
            1,
        ),
        ({"expression_of_concern": "only"}, {"pmid:99100003"}, 1),
        ({"preprint": "exclude"}, (PAPERS | TRIALS) - {"ppr:PPR99100005"}, 0),
        ({"preprint": "only"}, {"ppr:PPR99100005"}, 0),
    ],
)
def test_flag_filters_keep_exactly_the_records_known_to_pass(
    planted: duckdb.DuckDBPyConnection, given: dict[str, str], kept: set[str], unknown: int
) -> None:
    (name,) = given
    assert _kept(planted, **given) == (kept, {name: unknown})


def test_results_carry_their_flags_whatever_the_filter(
    planted: duckdb.DuckDBPyConnection,
) -> None:
    page = search_page(planted, QUERY, DEMO, make_filters(retracted="only"), limit=10)
    assert {tuple(h.flags.items()) for h in page.hits} == {
        (("retracted", True), ("expression_of_concern", False), ("preprint", False))
    }


def test_date_range_from_a_month_keeps_records_wholly_inside_and_counts_the_undecided(
    planted: duckdb.DuckDBPyConnection,
) -> None:
    # 2021 alone (pmid:99100003, the Crossref doi) straddles 2021-06; 99100004 and NCT99100003
    # have no date; PMC99100008's "June 2021" is no ISO date
    kept, unknown = _kept(planted, published_from="2021-06")
    assert kept == {"ppr:PPR99100005", "pmcid:PMC99100006", "nct:NCT99100001", "nct:NCT99100004"}
    assert unknown == {"published": 5}


def test_date_range_of_one_year_keeps_every_date_within_it(
    planted: duckdb.DuckDBPyConnection,
) -> None:
    kept, unknown = _kept(planted, published_from="2021", published_to="2021")
    assert kept == {
        "pmid:99100003",
        "ppr:PPR99100005",
        "pmcid:PMC99100006",
        "doi:10.5555/zorblax.7",
    }
    assert unknown == {"published": 3}


def test_date_range_to_a_day_uses_the_trial_first_posted_date(
    planted: duckdb.DuckDBPyConnection,
) -> None:
    kept, unknown = _kept(planted, published_to="2018-05-31", sources=["clinicaltrials"])
    assert kept == {"nct:NCT99100002"}  # first posted 2018-05, wholly before 2018-05-31
    assert unknown == {"published": 1}
    kept, _ = _kept(planted, published_to="2018-05-30", sources=["clinicaltrials"])
    assert kept == set()  # 2018-05 straddles the 30th: undecided, not kept


def test_undated_records_are_excluded_by_a_range_and_counted_once_per_record(
    planted: duckdb.DuckDBPyConnection,
) -> None:
    kept, unknown = _kept(planted, published_from="1900", sources=["pubmed"])
    assert kept == {"pmid:99100001", "pmid:99100002", "pmid:99100003"}
    assert unknown == {"published": 1}  # pmid:99100004 has two passages, counted once


def test_a_record_another_filter_rejects_is_not_counted_as_undecided(
    planted: duckdb.DuckDBPyConnection,
) -> None:
    # pmid:99100004 is undated and of unknown retraction; the source filter rejects it
    kept, unknown = _kept(
        planted, published_from="1900", retracted="exclude", sources=["europepmc"]
    )
    assert kept == {"ppr:PPR99100005", "pmcid:PMC99100006"}
    assert unknown == {"retracted": 0, "published": 1}  # only PMC99100008


def test_status_filter_keeps_trials_of_those_statuses_only(
    planted: duckdb.DuckDBPyConnection,
) -> None:
    kept, unknown = _kept(planted, statuses=["recruiting", "Terminated"])
    assert kept == {"nct:NCT99100001", "nct:NCT99100004"}
    assert unknown == {"statuses": 1}  # NCT99100003 has no status


def test_held_statuses_are_those_of_the_snapshot_trials(
    planted: duckdb.DuckDBPyConnection,
) -> None:
    assert held_statuses(planted) == ["COMPLETED", "RECRUITING", "TERMINATED"]


def test_filter_values_are_bound_parameters_not_sql(planted: duckdb.DuckDBPyConnection) -> None:
    hostile = "x'); DROP TABLE records; --"
    filters = SearchFilters(statuses=(hostile,))
    assert search_page(planted, QUERY, DEMO, filters, limit=5).hits == []
    assert held_statuses(planted)  # the table is still there


@pytest.mark.parametrize(
    ("given", "message"),
    [
        ({"retracted": "hide"}, "retracted must be one of include, exclude, only, got 'hide'"),
        ({"preprint": ""}, "preprint must be one of include, exclude, only, got ''"),
        (
            {"published_from": "21"},
            "published_from is not a date: got '21', expected YYYY, YYYY-MM or YYYY-MM-DD",
        ),
        (
            {"published_to": "2021-13"},
            "published_to has no month 13: got '2021-13', expected YYYY, YYYY-MM or YYYY-MM-DD",
        ),
        (
            {"published_to": "2021-02-30"},
            "published_to is not a day of the calendar: got '2021-02-30'",
        ),
        (
            {"published_from": "2022", "published_to": "2021-12"},
            "published_from 2022 is after published_to 2021-12; the range holds no date",
        ),
        (
            {"sources": ["pubmed", "medline"]},
            "unknown source 'medline'; expected one of pubmed, europepmc, pubtator3, crossref, "
            "clinicaltrials, openfda, arxiv, openalex, local",
        ),
        (
            {"statuses": ["RECRUTING"]},
            "unknown trial status 'RECRUTING'; expected one of " + ", ".join(TRIAL_STATUSES),
        ),
    ],
)
def test_invalid_filter_values_are_one_line_errors(given: dict[str, Any], message: str) -> None:
    with pytest.raises(InputError) as caught:
        make_filters(**given)
    assert caught.value.message == message


def test_a_status_the_snapshot_holds_is_accepted_beyond_the_registry_enum() -> None:
    assert parse_statuses(["legacy status"], held=["LEGACY_STATUS"]) == ("LEGACY_STATUS",)


@pytest.mark.parametrize(
    ("text", "end", "day"),
    [
        ("2021", False, "2021-01-01"),
        ("2021", True, "2021-12-31"),
        ("2021-06", False, "2021-06-01"),
        ("2021-06", True, "2021-06-31"),  # sorts after every day of June, before July
        ("2021-06-15", True, "2021-06-15"),
    ],
)
def test_partial_dates_stand_for_the_first_or_last_day_they_cover(
    text: str, end: bool, day: str
) -> None:
    assert parse_date_bound("published_from", text, end=end) == DateBound(text, day)


@given(st.dates(), st.dates())
def test_a_day_inside_a_range_of_days_compares_inside(first: Any, second: Any) -> None:
    low, high = sorted([first, second])
    start = parse_date_bound("published_from", low.isoformat()[:7], end=False)
    stop = parse_date_bound("published_to", high.isoformat()[:7], end=True)
    assert start.day <= low.isoformat() <= high.isoformat() <= stop.day
