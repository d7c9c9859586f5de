"""Signed paging cursors: what they bind, every way a bad one is refused, that paging covers
exactly the unpaged ranking (property test over a generated snapshot), and that no work is
shown on two pages (property test over the planted works)."""

from __future__ import annotations

import base64
import random
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from audit.errors import InputError
from audit.keys import Keyring
from pipeline.records import Flags, Passage, Record
from pipeline.serve import service
from pipeline.serve.cursor import (
    MAX_CURSOR_CHARS,
    PURPOSE,
    SearchKey,
    issue_cursor,
    read_cursor,
)
from pipeline.serve.service import Served
from pipeline.snapshot.filters import make_filters
from pipeline.snapshot.search import search_page
from pipeline.snapshot.trust import trust_snapshot
from tests.conftest import TRUST
from tests.pipeline.snapshot.planted_search import (
    QUERY,
    WORK_RECORDS,
    WORKS_QUERY,
    write_planted,
)

DEMO = Keyring.demo_keyring()
SHA = "a" * 64
KEY = SearchKey("literature", "zorblax", make_filters().canonical(), SHA)
ADVICE = "search again without a cursor to start from the first page"


def _refused(text: str, key: SearchKey = KEY, keyring: Keyring = DEMO) -> tuple[str, str | None]:
    with pytest.raises(InputError) as caught:
        read_cursor(keyring, text, key)
    return caught.value.message, caught.value.advice


def test_a_cursor_reads_back_its_offset_and_is_base64url_without_padding() -> None:
    cursor = issue_cursor(DEMO, KEY, 20)
    assert read_cursor(DEMO, cursor, KEY) == 20
    assert set(cursor) <= set("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_")


def test_a_cursor_with_any_byte_changed_does_not_verify() -> None:
    cursor = issue_cursor(DEMO, KEY, 20)
    raw = bytearray(base64.urlsafe_b64decode(cursor + "=" * (-len(cursor) % 4)))
    expected = (
        "the cursor is not one this server issued: its signature does not verify "
        "(altered, truncated or made up)",
        ADVICE,
    )
    for index in range(len(raw)):
        changed = bytearray(raw)
        changed[index] ^= 0x01
        text = base64.urlsafe_b64encode(bytes(changed)).decode().rstrip("=")
        assert _refused(text) == expected


def test_an_offset_rewritten_in_the_payload_does_not_verify() -> None:
    cursor = issue_cursor(DEMO, KEY, 20)
    raw = base64.urlsafe_b64decode(cursor + "=" * (-len(cursor) % 4))
    forged = raw.replace(b'"offset":20', b'"offset":90')
    assert forged != raw
    text = base64.urlsafe_b64encode(forged).decode().rstrip("=")
    assert _refused(text)[0].endswith(
        "its signature does not verify (altered, truncated or made up)"
    )


@pytest.mark.parametrize("keep", [1, 10, 43, -1, -6])
def test_a_truncated_cursor_is_refused_never_read_as_page_one(keep: int) -> None:
    cursor = issue_cursor(DEMO, KEY, 20)
    message, _ = _refused(cursor[:keep])
    assert message.startswith("the cursor is not one this server issued: ")


@pytest.mark.parametrize(
    ("text", "why"),
    [
        ("abc$def", "it holds characters outside base64url (A-Z a-z 0-9 - _)"),
        ("a", "it is not valid base64url (truncated?)"),
        (
            "x" * (MAX_CURSOR_CHARS + 1),
            f"it is {MAX_CURSOR_CHARS + 1:,} characters long (at most 4,096)",
        ),
        ("", "it is empty (leave cursor out for the first page)"),
        ("  ", "it is empty (leave cursor out for the first page)"),
    ],
)
def test_text_that_is_no_cursor_is_refused_with_why(text: str, why: str) -> None:
    assert _refused(text) == (f"the cursor is not one this server issued: {why}", ADVICE)


def test_a_cursor_of_another_key_does_not_verify() -> None:
    other = Keyring([b"another installation key, 32 bytes or more"])
    message, _ = _refused(issue_cursor(other, KEY, 10))
    assert message.endswith("its signature does not verify (altered, truncated or made up)")


@pytest.mark.parametrize(
    ("issued", "message"),
    [
        (
            SearchKey("literature", "zorblax", KEY.filters, "b" * 64),
            "the cursor was issued for another snapshot (sha256 bbbbbbbbbbbbbbbb…); this server "
            "serves aaaaaaaaaaaaaaaa…",
        ),
        (
            SearchKey("trials", "zorblax", KEY.filters, SHA),
            "the cursor pages through search_trials, not search_literature",
        ),
        (
            SearchKey("literature", "zorblax arm", KEY.filters, SHA),
            "the cursor belongs to another query ('zorblax arm'); pass the query it was issued for",
        ),
        (
            SearchKey("literature", "zorblax", make_filters(preprint="only").canonical(), SHA),
            "the cursor belongs to the same query with other filters "
            '(preprint="only", not "include"); pass the filters it was issued for',
        ),
        (
            SearchKey(
                "literature",
                "zorblax",
                make_filters(designs=("rct",), sources=("pubmed",)).canonical(),
                SHA,
            ),
            "the cursor belongs to the same query with other filters "
            '(designs=["rct"], not []; sources=["pubmed"], not []); pass the filters it was '
            "issued for",
        ),
    ],
)
def test_a_cursor_of_another_search_is_refused_with_what_it_belongs_to(
    issued: SearchKey, message: str
) -> None:
    assert _refused(issue_cursor(DEMO, issued, 10)) == (message, ADVICE)


# -- paging through the service ---------------------------------------------------------------


def _generated(count: int, seed: int) -> list[Record]:
    """Papers with one of four passage texts each (many equal scores: ties must still page
    in a total order), flags and dates drawn from a seeded generator."""
    rng = random.Random(seed)
    texts = ["Zorblax helps.", "Zorblax zorblax helps.", "Zorblax, rarely.", "Other zorblax."]
    records = []
    for n in range(count):
        flag = rng.choice([True, False, None])
        records.append(
            Record(
                record_id=f"pmid:{99200000 + n}",
                source="pubmed",
                version="1",
                title=f"Generated {n}",
                year=rng.choice([None, 2019, 2020, 2021, 2022]),
                flags=Flags(retracted=flag, expression_of_concern=False, preprint=False),
                passages=[
                    Passage(path=f"abstract.{k}", section="abstract", text=rng.choice(texts))
                    for k in range(1, rng.randint(1, 3) + 1)
                ],
            )
        )
    return records


@pytest.fixture(scope="module")
def generated(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Served]:
    path = tmp_path_factory.mktemp("generated") / "generated" / "generated-1.duckdb"
    write_planted(path, _generated(25, seed=14))
    with Served(trust_snapshot(path, TRUST), DEMO) as value:
        yield value


FILTERS = st.fixed_dictionaries(
    {},
    optional={
        "retracted": st.sampled_from(["include", "exclude", "only"]),
        "published_from": st.sampled_from(["2019", "2020-06", "2021-01-01"]),
        "published_to": st.sampled_from(["2021", "2022-12-31"]),
    },
)


@settings(
    max_examples=12, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(
    limit=st.integers(4, 20),
    filters=FILTERS,
    query=st.sampled_from(["zorblax", "helps", "rarely zorblax"]),
)
def test_pages_never_repeat_and_cover_exactly_the_unpaged_ranking(
    generated: Served, limit: int, filters: dict[str, Any], query: str
) -> None:
    with generated.cursor() as con:
        unpaged = search_page(
            con, query, DEMO, make_filters(sources=["pubmed"], **filters), limit=1000
        )
    seen: list[tuple[str, str]] = []
    cursor: str | None = None
    for _ in range(len(unpaged.hits) + 2):
        value = service.search(
            generated,
            "literature",
            query,
            limit=limit,
            sources=["pubmed"],
            cursor=cursor,
            **filters,
        ).value
        assert isinstance(value, service.SearchResult)
        assert value.offset == len(seen) and value.total == unpaged.total
        seen += [(hit.record_id, hit.path) for hit in value.results]
        cursor = value.next_cursor
        if cursor is None:
            break
        assert len(value.results) == limit  # only the last page is short
    assert cursor is None
    assert seen == [(hit.record_id, hit.path) for hit in unpaged.hits]
    assert len(set(seen)) == len(seen)


def test_a_search_that_fits_one_page_has_no_next_cursor(generated: Served) -> None:
    value = service.search(generated, "literature", "rarely", limit=50).value
    assert isinstance(value, service.SearchResult)
    assert value.total <= 50 and value.next_cursor is None


def test_planted_snapshot_cursor_is_refused_by_a_server_of_another_snapshot(
    generated: Served, tmp_path: Path
) -> None:
    path = write_planted(tmp_path / "planted" / "planted-1.duckdb")
    with Served(trust_snapshot(path, TRUST), DEMO) as planted:
        first = service.search(planted, "literature", QUERY, limit=2).value
        assert isinstance(first, service.SearchResult) and first.next_cursor
    with pytest.raises(InputError) as caught:
        service.search(generated, "literature", QUERY, limit=2, cursor=first.next_cursor)
    assert caught.value.message.startswith("the cursor was issued for another snapshot (sha256 ")


def test_a_cursor_of_format_1_which_counted_passages_is_refused_not_read_as_works() -> None:
    payload = (
        b'{"filters":{},"offset":20,"query":"zorblax","snapshot":"' + SHA.encode() + b'",'
        b'"tool":"literature","v":1}'
    )
    text = base64.urlsafe_b64encode(payload + DEMO.derived_tag(PURPOSE, payload)).decode()
    assert _refused(text.rstrip("=")) == (
        "the cursor is not one this server issued: it is not of cursor format 2",
        ADVICE,
    )


@pytest.fixture(scope="module")
def works(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Served]:
    path = tmp_path_factory.mktemp("works") / "works" / "works-1.duckdb"
    write_planted(path, WORK_RECORDS)
    with Served(trust_snapshot(path, TRUST), DEMO) as value:
        yield value


@settings(
    max_examples=5, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(limit=st.integers(1, 11))
def test_paging_with_cursors_never_shows_a_work_on_two_pages(works: Served, limit: int) -> None:
    seen: list[str] = []
    cursor: str | None = None
    while True:
        value = service.search(works, "literature", WORKS_QUERY, limit=limit, cursor=cursor).value
        assert isinstance(value, service.SearchResult)
        seen += [str(hit.work) for hit in value.results]
        cursor = value.next_cursor
        if cursor is None:
            break
    assert len(seen) == len(set(seen)) == value.total == 10  # 3 merged works, 7 single
