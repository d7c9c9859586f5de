"""The DuckDB corpus at its edges: the schema versions it reads, what it says when it cannot
read, a record whose current version has no row, and the names it gives the snapshot."""

from __future__ import annotations

from pathlib import Path

import duckdb
import pytest

from audit.corpus import StoredRecord
from audit.duckdb_corpus import READABLE_SCHEMA_VERSION, DuckDBCorpus
from audit.errors import CorpusError
from tests.audit.test_duckdb_corpus import _write_snapshot

ODD = (
    "DELETE FROM meta WHERE key = 'name';"
    "INSERT INTO record_state VALUES ('pmid:5', 'pubmed', 'zz', TRUE, 'tiny-0');"
    "INSERT INTO records (record_id, version, source, content_hash, title) VALUES"
    " ('pmid:5', 'b', 'pubmed', 'h', 'B'), ('pmid:5', 'a', 'pubmed', 'h', 'A');"
    "INSERT INTO record_versions VALUES ('pmid:5', 'b', 1, 'h', 'x', 'x', 'harvest')"
)


def versioned(path: Path, version: str) -> Path:
    """The tiny snapshot with ``version`` as its schema version."""
    _write_snapshot(path)
    con = duckdb.connect(str(path))
    try:
        con.execute("UPDATE meta SET value = ? WHERE key = 'schema_version'", [version])
    finally:
        con.close()
    return path


@pytest.fixture
def odd(tmp_path: Path) -> Path:
    path = tmp_path / "odd.duckdb"
    _write_snapshot(path, extra_sql=ODD)
    return path


def test_a_record_whose_current_version_has_no_row_has_no_fields_and_an_unknown_licence(
    odd: Path,
) -> None:
    with DuckDBCorpus(odd) as corpus:
        assert corpus.records(["pmid:5", "pmid:404"]) == {
            "pmid:5": StoredRecord(
                record_id="pmid:5",
                source="pubmed",
                current_version="zz",
                versions=("a", "b"),  # a version without a lineage row first
                withdrawn=True,
                withdrawn_since="tiny-0",
                title=None,
                status=None,
                doi=None,
                pmid=None,
                pmcid=None,
                year=None,
                journal=None,
                retracted=None,
                expression_of_concern=None,
                preprint=None,
                relations=(),
                refreshed=False,
                last_seen=None,
                licence="unknown",
            )
        }


def test_empty_look_ups_read_nothing_and_absent_ids_find_nothing(odd: Path) -> None:
    with DuckDBCorpus(odd) as corpus:
        assert corpus.records([]) == {}
        assert corpus.records(["pmid:404"]) == {}
        assert (corpus.passages([]), corpus.passage_versions([]), corpus.annotations([])) == (
            {},
            {},
            {},
        )


def test_a_snapshot_without_a_name_is_named_by_its_file(odd: Path) -> None:
    with DuckDBCorpus(odd, sha256="f" * 64) as corpus:
        identity = corpus.identity()
        assert (identity.name, identity.path, identity.sha256) == ("odd", str(odd), "f" * 64)
        assert (identity.snapshot_id, identity.created_at) == ("tiny-1", "2025-06-02T00:00:00Z")
        assert corpus.harvest_id == "tiny-1"
        resolver = corpus.reference_resolver()
        try:
            assert resolver.label == "odd"
        finally:
            resolver.close()


def test_a_named_snapshot_names_its_reference_resolver(tmp_path: Path) -> None:
    path = tmp_path / "file.duckdb"
    _write_snapshot(path)
    with DuckDBCorpus(path) as corpus:
        resolver = corpus.reference_resolver()
        try:
            assert resolver.label == "tiny"
        finally:
            resolver.close()


@pytest.mark.parametrize("version", [str(READABLE_SCHEMA_VERSION), "6b", ""])
def test_the_newest_readable_schema_and_unreadable_version_texts_are_read(
    tmp_path: Path, version: str
) -> None:
    with DuckDBCorpus(versioned(tmp_path / "v.duckdb", version)) as corpus:
        assert corpus.identity().name == "tiny"


def test_a_schema_one_newer_is_refused_with_advice(tmp_path: Path) -> None:
    newer = READABLE_SCHEMA_VERSION + 1
    path = versioned(tmp_path / "v.duckdb", str(newer))
    with pytest.raises(CorpusError) as raised:
        DuckDBCorpus(path)
    assert (raised.value.message, raised.value.advice) == (
        f"snapshot {path} has schema version {newer}; this citeseal reads up to "
        f"{READABLE_SCHEMA_VERSION}",
        "upgrade citeseal",
    )


def test_a_missing_snapshot_says_how_to_build_one(tmp_path: Path) -> None:
    with pytest.raises(CorpusError) as raised:
        DuckDBCorpus(tmp_path / "none.duckdb")
    assert raised.value.advice == "build one with: citeseal snapshot build snapshots/demo.toml"


def test_a_read_that_fails_is_one_line_naming_the_snapshot(odd: Path) -> None:
    corpus = DuckDBCorpus(odd)
    corpus.close()
    with pytest.raises(CorpusError) as raised:
        corpus.records(["pmid:5"])
    assert raised.value.message == (
        f"cannot read snapshot {odd}: Connection Error: Connection already closed!"
    )
