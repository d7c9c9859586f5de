"""Lineage: unchanged records keep their version, changed ones get a new one (the old stays),
records gone upstream are marked withdrawn — on records built in the tests."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

import duckdb
import httpx
import pytest

from pipeline.errors import SnapshotError, TransientHarvestError
from pipeline.http import HttpClient
from pipeline.records import Flags, Passage, Record
from pipeline.settings import Settings
from pipeline.snapshot.build import BuildResult, build_snapshot
from pipeline.snapshot.lineage import Decision, KnownVersion, decide
from pipeline.snapshot.locate import snapshots_in
from pipeline.snapshot.manifest import sha256_file
from pipeline.snapshot.verify import verify_snapshot
from pipeline.sources import clinicaltrials, pubmed
from tests.conftest import TEST_KEYRING, TRUST

# -- decide() ----------------------------------------------------------------------------------


def test_same_content_hash_is_the_same_version() -> None:
    known = [KnownVersion("1", 1, "aaa"), KnownVersion("2", 2, "bbb")]
    assert decide("pmid:99000001", None, "aaa", known) == Decision("pmid:99000001", "1", 1, False)


def test_changed_unversioned_record_gets_the_next_integer() -> None:
    known = [KnownVersion("1", 1, "aaa"), KnownVersion("2", 2, "bbb")]
    assert decide("pmid:99000001", None, "ccc", known) == Decision("pmid:99000001", "3", 3, True)
    assert decide("pmid:99000001", None, "ccc", []) == Decision("pmid:99000001", "1", 1, True)


def test_changed_versioned_record_takes_the_upstream_label() -> None:
    known = [KnownVersion("2025-01-15", 1, "aaa")]
    decision = decide("nct:NCT99000001", "2025-06-02", "bbb", known)
    assert decision == Decision("nct:NCT99000001", "2025-06-02", 2, True)


def test_an_upstream_label_never_names_two_contents() -> None:
    known = [KnownVersion("3", 1, "aaa"), KnownVersion("3-r2", 2, "bbb")]
    assert decide("setid:x", "3", "ccc", known) == Decision("setid:x", "3-r3", 3, True)


# -- builds from records made here ---------------------------------------------------------------


def article(pmid: str, abstract: str) -> Record:
    return Record(
        record_id=f"pmid:{pmid}",
        source="pubmed",
        pmid=pmid,
        title=f"Synthetic article {pmid} on zentravir",
        flags=Flags(retracted=False, expression_of_concern=False, preprint=False),
        passages=[
            Passage(path="title", section="Title", text=f"Synthetic article {pmid} on zentravir"),
            Passage(path="abstract.1", section="Abstract", text=abstract),
        ],
    )


def trial(nct: str, version: str, summary: str) -> Record:
    return Record(
        record_id=f"nct:{nct}",
        source="clinicaltrials",
        version=version,
        title=f"Trial {nct}",
        content_type="trial",
        passages=[Passage(path="trial.brief_summary.1", section="Brief summary", text=summary)],
    )


class Upstream:
    """What the fake APIs answer; tests change it between builds."""

    def __init__(self) -> None:
        self.articles: dict[str, Record] = {}
        self.trials: dict[str, Record] = {}
        self.search: list[str] = []
        self.fail_trials = False
        self.fetched: list[list[str]] = []

    def search_ids(self, client: HttpClient, term: str, **kwargs: object) -> list[str]:
        del client, term, kwargs
        return list(self.search)

    def fetch_articles(self, client: HttpClient, pmids: Sequence[str]) -> list[Record]:
        del client
        self.fetched.append(list(pmids))
        return [self.articles[p] for p in pmids if p in self.articles]

    def fetch_trials(self, client: HttpClient, ids: Sequence[str]) -> list[Record]:
        del client
        if self.fail_trials:
            raise TransientHarvestError("GET clinicaltrials.gov/api/v2/studies failed: HTTP 503")
        return [self.trials[i] for i in ids if i in self.trials]


@pytest.fixture
def upstream(monkeypatch: pytest.MonkeyPatch) -> Upstream:
    fake = Upstream()
    monkeypatch.setattr(pubmed, "search_ids", fake.search_ids)
    monkeypatch.setattr(pubmed, "fetch_records", fake.fetch_articles)
    monkeypatch.setattr(clinicaltrials, "fetch_records", fake.fetch_trials)
    return fake


def _no_network(request: httpx.Request) -> httpx.Response:
    raise AssertionError(f"unexpected request {request.url}")


SPEC = """\
name = "lin"
[pubmed]
queries = [{ term = "zentravir", limit = 10 }]
ids = ["99000011", "99000012"]
[clinicaltrials]
ids = ["NCT99000011"]
"""


def build(tmp_path: Path, *, parent: bool = True, strict: bool = False) -> BuildResult:
    spec = tmp_path / "lin.toml"
    if not spec.exists():
        spec.write_text(SPEC, encoding="utf-8")
    return build_snapshot(
        spec,
        keyring=TEST_KEYRING,
        parent="latest" if parent else None,
        strict=strict,
        settings=Settings(),
        resume=False,
        transport=httpx.MockTransport(_no_network),
    )


def rows(path: Path, sql: str) -> list[tuple[object, ...]]:
    con = duckdb.connect(str(path), read_only=True)
    try:
        return con.execute(sql).fetchall()
    finally:
        con.close()


def versions(path: Path) -> list[tuple[object, ...]]:
    return rows(
        path,
        "SELECT record_id, version, seq, first_seen, last_seen, origin FROM record_versions "
        "ORDER BY record_id, seq",
    )


def test_unchanged_keeps_its_version_changed_gets_a_new_one_and_the_old_stays(
    tmp_path: Path, upstream: Upstream
) -> None:
    upstream.articles = {
        "99000011": article("99000011", "Zentravir was given once daily."),
        "99000012": article("99000012", "Farrow syndrome was rare."),
    }
    upstream.trials = {"NCT99000011": trial("NCT99000011", "2025-01-15", "Zentravir vs placebo.")}
    first = build(tmp_path)
    a = first.manifest.snapshot_id

    upstream.articles["99000011"] = article("99000011", "Zentravir was given twice daily.")
    upstream.trials["NCT99000011"] = trial("NCT99000011", "2025-06-02", "Zentravir vs placebo!")
    second = build(tmp_path)
    b = second.manifest.snapshot_id

    assert second.manifest.parent is not None
    assert second.manifest.parent.sha256 == first.manifest.sha256
    assert versions(second.path) == [
        ("nct:NCT99000011", "2025-01-15", 1, a, a, "carried"),
        ("nct:NCT99000011", "2025-06-02", 2, b, b, "harvest"),
        ("pmid:99000011", "1", 1, a, a, "carried"),
        ("pmid:99000011", "2", 2, b, b, "harvest"),
        ("pmid:99000012", "1", 1, a, b, "harvest"),
    ]
    texts = rows(
        second.path,
        "SELECT version, text, coalesce(folded, text) FROM passages "
        "WHERE record_id = 'pmid:99000011' "
        "AND path = 'abstract.1' ORDER BY version",
    )
    assert texts == [
        ("1", "Zentravir was given once daily.", "Zentravir was given once daily."),
        ("2", "Zentravir was given twice daily.", "Zentravir was given twice daily."),
    ]
    state = rows(second.path, "SELECT record_id, current_version, withdrawn FROM record_state")
    assert sorted(state) == [
        ("nct:NCT99000011", "2025-06-02", False),
        ("pmid:99000011", "2", False),
        ("pmid:99000012", "1", False),
    ]
    # the parent is untouched and still verifies
    assert versions(first.path) == [
        ("nct:NCT99000011", "2025-01-15", 1, a, a, "harvest"),
        ("pmid:99000011", "1", 1, a, a, "harvest"),
        ("pmid:99000012", "1", 1, a, a, "harvest"),
    ]
    verify_snapshot(first.path, TRUST)


def test_a_record_gone_upstream_is_marked_withdrawn_and_its_versions_remain(
    tmp_path: Path, upstream: Upstream
) -> None:
    upstream.articles = {
        "99000011": article("99000011", "Kept."),
        "99000012": article("99000012", "Will disappear."),
    }
    first = build(tmp_path)
    del upstream.articles["99000012"]
    second = build(tmp_path)
    b = second.manifest.snapshot_id

    assert second.manifest.withdrawn == 1
    state = rows(
        second.path,
        "SELECT current_version, withdrawn, withdrawn_since FROM record_state "
        "WHERE record_id = 'pmid:99000012'",
    )
    assert state == [("1", True, b)]
    kept = rows(second.path, "SELECT count(*) FROM passages WHERE record_id = 'pmid:99000012'")
    assert kept == [(2,)]
    del first

    # a third build without it keeps it withdrawn since the second; its return reinstates it
    third = build(tmp_path)
    assert rows(
        third.path,
        "SELECT withdrawn, withdrawn_since FROM record_state WHERE record_id = 'pmid:99000012'",
    ) == [(True, b)]
    assert third.manifest.withdrawn == 0
    upstream.articles["99000012"] = article("99000012", "Will disappear.")
    fourth = build(tmp_path)
    assert rows(
        fourth.path,
        "SELECT current_version, withdrawn FROM record_state WHERE record_id = 'pmid:99000012'",
    ) == [("1", False)]


def test_a_record_that_only_fell_out_of_a_query_is_rechecked_not_withdrawn(
    tmp_path: Path, upstream: Upstream
) -> None:
    upstream.articles = {
        p: article(p, f"Abstract {p}.") for p in ("99000011", "99000012", "99000021")
    }
    upstream.search = ["99000021"]
    build(tmp_path)
    upstream.search = []  # no longer in the top results, still in PubMed
    upstream.fetched.clear()
    second = build(tmp_path)
    assert ["99000021"] in upstream.fetched  # re-checked by id
    assert rows(
        second.path,
        "SELECT withdrawn, current_version FROM record_state WHERE record_id = 'pmid:99000021'",
    ) == [(False, "1")]
    assert second.manifest.withdrawn == 0


def test_a_failed_source_is_recorded_and_withdraws_nothing(
    tmp_path: Path, upstream: Upstream
) -> None:
    upstream.articles = {"99000011": article("99000011", "A.")}
    upstream.trials = {"NCT99000011": trial("NCT99000011", "2025-01-15", "S.")}
    build(tmp_path)
    upstream.fail_trials = True
    second = build(tmp_path)
    m = second.manifest
    assert m.sources["clinicaltrials"].status == "failed"
    assert m.sources["clinicaltrials"].failed_requests == 2  # the fetch and the re-check
    assert m.sources["pubmed"].status == "ok"
    assert [f.step for f in m.failed_requests] == ["fetch", "fetch"]
    assert m.failed_requests[0].error == "GET clinicaltrials.gov/api/v2/studies failed: HTTP 503"
    assert m.withdrawn == 0
    assert rows(
        second.path,
        "SELECT status, failed_requests FROM sources WHERE source = 'clinicaltrials'",
    ) == [("failed", 2)]
    assert rows(
        second.path,
        "SELECT withdrawn, current_version FROM record_state WHERE record_id = 'nct:NCT99000011'",
    ) == [(False, "2025-01-15")]
    assert rows(second.path, "SELECT status FROM sources WHERE source = 'openfda'") == [
        ("not_harvested",)
    ]


def test_strict_aborts_on_the_first_failure_and_leaves_nothing_visible(
    tmp_path: Path, upstream: Upstream
) -> None:
    upstream.articles = {"99000011": article("99000011", "A.")}
    upstream.fail_trials = True
    with pytest.raises(TransientHarvestError):
        build(tmp_path, strict=True)
    assert snapshots_in(tmp_path / "lin") == []
    assert sorted(p.name for p in (tmp_path / "lin").iterdir()) == [".build-lock"]


def test_a_tampered_parent_is_refused(tmp_path: Path, upstream: Upstream) -> None:
    upstream.articles = {"99000011": article("99000011", "A.")}
    first = build(tmp_path)
    with first.path.open("r+b") as handle:
        handle.seek(first.path.stat().st_size // 2)
        byte = handle.read(1)
        handle.seek(-1, 1)
        handle.write(bytes([byte[0] ^ 0xFF]))
    with pytest.raises(SnapshotError) as caught:
        build(tmp_path)
    assert str(caught.value) == (
        f"parent snapshot {first.path} failed its digest check: the file's sha256 is "
        f"{sha256_file(first.path)}, its manifest says {first.manifest.sha256}"
    )
