"""The look-ups by record id: the same values whatever the ids hold, however many there are,
whether the snapshot has its ``record_id`` indexes or was written before builds made them.

A few ids are written into the statement as literals (quotes doubled) and the cited paths
picked in Python; more than ``LITERAL_IDS``, or an id holding a control character, travel as
a parameter and the table is joined with the keys (``audit/duckdb_corpus.py``)."""

from __future__ import annotations

from pathlib import Path

import duckdb
import pytest

from audit import duckdb_corpus
from audit.corpus import InMemoryCorpus, PassageKey, PathRef, StoredAnnotation, StoredRelation
from audit.duckdb_corpus import DuckDBCorpus
from pipeline.snapshot.store import RECORD_ID_INDEXED, index_record_ids
from tests.audit.fixture_scope import per_module
from tests.audit.planted import write_snapshot

AWKWARD = (
    "pmid:99000001",
    "doi:10.5555/o'brien",  # a quote, doubled in the literal
    "doi:10.5555/''); DROP TABLE passages; --",
    "doi:10.5555/back\\slash%_{ids}",  # no escape but the quote; the template's own marker
    "doi:10.5555/zentravir-\u00e9tude-\u4e2d\u6587-\U0001f9ea",
    "doi:10.5555/tab\there",  # a control character: through the parameter
)
ABSENT = ("pmid:99000999", "doi:10.5555/o'absent", "doi:10.5555/\u00e9-absent")


def _memory() -> InMemoryCorpus:
    corpus = InMemoryCorpus(sources={"pubmed": "ok", "crossref": "partial"})
    for n, rid in enumerate(AWKWARD):
        corpus.add_record(
            rid,
            "crossref" if rid.startswith("doi:") else "pubmed",
            {
                "1": {"abstract.1": f"First text of {rid}.", "abstract.2": "Shared words."},
                "2": {"abstract.1": f"Second text of {rid}, \u201cquoted\u201d."},
            },
            title=f"Title of {rid}",
            year=2020 + n,
            retracted=n % 2 == 0,
            relations=[StoredRelation("retraction_in", f"pmid:9900{n:04d}", "pubmed")],
        )
        corpus.add_annotations(
            PassageKey(rid, "2", "abstract.1"),
            [
                StoredAnnotation(0, 6, "Second", "Chemical", "MESH:D099999"),
                StoredAnnotation(7, 11, "text", "Disease", None),
            ],
        )
    return corpus


def _keys() -> tuple[list[str], list[PathRef], list[PassageKey]]:
    ids = [*AWKWARD, *ABSENT]
    refs = [PathRef(rid, path) for rid in ids for path in ("abstract.1", "abstract.2", "nope")]
    keys = [PassageKey(rid, v, p) for rid in ids for v in ("1", "2") for p in ("abstract.1", "x")]
    return ids, refs, keys


def _read(path: Path, ids: list[str], refs: list[PathRef], keys: list[PassageKey]) -> tuple:
    with DuckDBCorpus(path) as corpus:
        return (
            corpus.records(ids),
            corpus.passage_versions(refs),
            corpus.passages(keys),
            corpus.annotations(keys),
        )


@pytest.fixture(scope=per_module, params=["indexed", "written-before-indexes"])
def snapshot(request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory) -> Path:
    """Read only: written once per kind for the module."""
    folder = tmp_path_factory.mktemp(request.param)
    path = write_snapshot(_memory(), folder / "awkward.duckdb", seal=None)
    if request.param == "indexed":
        con = duckdb.connect(str(path))
        index_record_ids(con)
        con.close()
    return path


def test_awkward_and_absent_ids_read_as_the_in_memory_corpus_holds_them(snapshot: Path) -> None:
    memory = _memory()
    ids, refs, keys = _keys()
    records, versions, passages, annotations = _read(snapshot, ids, refs, keys)
    assert records == memory.records(ids)
    assert set(records) == set(AWKWARD)
    assert versions == memory.passage_versions(refs)
    assert len(versions) == 2 * len(AWKWARD)  # abstract.1 in two versions, abstract.2 in one
    assert passages == memory.passages(keys)
    assert len(passages) == 2 * len(AWKWARD)
    assert annotations == memory.annotations(keys)
    assert len(annotations) == len(AWKWARD)


def test_more_ids_than_written_as_literals_read_the_same_as_a_few(
    snapshot: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    ids, refs, keys = _keys()
    few = _read(snapshot, ids, refs, keys)
    monkeypatch.setattr(duckdb_corpus, "LITERAL_IDS", 1)  # every batch takes the other path
    assert _read(snapshot, ids, refs, keys) == few


def test_a_batch_of_many_ids_most_of_them_absent_finds_exactly_those_held(
    snapshot: Path,
) -> None:
    memory = _memory()
    ids = [*AWKWARD, *(f"pmid:{99100000 + n}" for n in range(duckdb_corpus.LITERAL_IDS + 50))]
    refs = [PathRef(rid, "abstract.1") for rid in ids]
    with DuckDBCorpus(snapshot) as corpus:
        assert corpus.records(ids) == memory.records(ids)
        assert corpus.passage_versions(refs) == memory.passage_versions(refs)


def test_ids_become_literals_with_their_quotes_doubled_and_controls_go_as_a_parameter() -> None:
    assert duckdb_corpus._literal(["doi:10.5555/o'brien", "pmid:1"]) in (
        "record_id IN ('doi:10.5555/o''brien', 'pmid:1')",
        "record_id IN ('pmid:1', 'doi:10.5555/o''brien')",
    )
    assert duckdb_corpus._literal(["pmid:1", "doi:10.5555/nul\x00"]) is None
    assert duckdb_corpus._literal(["pmid:1", "doi:10.5555/tab\t"]) is None
    assert duckdb_corpus._literal([f"pmid:{n}" for n in range(duckdb_corpus.LITERAL_IDS)])
    assert duckdb_corpus._literal(["x"] * (duckdb_corpus.LITERAL_IDS + 1)) is None


def test_indexing_record_ids_indexes_every_table_the_audit_reads_by_record_id_once(
    tmp_path: Path,
) -> None:
    path = write_snapshot(_memory(), tmp_path / "built.duckdb", seal=None)
    con = duckdb.connect(str(path))
    index_record_ids(con)
    index_record_ids(con)  # once written, written again is a no-op
    rows = con.execute("SELECT table_name, expressions FROM duckdb_indexes()").fetchall()
    con.close()
    assert sorted(rows) == sorted((t, "[record_id]") for t in RECORD_ID_INDEXED)


def test_the_passages_of_a_few_records_are_read_through_the_index(snapshot: Path) -> None:
    """What makes one answer cost what it cites: DuckDB turns the literal list into an index
    scan of an indexed snapshot (a DuckDB upgrade that stopped would fail here, not only in
    ``make bench``); a snapshot written before the indexes is scanned."""
    match = duckdb_corpus._literal(["pmid:99000001", "doi:10.5555/o'brien"])
    assert match is not None
    sql = duckdb_corpus._PASSAGES_SQL.replace("{ids}", match)
    con = duckdb.connect(str(snapshot), read_only=True)
    try:
        plan = con.execute(f"EXPLAIN ANALYZE {sql}").fetchall()[0][1]
        indexed = bool(con.execute("SELECT count(*) FROM duckdb_indexes()").fetchall()[0][0])
    finally:
        con.close()
    assert ("Type: Index Scan" in plan) is indexed
    assert ("Type: Sequential Scan" in plan) is not indexed
