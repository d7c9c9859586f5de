"""The DuckDB corpus reads the snapshot tables as the in-memory corpus holds the same data."""

from __future__ import annotations

import hashlib
import threading
from collections.abc import Mapping
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import duckdb
import pytest

from audit.corpus import InMemoryCorpus, PassageKey, PathRef, StoredRelation
from audit.duckdb_corpus import READABLE_SCHEMA_VERSION, DuckDBCorpus
from audit.engine import CitationInput, judge_citations
from audit.errors import CorpusError
from audit.folding import fold
from pipeline.snapshot.schema import MIGRATIONS
from tests.audit.planted import KEYRING, OTHER, SETID, h, make_corpus, write_snapshot

VERSIONS = {
    "nct:NCT99000001": {
        "2025-01-15": {
            "trial.brief_summary.1": "Zentravir 20 mg daily.",
            "trial.arms.2": "Placebo.",
        },
        "2025-06-02": {"trial.brief_summary.1": "Zentravir 10 mg daily."},
    },
    "pmid:99000002": {"1": {"abstract.1": "Four children developed Farrow syndrome."}},
}


def _write_snapshot(path: Path, *, extra_sql: str = "") -> None:
    con = duckdb.connect(str(path))
    for migration in MIGRATIONS:
        con.execute(migration.sql)
    con.execute(
        "INSERT INTO meta VALUES ('name', 'tiny'), ('snapshot_id', 'tiny-1'), "
        "('created_at', '2025-06-02T00:00:00Z'), ('schema_version', '1')"
    )
    con.execute("INSERT INTO sources (source, status) VALUES ('clinicaltrials', 'ok')")
    con.execute("INSERT INTO sources (source, status) VALUES ('pubmed', 'partial')")
    sources = {"nct:NCT99000001": "clinicaltrials", "pmid:99000002": "pubmed"}
    for record_id, versions in VERSIONS.items():
        # insert the newest version first: order must come from record_versions.seq
        for seq, version in reversed(list(enumerate(versions, start=1))):
            con.execute(
                "INSERT INTO records (record_id, version, source, content_hash, title, retracted) "
                "VALUES (?, ?, ?, ?, ?, ?)",
                [record_id, version, sources[record_id], "h", f"title {version}", None],
            )
            con.execute(
                "INSERT INTO record_versions VALUES (?, ?, ?, 'h', 'tiny-1', 'tiny-1', 'harvest')",
                [record_id, version, seq],
            )
            for n, (p, text) in enumerate(versions[version].items()):
                con.execute(
                    "INSERT INTO passages VALUES (?, ?, ?, ?, ?, ?, ?)",
                    [record_id, version, p, n, p.split(".")[0], text, fold(text)],
                )
        con.execute(
            "INSERT INTO record_state VALUES (?, ?, ?, FALSE, NULL)",
            [record_id, sources[record_id], list(versions)[-1]],
        )
    con.execute("UPDATE records SET retracted = TRUE WHERE record_id = 'pmid:99000002'")
    con.execute(
        "INSERT INTO relations VALUES "
        "('pmid:99000002', 'retraction_in', 'pmid:99000003', 'pubmed', NULL, '2024-01-01', NULL)"
    )
    if extra_sql:
        con.execute(extra_sql)
    con.close()


@pytest.fixture
def snapshot(tmp_path: Path) -> Path:
    path = tmp_path / "tiny.duckdb"
    _write_snapshot(path)
    return path


def _memory() -> InMemoryCorpus:
    corpus = InMemoryCorpus(sources={"clinicaltrials": "ok", "pubmed": "partial"})
    corpus.add_record(
        "nct:NCT99000001",
        "clinicaltrials",
        VERSIONS["nct:NCT99000001"],
        title="title 2025-06-02",
    )
    corpus.add_record(
        "pmid:99000002",
        "pubmed",
        VERSIONS["pmid:99000002"],
        title="title 1",
        retracted=True,
        relations=[StoredRelation("retraction_in", "pmid:99000003", "pubmed", None, "2024-01-01")],
    )
    return corpus


def test_records_match_the_in_memory_corpus(snapshot: Path) -> None:
    ids = ["nct:NCT99000001", "pmid:99000002", "pmid:99000404"]
    with DuckDBCorpus(snapshot) as corpus:
        assert corpus.records(ids) == _memory().records(ids)
        assert corpus.source_status() == {"clinicaltrials": "ok", "pubmed": "partial"}


def test_passages_and_passage_versions_match(snapshot: Path) -> None:
    keys = [
        PassageKey("nct:NCT99000001", "2025-01-15", "trial.arms.2"),
        PassageKey("nct:NCT99000001", "2025-06-02", "trial.arms.2"),
        PassageKey("pmid:99000002", "1", "abstract.1"),
    ]
    refs = [
        PathRef("nct:NCT99000001", "trial.brief_summary.1"),
        PathRef("nct:NCT99000001", "trial.arms.2"),
        PathRef("pmid:99000404", "abstract.1"),
    ]
    memory = _memory()
    with DuckDBCorpus(snapshot) as corpus:
        assert corpus.passages(keys) == memory.passages(keys)
        versions = corpus.passage_versions(refs)
        assert versions == memory.passage_versions(refs)
        assert [p.version for p in versions[refs[0]]] == ["2025-01-15", "2025-06-02"]
        assert corpus.passages([]) == {} and corpus.records([]) == {}


def test_identity_hashes_the_file(snapshot: Path) -> None:
    with DuckDBCorpus(snapshot) as corpus:
        identity = corpus.identity()
    assert identity.name == "tiny"
    assert identity.snapshot_id == "tiny-1"
    assert identity.created_at == "2025-06-02T00:00:00Z"
    assert identity.sha256 == hashlib.sha256(snapshot.read_bytes()).hexdigest()


def test_keys_with_separator_characters_are_simply_absent(snapshot: Path) -> None:
    with DuckDBCorpus(snapshot) as corpus:
        assert corpus.records(["pmid:99000002\x1e", "x\x1fy"]) == {}


def test_a_corpus_over_a_given_cursor_reads_like_one_it_opened_and_closes_it(
    snapshot: Path,
) -> None:
    ids = ["nct:NCT99000001", "pmid:99000002"]
    base = duckdb.connect(str(snapshot), read_only=True)
    try:
        cursor = base.cursor()
        with DuckDBCorpus(snapshot, connection=cursor) as corpus:
            assert corpus.records(ids) == _memory().records(ids)
        with pytest.raises(duckdb.ConnectionException):
            cursor.execute("SELECT 1")
        assert base.execute("SELECT 1").fetchone() == (1,)  # the base stays open
    finally:
        base.close()


def test_missing_file(tmp_path: Path) -> None:
    with pytest.raises(CorpusError) as raised:
        DuckDBCorpus(tmp_path / "nope.duckdb")
    assert raised.value.message == f"snapshot {tmp_path / 'nope.duckdb'} does not exist"


def test_not_a_duckdb_file(tmp_path: Path) -> None:
    path = tmp_path / "answer.md"
    path.write_text("# not a database\n", encoding="utf-8")
    with pytest.raises(CorpusError) as raised:
        DuckDBCorpus(path)
    assert raised.value.message.startswith(f"cannot open snapshot {path}: ")
    assert "\n" not in raised.value.message


def test_duckdb_file_without_the_tables(tmp_path: Path) -> None:
    path = tmp_path / "other.duckdb"
    duckdb.connect(str(path)).close()
    with pytest.raises(CorpusError) as raised:
        DuckDBCorpus(path)
    assert raised.value.message == f"{path} is not a citeseal snapshot (missing table 'meta')"


def test_newer_schema_is_refused(tmp_path: Path) -> None:
    path = tmp_path / "future.duckdb"
    _write_snapshot(path, extra_sql="UPDATE meta SET value = '99' WHERE key = 'schema_version'")
    with pytest.raises(CorpusError) as raised:
        DuckDBCorpus(path)
    assert raised.value.message == (
        f"snapshot {path} has schema version 99; this citeseal reads up to "
        f"{READABLE_SCHEMA_VERSION}"
    )


PARITY_CASES = [
    ("pmid:99000001-abstract", None),
    (h("pmid:99000001/abstract.3", OTHER), None),
    (h("pmid:99000001/abstract.3"), "312 children were diagnosed"),
    (h("pmid:99000001/abstract.4"), "strongly increases"),
    (h("pmid:99000001/abstract.9"), None),
    (h("pmid:99000999/abstract.1"), None),
    (h("pmid:99000002/abstract.1"), None),
    (h("pmid:99000004/abstract.1"), None),
    (h("pmid:99000007/abstract.1"), None),
    (h("pmid:99000010/abstract.1"), None),
    (h("pmid:99000020/abstract.1"), "40 patients"),
    (h("pmid:99000020/abstract.2"), None),
    (h("ppr:PPR990001@1/abstract.1"), None),
    (h("nct:NCT99000001@2025-01-15/trial.brief_summary.1"), "20 mg daily"),
    (h("nct:NCT99000001@2025-01-15/trial.brief_summary.1"), "10 mg daily"),
    (h("nct:NCT99000001@2025-01-15/trial.arms.2"), None),
    (h("nct:NCT99000001@2025-06-02/trial.arms.2"), None),
    (h(f"setid:{SETID}@3/label.boxed_warning.1"), None),
    (h(f"setid:{SETID}@4/label.boxed_warning.1"), "severe liver injury"),
]


@pytest.mark.parametrize("sources", [{}, {"openfda": "failed", "pubmed": "partial"}])
def test_every_rule_decides_the_same_on_a_snapshot_file(
    tmp_path: Path, sources: dict[str, str]
) -> None:
    memory = make_corpus(**sources)
    path = write_snapshot(memory, tmp_path / "planted.duckdb")
    citations = [CitationInput.from_text(handle, quote) for handle, quote in PARITY_CASES]
    with DuckDBCorpus(path) as corpus:
        on_file = judge_citations(citations, corpus, KEYRING)
    in_memory = judge_citations(citations, memory, KEYRING)
    assert on_file == in_memory
    assert {r.verdict for r in on_file} == {
        "malformed",
        "forged",
        "unavailable",
        "withdrawn",
        "quote_mismatch",
        "ok",
    }


def _refreshed(path: Path) -> dict[str, tuple[bool, str | None]]:
    with DuckDBCorpus(path) as corpus:
        found = corpus.records(["nct:NCT99000001", "pmid:99000002"])
    return {rid: (r.refreshed, r.last_seen) for rid, r in found.items()}


@pytest.mark.parametrize(
    ("sql", "expected"),
    [
        ("", {"nct:NCT99000001": (True, None), "pmid:99000002": (True, None)}),
        (
            # pmid:99000002's refresh failed: its current version was last seen by the parent
            "UPDATE record_versions SET last_seen = 'tiny-0' WHERE record_id = 'pmid:99000002'",
            {"nct:NCT99000001": (True, None), "pmid:99000002": (False, "tiny-0")},
        ),
        (
            # only the current version counts: an older one the parent saw last does not
            "UPDATE record_versions SET last_seen = 'tiny-0' WHERE version = '2025-01-15'",
            {"nct:NCT99000001": (True, None), "pmid:99000002": (True, None)},
        ),
        (
            # a backfill child: the harvest it holds is its parent's
            "UPDATE meta SET value = 'tiny-2' WHERE key = 'snapshot_id'; "
            "INSERT INTO meta VALUES ('mode', 'backfill'), ('parent_snapshot_id', 'tiny-1')",
            {"nct:NCT99000001": (True, None), "pmid:99000002": (True, None)},
        ),
        (
            "UPDATE meta SET value = 'tiny-2' WHERE key = 'snapshot_id'",
            {"nct:NCT99000001": (False, "tiny-1"), "pmid:99000002": (False, "tiny-1")},
        ),
        (
            # no harvest id: nothing reads as refreshed
            "DELETE FROM meta WHERE key = 'snapshot_id'",
            {"nct:NCT99000001": (False, "tiny-1"), "pmid:99000002": (False, "tiny-1")},
        ),
    ],
    ids=["all-seen", "refresh-failed", "older-version", "backfill-child", "not-seen", "no-id"],
)
def test_a_record_is_refreshed_when_the_harvest_it_holds_saw_its_current_version(
    tmp_path: Path, sql: str, expected: dict[str, tuple[bool, str | None]]
) -> None:
    path = tmp_path / "tiny.duckdb"
    _write_snapshot(path, extra_sql=sql)
    assert _refreshed(path) == expected


class _CountingConnection:
    """A connection that counts the statements run through it."""

    def __init__(self, con: duckdb.DuckDBPyConnection) -> None:
        self.con = con
        self.statements: list[str] = []

    def execute(self, sql: str, params: object = None) -> duckdb.DuckDBPyConnection:
        self.statements.append(sql)
        return self.con.execute(sql, params)

    def close(self) -> None:
        self.con.close()


def test_a_corpus_read_through_another_connection_reads_only_the_look_ups(
    tmp_path: Path,
) -> None:
    """A server's per-call corpus shares what the served corpus read once (shape, meta,
    source statuses, digest): only the answer's look-ups run through the call's cursor, and
    closing it leaves the served corpus open."""
    path = tmp_path / "tiny.duckdb"
    _write_snapshot(path)
    with DuckDBCorpus(path, sha256="ab" * 32) as served:
        base = duckdb.connect(str(path), read_only=True)
        counting = _CountingConnection(base.cursor())
        call = served.reading_through(counting)  # type: ignore[arg-type]
        assert call.identity() == served.identity()
        assert call.source_status() == {"clinicaltrials": "ok", "pubmed": "partial"}
        assert counting.statements == []
        records = call.records({"pmid:99000002"})
        assert records["pmid:99000002"].current_version == "1"
        assert len(counting.statements) == 4  # state, records, lineage, relations
        call.close()
        assert served.records({"pmid:99000002"}) == records
        base.close()


def test_corpora_read_through_from_many_threads_at_once_all_see_the_source_statuses(
    tmp_path: Path,
) -> None:
    """A server's calls make their corpora on worker threads at the same moment: the shared
    part is read once, under a lock, so no call sees the statuses half-read (a call once saw
    an empty table and flagged every record not_refreshed)."""
    path = tmp_path / "tiny.duckdb"
    _write_snapshot(path)
    base = duckdb.connect(str(path), read_only=True)
    with DuckDBCorpus(path, sha256="ab" * 32, connection=base.cursor()) as served:
        start = threading.Barrier(8)

        def call() -> Mapping[str, str]:
            cursor = base.cursor()
            start.wait()
            corpus = served.reading_through(cursor)
            try:
                return dict(corpus.source_status())
            finally:
                corpus.close()

        with ThreadPoolExecutor(8) as pool:
            seen = [f.result() for f in [pool.submit(call) for _ in range(8)]]
    base.close()
    assert seen == [{"clinicaltrials": "ok", "pubmed": "partial"}] * 8


def test_a_snapshot_from_before_licences_reads_every_licence_as_unknown(tmp_path: Path) -> None:
    path = tmp_path / "tiny.duckdb"
    _write_snapshot(
        path,
        extra_sql="UPDATE records SET licence = 'cc-by'; "
        "ALTER TABLE records DROP COLUMN licence; ALTER TABLE records DROP COLUMN licence_raw",
    )
    with DuckDBCorpus(path) as corpus:
        licences = {r.licence for r in corpus.records(list(VERSIONS)).values()}
    assert licences == {"unknown"}
    _write_snapshot(tmp_path / "now.duckdb", extra_sql="UPDATE records SET licence = 'cc-by'")
    with DuckDBCorpus(tmp_path / "now.duckdb") as corpus:
        assert {r.licence for r in corpus.records(list(VERSIONS)).values()} == {"cc-by"}
