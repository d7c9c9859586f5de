"""Turn harvested :class:`~pipeline.records.Record` batches into snapshot rows.

One :class:`Ingest` per build. Each batch costs a handful of SQL statements whatever its
size: one look-up of the versions the lineage knows, one staged insert per table.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

import duckdb

from pipeline.records import Record
from pipeline.snapshot.index import index_batch, next_docid
from pipeline.snapshot.lineage import Decision, decide, known_versions, touch_versions
from pipeline.snapshot.store import BatchWriter


@dataclass
class SourceCounts:
    """What one source contributed to this build."""

    records: int = 0  # records seen in this harvest
    passages: int = 0  # passages of the versions seen
    new_versions: int = 0  # versions written for the first time
    duplicates: int = 0  # records that arrived twice (the first one wins)


@dataclass
class IngestStats:
    by_source: dict[str, SourceCounts] = field(default_factory=dict)
    warnings: list[str] = field(default_factory=list)

    def of(self, source: str) -> SourceCounts:
        return self.by_source.setdefault(source, SourceCounts())


def _json(value: Any) -> str:
    return json.dumps(value, ensure_ascii=False, sort_keys=True, separators=(",", ":"))


def record_row(record: Record, version: str, content_hash: str) -> tuple[Any, ...]:
    """A ``records`` row for one version of ``record``."""
    return (
        record.record_id,
        version,
        record.source,
        content_hash,
        record.version_date,
        record.title,
        record.doi,
        record.pmid,
        record.pmcid,
        record.year,
        record.journal,
        _json(record.authors),
        _json(record.publication_types),
        record.content_type,
        record.status,
        record.flags.retracted,
        record.flags.expression_of_concern,
        record.flags.preprint,
        _json(record.metadata),
    )


class Ingest:
    """Accepts record batches during a harvest and writes them with their lineage."""

    def __init__(
        self,
        con: duckdb.DuckDBPyConnection,
        writer: BatchWriter,
        snapshot_id: str,
        fold: Callable[[str], str],
    ) -> None:
        self.con = con
        self.writer = writer
        self.snapshot_id = snapshot_id
        self.fold = fold
        self.stats = IngestStats()
        self._docid = next_docid(con)

    def add(self, source: str, records: Sequence[Record]) -> None:
        """Write one batch: new versions in full, reused versions only touched."""
        unique: dict[str, tuple[Record, str]] = {}
        counts = self.stats.of(source)
        for record in records:
            if record.record_id in unique:
                counts.duplicates += 1
                continue
            unique[record.record_id] = (record, record.content_hash())
        known, seen = known_versions(self.con, unique)
        decisions: list[tuple[Record, str, Decision]] = []
        for rid, (record, content_hash) in unique.items():
            if rid in seen:
                counts.duplicates += 1
                continue
            decision = decide(rid, record.version, content_hash, known.get(rid, ()))
            decisions.append((record, content_hash, decision))
        if decisions:
            self._write(decisions, counts)

    def _write(self, decisions: list[tuple[Record, str, Decision]], counts: SourceCounts) -> None:
        sid = self.snapshot_id
        new = [(r, h, d) for r, h, d in decisions if d.new]
        self.writer.insert("records", (record_row(r, d.version, h) for r, h, d in new))
        self.writer.insert(
            "record_versions",
            ((d.record_id, d.version, d.seq, h, sid, sid, "harvest") for _, h, d in new),
        )
        self._insert_passages(new)
        touch_versions(
            self.con,
            self.writer,
            [(d.record_id, d.version) for _, _, d in decisions if not d.new],
            sid,
        )
        self._insert_annotations(decisions)
        self._insert_relations(decisions)
        self.writer.insert(
            "seen", ((d.record_id, r.source, d.version) for r, _, d in decisions), kind="seen"
        )
        counts.records += len(decisions)
        counts.new_versions += len(new)
        counts.passages += sum(len({p.path for p in r.passages}) for r, _, _ in decisions)

    def _insert_passages(self, new: list[tuple[Record, str, Decision]]) -> None:
        """Insert the passages of new versions and index them for search (one staged file)."""
        staged = self.writer.stage("passages_docs", self._passage_rows(new))
        if staged is None:
            return
        con = self.con
        con.execute(f"CREATE OR REPLACE TEMP TABLE batch_docs AS SELECT * FROM {staged}")  # noqa: S608
        con.execute(
            "INSERT INTO passages SELECT record_id, version, path, seq, section, text, "
            "coalesce(folded, text) FROM batch_docs"
        )
        index_batch(con, "batch_docs")
        con.execute("DROP TABLE batch_docs")
        self.writer.discard()

    def _passage_rows(self, new: list[tuple[Record, str, Decision]]) -> list[tuple[Any, ...]]:
        rows: list[tuple[Any, ...]] = []
        fold = self.fold
        # the folded text is staged only where it differs from the text (see store._SELECT)
        for record, _, decision in new:
            paths: set[str] = set()
            for seq, passage in enumerate(record.passages, start=1):
                if passage.path in paths:
                    self.stats.warnings.append(
                        f"{record.record_id}: duplicate passage path {passage.path!r} "
                        "(the first one is kept)"
                    )
                    continue
                paths.add(passage.path)
                folded = fold(passage.text)
                self._docid += 1
                rows.append(
                    (
                        self._docid - 1,
                        record.record_id,
                        decision.version,
                        passage.path,
                        seq,
                        passage.section,
                        passage.text,
                        None if folded == passage.text else folded,
                    )
                )
        return rows

    def _insert_annotations(self, decisions: list[tuple[Record, str, Decision]]) -> None:
        rows = (
            (d.record_id, d.version, a.path, a.start, a.end, a.text, a.type, a.identifier)
            for r, _, d in decisions
            for a in r.annotations
        )
        staged = self.writer.stage("annotations", rows)
        if staged is None:
            return
        # A version keeps the annotations it was first stored with (they are not part of
        # its content hash, so a later harvest may only fill them in).
        self.con.execute(
            f"INSERT INTO annotations SELECT * FROM {staged} AS t WHERE NOT EXISTS "  # noqa: S608
            "(SELECT 1 FROM annotations a WHERE a.record_id = t.record_id "
            "AND a.version = t.version)"
        )
        self.writer.discard()

    def _insert_relations(self, decisions: list[tuple[Record, str, Decision]]) -> None:
        rows: dict[tuple[str, str, str, str], tuple[Any, ...]] = {}
        for record, _, decision in decisions:
            for rel in record.relations:
                key = (decision.record_id, rel.kind, rel.target, rel.source)
                rows.setdefault(key, (*key, rel.detail, rel.date, self.snapshot_id))
        staged = self.writer.stage("relations", rows.values())
        if staged is None:
            return
        self.con.execute(
            f"INSERT INTO relations SELECT * FROM {staged} AS t WHERE NOT EXISTS "  # noqa: S608
            "(SELECT 1 FROM relations r WHERE r.record_id = t.record_id AND r.kind = t.kind "
            "AND r.target = t.target AND r.source = t.source)"
        )
        self.writer.discard()
