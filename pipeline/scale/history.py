"""The pure half of ``scale ingest``: one file's bytes → events, one record's events → rows.

The Spark job (:mod:`pipeline.scale.ingest`) runs :func:`file_events` as one task per file
and :func:`record_rows` once per record id after grouping; neither does I/O, so both are
tested without Spark. They add nothing of their own to what ``snapshot build`` does: a file is
read by :func:`pipeline.sources.pubmed_files.read_file` (the PubMed parser, its flags and
passage paths), a version is hashed by :meth:`pipeline.records.Record.content_hash` and
decided by :func:`pipeline.snapshot.lineage.decide`, rows are made by
:func:`pipeline.snapshot.ingest.record_row` and :func:`~pipeline.snapshot.ingest.passage_rows`.

Generations: the baseline files together are generation 0, each update file (name order) the
next one, as a lineage of snapshots would take them, one build per day. A generation has an
id like a snapshot's (:func:`generation_ids`): ``first_seen``/``last_seen`` name it, and the
last one is the id of the snapshot ``scale snapshot`` writes. Within a generation a record is
as its last file has it; a ``DeleteCitation`` applies after the records of its file. Between
generations the rules of :mod:`pipeline.snapshot.lineage` apply: content already known is
that version again, changed content is a new version, a deletion withdraws the record (its
versions stay), a record that comes back is no longer withdrawn; a version seen in the last
generation is of origin ``harvest``, an older one ``carried``; relations are kept per record
with the generation they were first seen in.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from typing import Any, NamedTuple

from audit.folding import fold
from pipeline.snapshot.ingest import passage_rows, record_row
from pipeline.snapshot.lineage import KnownVersion, decide
from pipeline.sources.pubmed_files import InputFile, read_file
from pipeline.sources.pubmed_xml import SOURCE

# The columns of each table of a scale folder, as (name, type) with type one of "string",
# "int", "bool"; the first ones are those of the snapshot table it fills (schema 6).
TABLES: dict[str, tuple[tuple[str, str], ...]] = {
    "records": (
        ("record_id", "string"),
        ("version", "string"),
        ("source", "string"),
        ("content_hash", "string"),
        ("version_date", "string"),
        ("title", "string"),
        ("doi", "string"),
        ("pmid", "string"),
        ("pmcid", "string"),
        ("year", "int"),
        ("journal", "string"),
        ("authors", "string"),
        ("publication_types", "string"),
        ("content_type", "string"),
        ("status", "string"),
        ("retracted", "bool"),
        ("expression_of_concern", "bool"),
        ("preprint", "bool"),
        ("metadata", "string"),
        ("licence", "string"),
        ("licence_raw", "string"),
    ),
    "passages": (
        ("record_id", "string"),
        ("version", "string"),
        ("path", "string"),
        ("seq", "int"),
        ("section", "string"),
        ("text", "string"),
        ("folded", "string"),
        ("source", "string"),
    ),
    "versions": (
        ("record_id", "string"),
        ("version", "string"),
        ("seq", "int"),
        ("content_hash", "string"),
        ("first_seen", "string"),
        ("last_seen", "string"),
        ("origin", "string"),
        ("source", "string"),
    ),
    "state": (
        ("record_id", "string"),
        ("source", "string"),
        ("current_version", "string"),
        ("withdrawn", "bool"),
        ("withdrawn_since", "string"),
    ),
    "relations": (
        ("record_id", "string"),
        ("kind", "string"),
        ("target", "string"),
        ("source", "string"),
        ("detail", "string"),
        ("date", "string"),
        ("first_seen", "string"),
    ),
}
SNAPSHOT_TABLE = {
    "records": "records",
    "passages": "passages",
    "versions": "record_versions",
    "state": "record_state",
    "relations": "relations",
}
"""The snapshot table each scale table fills (its columns but ``source`` where the snapshot
table has none)."""


def generation_ids(name: str, files: Sequence[InputFile]) -> list[str]:
    """The id of each generation: ``<name>-<stem of its last file>`` (``pubmed-pubmed26n0001``)."""
    last: dict[int, str] = {}
    for item in files:
        last[item.generation] = item.stem
    return [f"{name}-{last[g]}" for g in sorted(last)]


class Event(NamedTuple):
    """What one file says of one record: its content (a version to be) or its deletion.
    ``order`` sorts the events of a record: (generation, file number, deletion last, place).
    A tuple, not a dataclass: events are pickled between Spark's Python workers, and a tuple
    pickles without its field names."""

    order: tuple[int, int, int, int]
    content_hash: str = ""
    upstream_version: str | None = None
    record: tuple[Any, ...] = ()  # a records row, its version left empty
    passages: tuple[tuple[Any, ...], ...] = ()  # passages rows, their version left empty
    relations: tuple[tuple[Any, ...], ...] = ()  # (kind, target, source, detail, date)

    @property
    def generation(self) -> int:
        return self.order[0]

    @property
    def deleted(self) -> bool:
        return self.order[2] == 1


@dataclass
class FileSummary:
    """One file as read: for the folder's ``files`` table and the ingest's report."""

    name: str
    generation: int
    sha256: str
    size: int
    records: int = 0
    deleted: int = 0
    refused: dict[str, int] = field(default_factory=dict)
    warnings: list[str] = field(default_factory=list)


def file_events(
    number: int, item: InputFile, data: bytes
) -> tuple[FileSummary, list[tuple[str, Event]]]:
    """The events of file ``number`` (its place in the input order) keyed by record id."""
    import hashlib

    content = read_file(item.name, data)
    summary = FileSummary(item.name, item.generation, hashlib.sha256(data).hexdigest(), len(data))
    events: list[tuple[str, Event]] = []
    for place, record in enumerate(content.records):
        passages, warnings = passage_rows(record, "", fold)
        summary.warnings.extend(warnings)
        relations = tuple((r.kind, r.target, r.source, r.detail, r.date) for r in record.relations)
        content_hash = record.content_hash()
        event = Event(
            (item.generation, number, 0, place),
            content_hash,
            record.version,
            record_row(record, "", content_hash),
            tuple(passages),
            relations,
        )
        events.append((record.record_id, event))
    for place, rid in enumerate(content.deleted):
        events.append((rid, Event((item.generation, number, 1, place))))
    summary.records = len(content.records)
    summary.deleted = len(content.deleted)
    for refusal in content.refused:
        summary.refused[refusal.reason] = summary.refused.get(refusal.reason, 0) + 1
    return summary, events


@dataclass
class Rows:
    """The rows of one record in each table of a scale folder (:data:`TABLES`)."""

    records: list[tuple[Any, ...]] = field(default_factory=list)
    passages: list[tuple[Any, ...]] = field(default_factory=list)
    versions: list[tuple[Any, ...]] = field(default_factory=list)
    state: list[tuple[Any, ...]] = field(default_factory=list)
    relations: list[tuple[Any, ...]] = field(default_factory=list)

    def table(self, name: str) -> list[tuple[Any, ...]]:
        return getattr(self, name)


def _versioned(row: tuple[Any, ...], version: str) -> tuple[Any, ...]:
    return (row[0], version, *row[2:])


def record_rows(record_id: str, events: Iterable[Event], generations: Sequence[str]) -> Rows:
    """Every row of ``record_id`` once all its events are applied in order (module docstring);
    no row at all for a record that no generation holds (deleted where it first came)."""
    last: dict[int, Event] = {}
    for event in sorted(events, key=lambda e: e.order):
        last[event.generation] = event  # within a generation, the last word counts
    rows = Rows()
    known: list[KnownVersion] = []
    first_seen: dict[str, str] = {}
    last_seen: dict[str, str] = {}
    relations: dict[tuple[str, str, str], tuple[Any, ...]] = {}
    current: str | None = None
    alive = False
    since: str | None = None
    for generation in sorted(last):
        event = last[generation]
        if event.deleted:
            if alive and current is not None:
                last_seen[current] = generations[generation - 1]
                alive, since = False, generations[generation]
            continue
        decision = decide(record_id, event.upstream_version, event.content_hash, known)
        if decision.new:
            known.append(KnownVersion(decision.version, decision.seq, event.content_hash))
            first_seen[decision.version] = generations[generation]
            rows.records.append(_versioned(event.record, decision.version))
            rows.passages.extend((*_versioned(p, decision.version), SOURCE) for p in event.passages)
        if alive and current is not None and current != decision.version:
            last_seen[current] = generations[generation - 1]
        current, alive, since = decision.version, True, None
        for kind, target, source, detail, date in event.relations:
            relations.setdefault(
                (kind, target, source),
                (record_id, kind, target, source, detail, date, generations[generation]),
            )
    if current is None:
        return rows
    final = generations[-1]
    if alive:
        last_seen[current] = final
    for held in known:
        seen = last_seen[held.version]
        rows.versions.append(
            (
                record_id,
                held.version,
                held.seq,
                held.content_hash,
                first_seen[held.version],
                seen,
                "harvest" if seen == final else "carried",
                SOURCE,
            )
        )
    rows.state.append((record_id, SOURCE, current, not alive, since))
    rows.relations.extend(relations.values())
    return rows
