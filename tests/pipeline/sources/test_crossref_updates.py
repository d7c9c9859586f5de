"""Crossref update notices asked in batches: one ``updates:`` filter for many DOIs, paged by
cursor, each notice attributed to the DOIs it updates; a batch that cannot be read whole is
one error for all of it (:func:`pipeline.sources.crossref.fetch_update_notices`)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import httpx
import pytest

from pipeline.errors import ParseError, TerminalHarvestError
from pipeline.sources import crossref
from tests.pipeline.sources.helpers import mock_client, wrapper_body

FIXTURE = Path(__file__).parents[2] / "fixtures/crossref/updates-retraction.json"


def notice(doi: str, *updates: tuple[str, str]) -> dict[str, Any]:
    """A notice work in the API's format: ``updates`` are (updated DOI, update type)."""
    return {
        "DOI": doi,
        "type": "journal-article",
        "title": [f"Notice {doi}"],
        "published": {"date-parts": [[2024, 2, 15]]},
        "update-to": [
            {
                "DOI": updated,
                "type": kind,
                "label": kind.title(),
                "source": "publisher",
                "updated": {"date-parts": [[2024, 2, 15]]},
            }
            for updated, kind in updates
        ],
    }


def page(items: list[dict[str, Any]], total: int, cursor: str | None = "c-next") -> bytes:
    message: dict[str, Any] = {
        "facets": {},
        "total-results": total,
        "items": items,
        "items-per-page": crossref.ROWS,
        "query": {"start-index": 0, "search-terms": None},
    }
    if cursor is not None:
        message["next-cursor"] = cursor
    body = {"status": "ok", "message-type": "work-list", "message-version": "1.0.0"}
    return json.dumps({**body, "message": message}).encode()


def serve(*pages: bytes) -> tuple[list[dict[str, str]], httpx.MockTransport]:
    asked: list[dict[str, str]] = []

    def handle(request: httpx.Request) -> httpx.Response:
        asked.append(dict(request.url.params))
        return httpx.Response(200, content=pages[len(asked) - 1])

    return asked, httpx.MockTransport(handle)


def fetch(dois: list[str], *pages: bytes) -> tuple[dict[str, list[tuple[str, str]]], list]:
    asked, transport = serve(*pages)
    with mock_client(transport.handle_request) as http:
        found = crossref.fetch_update_notices(http, dois)
    return {d: [(r.kind, r.target) for r in rs] for d, rs in found.items()}, asked


def test_one_request_asks_every_doi_and_each_notice_goes_to_the_dois_it_updates() -> None:
    items = [
        notice("10.5555/n.1", ("10.5555/A.1", "retraction")),
        notice(
            "10.5555/n.2", ("10.5555/b.1", "expression_of_concern"), ("10.5555/c.1", "correction")
        ),
        notice("10.5555/n.3", ("10.5555/not.asked", "retraction")),
    ]
    found, asked = fetch(
        ["10.5555/a.1", "10.5555/B.1", "10.5555/c.1", "10.5555/e.1"], page(items, 3)
    )
    assert asked == [
        {
            "filter": "updates:10.5555/a.1,updates:10.5555/b.1,updates:10.5555/c.1,"
            "updates:10.5555/e.1",
            "rows": "100",
            "cursor": "*",
        }
    ]
    assert found == {
        "10.5555/a.1": [("retraction_in", "doi:10.5555/n.1")],
        "10.5555/b.1": [("expression_of_concern_in", "doi:10.5555/n.2")],
        "10.5555/c.1": [("correction_in", "doi:10.5555/n.2")],
        "10.5555/e.1": [],  # no notice in a complete answer: no notices
    }


def test_the_recorded_single_doi_answer_gives_the_same_relations_as_before() -> None:
    body, _ = wrapper_body(FIXTURE)
    found, _ = fetch(["10.5555/XREF.0003"], body.encode())
    assert found == {
        "10.5555/xref.0003": [
            ("retraction_in", "doi:10.5555/xref.0004"),
            ("expression_of_concern_in", "doi:10.5555/xref.0005"),
        ]
    }


def test_notices_are_read_page_by_page_with_the_cursor_until_all_are_read() -> None:
    first = [notice(f"10.5555/n.{i}", ("10.5555/a.1", "correction")) for i in range(100)]
    second = [notice(f"10.5555/n.{i}", ("10.5555/b.1", "correction")) for i in range(100, 130)]
    found, asked = fetch(
        ["10.5555/a.1", "10.5555/b.1"], page(first, 130, "c+1"), page(second, 130, "c+2")
    )
    assert [a["cursor"] for a in asked] == ["*", "c+1"]
    assert asked[0]["filter"] == asked[1]["filter"]
    assert len(found["10.5555/a.1"]) == 100
    assert len(found["10.5555/b.1"]) == 30


def test_a_full_last_page_is_not_followed_once_every_notice_is_read() -> None:
    items = [notice(f"10.5555/n.{i}", ("10.5555/a.1", "correction")) for i in range(100)]
    found, asked = fetch(["10.5555/a.1"], page(items, 100))
    assert len(asked) == 1
    assert len(found["10.5555/a.1"]) == 100


def test_an_empty_complete_answer_means_no_notices_for_every_doi() -> None:
    found, _ = fetch(["10.5555/a.1", "10.5555/b.1"], page([], 0))
    assert found == {"10.5555/a.1": [], "10.5555/b.1": []}


def test_a_list_that_ends_short_of_its_total_fails_the_whole_batch() -> None:
    items = [notice(f"10.5555/n.{i}", ("10.5555/a.1", "correction")) for i in range(100)]
    with pytest.raises(ParseError) as caught:
        fetch(["10.5555/a.1", "10.5555/b.1"], page(items, 150), page([], 150))
    assert caught.value.message == (
        "Crossref listed 100 of the 150 notices of an updates: list before it ended"
    )


def test_a_repeated_cursor_fails_the_whole_batch_instead_of_looping() -> None:
    items = [notice(f"10.5555/n.{i}", ("10.5555/a.1", "correction")) for i in range(100)]
    with pytest.raises(ParseError) as caught:
        fetch(["10.5555/a.1"], page(items, 300, "same"), page(items, 300, "same"))
    assert caught.value.message == (
        "Crossref repeated the cursor of an updates: list after 200 notices"
    )


def test_a_malformed_page_fails_the_whole_batch() -> None:
    bad = b'{"status": "ok", "message-type": "work-list", "message": []}'
    with pytest.raises(ParseError) as caught:
        fetch(["10.5555/a.1", "10.5555/b.1"], bad)
    assert caught.value.message == "crossref: message must be an object, got a list"


def test_more_dois_than_one_filter_holds_are_refused_before_any_request() -> None:
    dois = [f"10.5555/a.{i}" for i in range(crossref.UPDATES_BATCH + 1)]
    asked, transport = serve()
    refused = pytest.raises(TerminalHarvestError)
    with mock_client(transport.handle_request) as http, refused as caught:
        crossref.fetch_update_notices(http, dois)
    assert caught.value.message == (
        "cannot ask Crossref for the notices of 51 DOIs in one filter: at most 50, none empty "
        "or holding a ','"
    )
    assert asked == []


def test_the_batch_url_stays_well_inside_the_url_limits() -> None:
    dois = [f"10.5555/{'x' * 60}.{i:04d}" for i in range(crossref.UPDATES_BATCH)]
    request = httpx.Request(
        "GET",
        crossref.WORKS_URL,
        params={"filter": ",".join(f"updates:{d}" for d in dois), "rows": 100, "cursor": "*"},
    )
    assert len(str(request.url)) < 6000  # 50 DOIs of 70 characters, percent-encoded
