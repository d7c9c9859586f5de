"""audit.references.resolve: the snapshot resolver, by identifier and by title."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from audit.errors import CorpusError
from audit.references.resolve import Lookup, SnapshotResolver
from tests.audit.fixture_scope import per_module
from tests.audit.references.works import write_works


@pytest.fixture(scope=per_module)
def works(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return write_works(tmp_path_factory.mktemp("works") / "works.duckdb")


@pytest.fixture
def resolver(works: Path) -> Iterator[SnapshotResolver]:
    opened = SnapshotResolver.open(works)
    yield opened
    opened.close()


@pytest.mark.parametrize(
    ("key", "records"),
    [
        (("doi", "10.5555/ref.0001"), ("pmid:99100001",)),
        (("pmid", "99100002"), ("pmid:99100002",)),
        (("pmcid", "PMC99100001"), ("pmid:99100001",)),
        (("nct", "NCT99100001"), ("nct:NCT99100001",)),
        (("doi", "10.5555/ref.pre.0001"), ("ppr:PPR991001",)),
    ],
    ids=["doi", "pmid", "pmcid", "nct", "preprint-doi"],
)
def test_each_scheme_resolves_through_the_records_table(
    resolver: SnapshotResolver, key: tuple[str, str], records: tuple[str, ...]
) -> None:
    lookup = resolver.by_identifiers([key])[key]
    assert lookup.status == "matched"
    assert tuple(r.record_id for r in lookup.records) == records
    assert lookup.key == f"{key[0]}:{key[1]}"
    assert lookup.resolver == "snapshot"


def test_a_record_carries_its_metadata_flags_and_published_version(
    resolver: SnapshotResolver,
) -> None:
    record = resolver.by_identifiers([("doi", "10.5555/ref.pre.0001")])[
        ("doi", "10.5555/ref.pre.0001")
    ].records[0]
    assert (record.title, record.authors, record.year, record.venue) == (
        "Vitamin Z and liver injury in mice (preprint)",
        ("Ng L", "Okafor C"),
        2021,
        "Synthetic Preprint Server",
    )
    assert (record.preprint, record.retracted, record.published_version) == (
        True,
        False,
        "pmid:99100003",
    )


def test_an_absent_identifier_is_unmatched(resolver: SnapshotResolver) -> None:
    key = ("pmid", "99199999")
    assert resolver.by_identifiers([key])[key] == Lookup("snapshot", "pmid:99199999", "unmatched")


@pytest.mark.parametrize("scheme", ["arxiv", "isbn"])
def test_schemes_the_snapshot_cannot_hold_say_so(resolver: SnapshotResolver, scheme: str) -> None:
    key = (scheme, "2099.01234")
    assert resolver.by_identifiers([key])[key] == Lookup(
        "snapshot",
        f"{scheme}:2099.01234",
        "unmatched",
        detail=f"the snapshot holds no {scheme} records",
    )


def test_a_failed_lookup_is_unreachable_and_never_raises(works: Path) -> None:
    broken = SnapshotResolver.open(works)
    broken.close()  # every query now fails inside DuckDB
    key = ("doi", "10.5555/ref.0001")
    lookup = broken.by_identifiers([key])[key]
    assert lookup.status == "unreachable"
    assert lookup.detail is not None and lookup.detail.startswith("snapshot lookup failed: ")
    title = broken.by_title("A synthetic cohort of vitamin X in adults")
    assert title.status == "unreachable"
    assert title.detail is not None and title.detail.startswith("snapshot title search failed: ")


def test_the_title_search_ranks_the_nearest_title_first(resolver: SnapshotResolver) -> None:
    lookup = resolver.by_title("A synthetic cohort of vitamin X in adults")
    assert lookup.status == "matched"
    assert lookup.key == "title:A synthetic cohort of vitamin X in adults"
    assert lookup.records[0].record_id == "pmid:99100001"


def test_one_batch_answers_every_key_given(resolver: SnapshotResolver) -> None:
    keys = [("doi", "10.5555/ref.0001"), ("pmid", "99100002"), ("pmid", "99199999")]
    answers = resolver.by_identifiers(keys)
    assert [answers[k].status for k in keys] == ["matched", "matched", "unmatched"]


def test_a_file_that_is_no_database_is_a_one_line_error(tmp_path: Path) -> None:
    bad = tmp_path / "bad.duckdb"
    bad.write_bytes(b"not a database at all, just text" * 100)
    with pytest.raises(CorpusError) as caught:
        SnapshotResolver.open(bad)
    assert caught.value.message.startswith("cannot open snapshot bad.duckdb: ")
    assert "\n" not in caught.value.message
