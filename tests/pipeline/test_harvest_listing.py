"""The harvest's complete listings (``Search(lists=True)`` → ``Listing``), for any source: the
lineage's records a complete listing does not name are missing, and no others; a listing
that failed, or one a search gave without saying it lists, withdraws nothing."""

from __future__ import annotations

from collections.abc import Collection, Sequence
from pathlib import Path

import pytest
from pydantic import Field

from pipeline.errors import HarvestError, ParseError, TransientHarvestError
from pipeline.harvest import Harvester
from pipeline.harvest_spec import parse_spec
from pipeline.http import HttpClient
from pipeline.records import ParseResult, Record
from pipeline.settings import Settings
from pipeline.snapshot.progress import NullProgress
from pipeline.sources import registered
from pipeline.sources.base import Listing, Plugin, Search
from pipeline.sources.spec_types import Strict


class ShelfSpec(Strict):
    """``[shelf] listings``: each inner list is one listing step's ids; ``"FAIL"`` alone is a
    listing step that fails, ``"UNMARKED"`` first a listing given by a search without
    ``lists``."""

    listings: list[list[str]] = Field(min_length=1)


def _listing(ids: list[str]) -> Search:
    if ids == ["FAIL"]:

        def fail(_client: HttpClient) -> Listing:
            raise TransientHarvestError("the shelf did not answer")

        return Search("listing", "shelf", fail, lists=True)
    unmarked = ids[:1] == ["UNMARKED"]
    listing = Listing(frozenset(f"shelf:{i}" for i in ids if i != "UNMARKED"))
    return Search("listing", "shelf", lambda _client: listing, lists=not unmarked)


def _parse(body: str | bytes, *, url: str | None = None) -> ParseResult:
    raise ParseError("the shelf has no bodies to parse")


SHELF = Plugin(
    name="shelf",
    schemes=("shelf",),
    base_url="",
    parse_body=_parse,
    options=ShelfSpec,
    table_searches=lambda spec: [_listing(ids) for ids in spec.listings],
)


class Sink:
    def __init__(self) -> None:
        self.failures: list[str] = []
        self.steps: list[tuple[str, str, int]] = []

    def records(
        self, source: str, records: Sequence[Record], *, incomplete: Collection[str] = ()
    ) -> None:
        del source, records, incomplete

    def failure(self, source: str, step: str, error: HarvestError | ParseError) -> None:
        self.failures.append(f"{source}: {step}: {error.message}")

    def step(self, source: str, step: str, count: int, detail: str | None = None) -> None:
        self.steps.append((source, step, count))


def missing(tmp_path: Path, listings: str, unseen: list[str]) -> tuple[set[str], Sink]:
    """The ids a harvest of ``[shelf] listings = …`` finds missing among the lineage's
    ``unseen`` records (those this harvest did not deliver), and its sink."""
    sink = Sink()
    with registered(SHELF):
        spec = parse_spec(f'name = "n"\n[shelf]\nlistings = {listings}\n', tmp_path / "n.toml")
        with HttpClient(Settings()) as client:
            harvester = Harvester(spec, client, sink, NullProgress())
            harvester.run()
            return harvester.refresh({"shelf": unseen}).missing, sink


UNSEEN = ["shelf:a", "shelf:b", "shelf:c"]


def test_the_records_no_listing_names_are_missing(tmp_path: Path) -> None:
    gone, sink = missing(tmp_path, '[["a"], ["b"]]', UNSEEN)
    assert gone == {"shelf:c"}  # the listings of one source unite
    assert sink.steps == [("shelf", "listing", 1), ("shelf", "listing", 1)]


@pytest.mark.parametrize(
    ("listings", "failures"),
    [
        ('[["a"], ["FAIL"]]', ["shelf: listing: the shelf did not answer"]),
        ('[["FAIL"], ["a", "b"]]', ["shelf: listing: the shelf did not answer"]),
        ('[["UNMARKED", "a"]]', []),
    ],
    ids=["failed-after", "failed-before", "not-marked-lists"],
)
def test_a_listing_that_failed_or_was_not_announced_withdraws_nothing(
    tmp_path: Path, listings: str, failures: list[str]
) -> None:
    gone, sink = missing(tmp_path, listings, UNSEEN)
    assert gone == set()
    assert sink.failures == failures
