"""A drug's labels without a query (pipeline/snapshot/listing.py): newest first, each with its
set id and pinned version, undecided labels counted, pages that never repeat."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import duckdb
import pytest

from audit.errors import InputError
from audit.handles import parse_locator
from audit.keys import Keyring
from pipeline.snapshot.filters import make_filters
from pipeline.snapshot.listing import find_page, label_page
from pipeline.snapshot.trust import trust_snapshot
from tests.conftest import TRUST
from tests.pipeline.snapshot.planted_facets import label_id

DEMO = Keyring.demo_keyring()


@pytest.fixture(scope="module")
def planted(facets_snapshot: Path) -> Iterator[duckdb.DuckDBPyConnection]:
    con = trust_snapshot(facets_snapshot, TRUST).search_connection()
    yield con
    con.close()


def test_a_drugs_labels_are_listed_newest_first_with_set_id_and_version(
    planted: duckdb.DuckDBPyConnection,
) -> None:
    page = label_page(planted, DEMO, make_filters(drug="Zorblax"), limit=10)
    # label 2 (2024-06-10), label 5 (2023-01-01), label 3 (no effective date: last)
    assert [hit.record_id for hit in page.hits] == [label_id(2), label_id(5), label_id(3)]
    assert [hit.published for hit in page.hits] == ["2024-06-10", "2023-01-01", None]
    assert (page.total, page.excluded_unknown) == (3, {"drug": 1})  # label 4 names no drug
    first = page.hits[0]
    assert first.handle is not None and first.score is None and first.work == label_id(2)
    locator = parse_locator(first.handle.split("~")[0])
    assert (locator.scheme, locator.id, locator.version, locator.path) == (
        "setid",
        label_id(2).removeprefix("setid:"),
        "1",
        "label.indications_and_usage.1",  # the label's first passage
    )


def test_listing_pages_cover_every_label_once(planted: duckdb.DuckDBPyConnection) -> None:
    filters = make_filters(drug="zorblax")
    pages = [label_page(planted, DEMO, filters, limit=2, offset=offset) for offset in (0, 2)]
    assert [[hit.record_id for hit in page.hits] for page in pages] == [
        [label_id(2), label_id(5)],
        [label_id(3)],
    ]


def test_other_filters_apply_to_the_listing_and_count_what_they_cannot_decide(
    planted: duckdb.DuckDBPyConnection,
) -> None:
    page = label_page(planted, DEMO, make_filters(drug="zorblax", published_from="2024"))
    assert [hit.record_id for hit in page.hits] == [label_id(2)]
    # label 3 has no date; label 4 (2025) names no drug
    assert page.excluded_unknown == {"published": 1, "drug": 1}


def test_with_a_query_the_drug_filter_ranks_by_bm25_instead(
    planted: duckdb.DuckDBPyConnection,
) -> None:
    page = find_page(planted, "warnings", DEMO, make_filters(drug="zorblaxin"))
    assert [(hit.record_id, hit.path) for hit in page.hits] == [(label_id(1), "label.warnings.1")]
    assert page.hits[0].score is not None


def test_without_a_query_or_a_drug_the_error_says_what_to_give(
    planted: duckdb.DuckDBPyConnection,
) -> None:
    with pytest.raises(InputError) as caught:
        find_page(planted, "  ", DEMO, make_filters())
    assert caught.value.message == (
        "the search query is empty; give a query, or a drug name to list that drug's labels"
    )
