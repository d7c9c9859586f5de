"""Turn harvested :class:`~pipeline.records.Record` batches into snapshot rows.

Each batch goes in two halves. :meth:`Ingest.prepare` is Python work: content hashes, the
version decisions (against the versions the lineage already holds, read through ``reader``),
folded text, index words, rows staged as files. It returns a
:class:`~pipeline.snapshot.apply.StagedBatch`, which
:func:`~pipeline.snapshot.apply.apply_batch` writes with SQL only — inserts, the search
index, the ``last_seen`` touches — so a build can run it in its writer process
(:class:`~pipeline.snapshot.writer.WriterProcess`) while the next batch is fetched and
parsed. Records met twice in one build are recognised in memory: the first one wins, so the
versions the lineage holds are exactly those carried from the parent (a build reads them
from the parent file itself, while the writer process fills the new one).

A record delivered *incomplete* (its enrichment failed, or its answer was suspicious) that
the lineage already holds is *held*: nothing of it is staged, so the snapshot keeps the
parent's state of it (version, flags, relations, withdrawn or not). An incomplete record new
to the lineage is written as it is (the harvest has made the flags it could not check
unknown), *provisionally*. A later complete delivery in the same build counts after all —
for a provisional record it replaces what was written
(:func:`~pipeline.snapshot.lineage.discard_versions`) — but only from the source that
delivered it first: another source's copy (the Europe PMC copy of a PubMed record) is another
rendering of the record, and taking it would make a version now and another one when the
first source's enrichment recovers.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Collection, Sequence
from dataclasses import dataclass, field
from typing import Any

import duckdb

from audit.folding import fold as audit_fold
from audit.licences import UNKNOWN
from pipeline.records import Record
from pipeline.snapshot.apply import StagedBatch, apply_batch
from pipeline.snapshot.index import ascii_words, next_docid
from pipeline.snapshot.lineage import (
    Decision,
    current_passages,
    decide,
    known_versions,
    lineage_controls,
    live_records,
    pmcid_carriers,
)
from pipeline.snapshot.store import BatchWriter


def _plain(text: str) -> bool:
    """Printable ASCII with single spaces: audit.folding.fold only strips it (no NFC change,
    no character fold, no whitespace run) — a cheap test that holds for most passages."""
    return text.isascii() and text.isprintable() and "  " not in text


@dataclass
class SourceCounts:
    """What one source contributed to this build."""

    records: int = 0  # records seen in this harvest
    passages: int = 0  # passages of the versions seen
    new_versions: int = 0  # versions written for the first time
    duplicates: int = 0  # records that arrived twice (one delivery is kept, module docstring)


@dataclass
class IngestStats:
    by_source: dict[str, SourceCounts] = field(default_factory=dict)
    warnings: list[str] = field(default_factory=list)

    def of(self, source: str) -> SourceCounts:
        return self.by_source.setdefault(source, SourceCounts())


@dataclass(frozen=True)
class Provisional:
    """A record new to the lineage, written from an incomplete delivery (module docstring)."""

    record_id: str
    origin: str  # the record's own source (its rendering)
    counted: str  # the source whose counts it is in
    version: str
    passages: int


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
        record.licence,
        record.licence_raw,
    )


def passage_rows(
    record: Record, version: str, fold: Callable[[str], str]
) -> tuple[list[tuple[Any, ...]], list[str]]:
    """The ``passages`` rows of one version of ``record`` — ``(record_id, version, path, seq,
    section, text, folded)``, ``folded`` None where it equals the text (schema 3) — and a
    warning for each passage left out because its path repeats an earlier one's (the first
    is kept). Pure: ``snapshot build`` and ``scale ingest`` (:mod:`pipeline.scale`) both
    write passages through it."""
    rows: list[tuple[Any, ...]] = []
    warnings: list[str] = []
    plain_ok = fold is audit_fold  # the fast path below is only proven for that fold
    paths: set[str] = set()
    for seq, passage in enumerate(record.passages, start=1):
        if passage.path in paths:
            warnings.append(
                f"{record.record_id}: duplicate passage path {passage.path!r} "
                "(the first one is kept)"
            )
            continue
        paths.add(passage.path)
        text = passage.text
        folded = text.strip() if plain_ok and _plain(text) else fold(text)
        rows.append(
            (
                record.record_id,
                version,
                passage.path,
                seq,
                passage.section,
                text,
                None if folded == text else folded,
            )
        )
    return rows, warnings


BATCH_PASSAGES = 10_000  # new passages per staged batch at most (one record may exceed it)
BATCH_TEXT = 8_000_000  # characters of new passage text per staged batch at most (ditto)


def _parts(
    decisions: list[tuple[Record, str, Decision]],
) -> list[list[tuple[Record, str, Decision]]]:
    """``decisions`` cut into runs whose new passages stay within the batch bounds."""
    parts: list[list[tuple[Record, str, Decision]]] = [[]]
    passages = text = 0
    for item in decisions:
        record, _, decision = item
        more = len(record.passages) if decision.new else 0
        chars = sum(len(p.text) for p in record.passages) if decision.new else 0
        if parts[-1] and (passages + more > BATCH_PASSAGES or text + chars > BATCH_TEXT):
            parts.append([])
            passages = text = 0
        parts[-1].append(item)
        passages += more
        text += chars
    return parts


class Ingest:
    """Accepts record batches during a harvest and stages them with their lineage.

    ``reader`` reads the versions the lineage holds (None: it holds none); ``first_docid`` is
    the first free search document id of the snapshot being written.
    """

    def __init__(
        self,
        reader: duckdb.DuckDBPyConnection | None,
        stager: BatchWriter,
        snapshot_id: str,
        fold: Callable[[str], str],
        *,
        first_docid: int,
    ) -> None:
        self.reader = reader
        self.stager = stager
        self.snapshot_id = snapshot_id
        self.fold = fold
        self.stats = IngestStats()
        self.con: duckdb.DuckDBPyConnection | None = None  # set by into(), used by add()
        self._seen: set[str] = set()
        self._docid = first_docid
        self.held: dict[str, str] = {}  # record id → its source, delivered incomplete (module doc)
        self._provisional: dict[str, Provisional] = {}

    @classmethod
    def into(
        cls,
        con: duckdb.DuckDBPyConnection,
        stager: BatchWriter,
        snapshot_id: str,
        fold: Callable[[str], str],
    ) -> Ingest:
        """An ingest reading from and (through :meth:`add`) writing to ``con`` itself."""
        ingest = cls(con.cursor(), stager, snapshot_id, fold, first_docid=next_docid(con))
        ingest.con = con
        return ingest

    def add(self, source: str, records: Sequence[Record]) -> None:
        """Prepare one batch and apply it to :attr:`con` at once (see :meth:`into`)."""
        assert self.con is not None, "add() needs an ingest made by Ingest.into()"
        for batch in self.prepare(source, records):
            apply_batch(self.con, batch, self.snapshot_id)

    # -- pipeline.harvest.LineageView: what the harvest asks of the lineage it refreshes ------
    def live(self, record_ids: Collection[str]) -> set[str]:
        """The ids among ``record_ids`` the lineage holds, not withdrawn (none without one)."""
        return live_records(self.reader, record_ids) if self.reader is not None else set()

    def controls(self, source: str, scheme: str, exclude: Collection[str], limit: int) -> list[str]:
        """Up to ``limit`` live ids of ``source`` and ``scheme`` the lineage holds, outside
        ``exclude`` (none without a lineage)."""
        if self.reader is None:
            return []
        return lineage_controls(self.reader, source, scheme, exclude, limit)

    def carrying_pmcids(self, source: str, pmcids: Collection[str]) -> set[str]:
        """The live records of ``source`` carrying one of ``pmcids`` (none without a lineage)."""
        return pmcid_carriers(self.reader, source, pmcids) if self.reader is not None else set()

    def emptied(self, records: Sequence[Record]) -> dict[str, str]:
        """Records that came back without a single passage where the lineage's current version
        has some (a suspicious answer): record id → what the lineage holds, in words."""
        empty = [r.record_id for r in records if not r.passages]
        if not empty or self.reader is None:
            return {}
        return {
            rid: f"version {version} holds {n} passage{'s' if n != 1 else ''}"
            for rid, (version, n) in current_passages(self.reader, empty).items()
            if n
        }

    def prepare(
        self, source: str, records: Sequence[Record], *, incomplete: Collection[str] = ()
    ) -> list[StagedBatch]:
        """The Python half of one batch of records; see :func:`apply_batch`.

        Records named in ``incomplete`` that the lineage holds are held (module docstring).
        Returns the staged batches in order: as many as it takes to keep each under
        :data:`BATCH_PASSAGES` passages and :data:`BATCH_TEXT` characters of new text, so the
        database work of one batch needs the same memory whatever the source (a thousand
        full-text articles hold a hundred times the text of a thousand abstracts).
        """
        counts = self.stats.of(source)
        unique: dict[str, tuple[Record, str]] = {}
        for record in records:
            rid = record.record_id
            if rid in unique or not self._takes(record, complete=rid not in incomplete):
                counts.duplicates += 1
                continue
            unique[rid] = (record, record.content_hash())
        if not unique:
            return []
        known = known_versions(self.reader, unique) if self.reader is not None else {}
        if incomplete:
            for rid in [r for r in unique if r in known and r in incomplete]:
                self.held.setdefault(rid, unique.pop(rid)[0].source)
            if not unique:
                return []
        self._seen.update(unique)
        if self.held:
            for rid in unique:
                self.held.pop(rid, None)  # seen completely after all
        decisions = [
            (record, content_hash, decide(rid, record.version, content_hash, known.get(rid, ())))
            for rid, (record, content_hash) in unique.items()
        ]
        replaced = self._provisionals(source, decisions, incomplete)
        new = [(r, h, d) for r, h, d in decisions if d.new]
        counts.records += len(decisions)
        counts.new_versions += len(new)
        counts.passages += sum(len({p.path for p in r.passages}) for r, _, _ in decisions)
        batches = [self._stage(part, [d for d in part if d[2].new]) for part in _parts(decisions)]
        if replaced:
            batches[0].discarded = self.stager.stage(
                "keys", ((p.record_id, p.version) for p in replaced)
            )
        return batches

    def _takes(self, record: Record, *, complete: bool) -> bool:
        """Whether a delivery of ``record`` counts (module docstring): its first one, or a
        complete one from the source whose earlier delivery was held or provisional."""
        rid = record.record_id
        if rid in self._seen:
            first = self._provisional.get(rid)
            return complete and first is not None and first.origin == record.source
        held = self.held.get(rid)
        return held is None or held == record.source

    def _provisionals(
        self,
        source: str,
        decisions: list[tuple[Record, str, Decision]],
        incomplete: Collection[str],
    ) -> list[Provisional]:
        """Note the new records written from an incomplete delivery; return the provisional
        ones these decisions replace, taken out of their source's counts."""
        replaced: list[Provisional] = []
        for record, _, decision in decisions:
            rid = decision.record_id
            earlier = self._provisional.pop(rid, None)
            if earlier is not None:
                replaced.append(earlier)
                counts = self.stats.of(earlier.counted)
                counts.records -= 1
                counts.new_versions -= 1
                counts.passages -= earlier.passages
            if rid in incomplete and decision.new:
                self._provisional[rid] = Provisional(
                    rid,
                    record.source,
                    source,
                    decision.version,
                    len({p.path for p in record.passages}),
                )
        return replaced

    def _stage(
        self,
        decisions: list[tuple[Record, str, Decision]],
        new: list[tuple[Record, str, Decision]],
    ) -> StagedBatch:
        sid, stage = self.snapshot_id, self.stager.stage
        return StagedBatch(
            records=stage("records", (record_row(r, d.version, h) for r, h, d in new)),
            versions=stage(
                "record_versions",
                ((d.record_id, d.version, d.seq, h, sid, sid, "harvest") for _, h, d in new),
            ),
            passages=stage("passages_docs", self._passage_rows(new)),
            touched=stage("keys", ((d.record_id, d.version) for _, _, d in decisions if not d.new)),
            licences=stage(
                "licences",
                (
                    (d.record_id, d.version, r.licence, r.licence_raw)
                    for r, _, d in decisions
                    if not d.new and r.licence != UNKNOWN
                ),
            ),
            annotations=stage(
                "annotations",
                (
                    (d.record_id, d.version, a.path, a.start, a.end, a.text, a.type, a.identifier)
                    for r, _, d in decisions
                    for a in r.annotations
                ),
            ),
            relations=stage("relations", self._relation_rows(decisions)),
            seen=stage("seen", ((d.record_id, r.source, d.version) for r, _, d in decisions)),
        )

    def _passage_rows(self, new: list[tuple[Record, str, Decision]]) -> list[tuple[Any, ...]]:
        rows: list[tuple[Any, ...]] = []
        for record, _, decision in new:
            passages, warnings = passage_rows(record, decision.version, self.fold)
            self.stats.warnings.extend(warnings)
            for row in passages:
                self._docid += 1
                rows.append((self._docid - 1, *row, ascii_words(row[5])))
        return rows

    def _relation_rows(
        self, decisions: list[tuple[Record, str, Decision]]
    ) -> list[tuple[Any, ...]]:
        rows: dict[tuple[str, str, str, str], tuple[Any, ...]] = {}
        for record, _, decision in decisions:
            for rel in record.relations:
                key = (decision.record_id, rel.kind, rel.target, rel.source)
                rows.setdefault(key, (*key, rel.detail, rel.date, self.snapshot_id))
        return list(rows.values())
