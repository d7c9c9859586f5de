"""The SQL half of ingesting a record batch: the staged files into the snapshot's tables.

Kept apart from :mod:`pipeline.snapshot.ingest` (the Python half) so that the writer process
(:mod:`pipeline.snapshot.writer`), which receives :func:`apply_batch` by name, imports only
DuckDB and the store — not the record models and parsers.
"""

from __future__ import annotations

from dataclasses import dataclass

import duckdb

from pipeline.snapshot.index import index_batch
from pipeline.snapshot.lineage import discard_versions, touch_versions
from pipeline.snapshot.store import Staged


@dataclass
class StagedBatch:
    """The staged files of one batch, in the order :func:`apply_batch` applies them."""

    discarded: Staged | None = None  # keys of provisional versions replaced (ingest.py)
    records: Staged | None = None
    versions: Staged | None = None
    passages: Staged | None = None
    touched: Staged | None = None
    licences: Staged | None = None  # known licences of existing versions seen again
    annotations: Staged | None = None
    relations: Staged | None = None
    seen: Staged | None = None


def apply_batch(con: duckdb.DuckDBPyConnection, batch: StagedBatch, snapshot_id: str) -> None:
    """Write one staged batch: the provisional versions it replaces out, then versions,
    passages and their search index, touches, annotations, relations, and the records seen
    (module-level: a writer process receives it by name)."""
    if batch.discarded is not None:
        discard_versions(con, batch.discarded)
    if batch.records is not None:
        batch.records.insert(con, "records")
    if batch.versions is not None:
        batch.versions.insert(con, "record_versions")
    if batch.passages is not None:
        source = batch.passages.source
        con.execute(f"CREATE OR REPLACE TEMP TABLE batch_docs AS SELECT * FROM {source}")  # noqa: S608
        con.execute(
            "INSERT INTO passages SELECT record_id, version, path, seq, section, text, folded "
            "FROM batch_docs"
        )
        index_batch(con, "batch_docs")
        con.execute("DROP TABLE batch_docs")
        batch.passages.done()
    if batch.touched is not None:
        touch_versions(con, batch.touched, snapshot_id)
    if batch.licences is not None:
        # The licence is not part of a version's content hash (pipeline.records), so a harvest
        # that sees an unchanged version again records what the source now says about its
        # reuse: a row carried from a parent written before migration 5 reads 'unknown' until
        # then. A harvest that reads no licence ('unknown') never overwrites a known one.
        con.execute(
            "UPDATE records SET licence = t.licence, licence_raw = t.licence_raw "  # noqa: S608
            f"FROM {batch.licences.source} AS t "
            "WHERE records.record_id = t.record_id AND records.version = t.version"
        )
        batch.licences.done()
    if batch.annotations is not None:
        # A version keeps the annotations it was first stored with (they are not part of
        # its content hash, so a later harvest may only fill them in).
        con.execute(
            f"INSERT INTO annotations SELECT * FROM {batch.annotations.source} AS t "  # noqa: S608
            "WHERE NOT EXISTS (SELECT 1 FROM annotations a "
            "WHERE a.record_id = t.record_id AND a.version = t.version)"
        )
        batch.annotations.done()
    if batch.relations is not None:
        con.execute(
            f"INSERT INTO relations SELECT * FROM {batch.relations.source} AS t "  # noqa: S608
            "WHERE NOT EXISTS (SELECT 1 FROM relations r WHERE r.record_id = t.record_id "
            "AND r.kind = t.kind AND r.target = t.target AND r.source = t.source)"
        )
        batch.relations.done()
    if batch.seen is not None:
        batch.seen.insert(con, "seen")
