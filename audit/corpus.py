"""The read-only corpus interface the audit judges against, and an in-memory implementation.

The audit never reads a snapshot directly: it asks a :class:`Corpus` in batches (every record
and every passage one answer, or one chunk of answers, needs, in one call each), so the DuckDB
implementation (:mod:`audit.duckdb_corpus`) answers with one join instead of a query per
citation. :class:`InMemoryCorpus` implements the same interface from Python values, for tests.

What a corpus knows, in the snapshot's terms:

- per source, its harvest status (``ok``, ``partial``, ``failed``, ``not_harvested``);
- per record the lineage ever knew: its source, its current version, the versions it still
  retains (oldest first), whether it is gone upstream, the metadata, tri-state flags and
  licence (:mod:`audit.licences`) of its current version, its relations (retraction notices,
  preprint links, …), and whether the harvest this snapshot holds refreshed it
  (``refreshed``; else ``last_seen`` names the snapshot whose harvest last did: the record is
  as that snapshot had it);
- per (record, version, path): the passage text and its folded form, and the PubTator3
  annotations on it (:meth:`InMemoryCorpus.annotations`, :meth:`DuckDBCorpus.annotations`:
  read only for claim support, :mod:`audit.support.run`).
"""

from __future__ import annotations

from collections.abc import Collection, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import NamedTuple, Protocol

from audit.folding import FoldedText, fold

SOURCE_STATUSES = ("ok", "partial", "failed", "not_harvested")


# The stored values are NamedTuples: immutable, and built by the thousand per look-up batch at
# a third of the cost of frozen dataclasses.


class PassageKey(NamedTuple):
    """One passage of one record version."""

    record_id: str
    version: str
    path: str


class PathRef(NamedTuple):
    """One path of one record, in whichever versions hold it."""

    record_id: str
    path: str


class StoredPassage(NamedTuple):
    """One passage of one record version: its text and its folded text."""

    record_id: str
    version: str
    path: str
    section: str | None
    text: str
    folded: FoldedText

    @property
    def key(self) -> PassageKey:
        return PassageKey(self.record_id, self.version, self.path)


class StoredAnnotation(NamedTuple):
    """A PubTator3 annotation on one passage: ``text[start:end]`` of the passage is the mention."""

    start: int
    end: int
    text: str | None
    type: str | None
    identifier: str | None


class StoredRelation(NamedTuple):
    """A link from a record: ``kind`` as in the snapshot (``retraction_in``, ``preprint_of``…)."""

    kind: str
    target: str
    source: str = ""
    detail: str | None = None
    date: str | None = None


class StoredRecord(NamedTuple):
    """What the snapshot knows about one record of its lineage (flags of the current version)."""

    record_id: str
    source: str
    current_version: str
    versions: tuple[str, ...]  # retained versions, oldest first; includes current_version
    withdrawn: bool = False
    withdrawn_since: str | None = None
    title: str | None = None
    status: str | None = None
    doi: str | None = None
    pmid: str | None = None
    pmcid: str | None = None
    year: int | None = None
    journal: str | None = None
    retracted: bool | None = None
    expression_of_concern: bool | None = None
    preprint: bool | None = None
    relations: tuple[StoredRelation, ...] = ()
    refreshed: bool = True  # the harvest this snapshot holds saw the record completely
    last_seen: str | None = None  # if not: the snapshot whose harvest last saw it (if known)
    licence: str = "unknown"  # of the current version, as audit.licences names it


@dataclass(frozen=True, slots=True)
class SnapshotIdentity:
    name: str
    path: str
    sha256: str
    snapshot_id: str | None = None
    created_at: str | None = None


class Corpus(Protocol):
    """Read-only, batched access to one snapshot."""

    def identity(self) -> SnapshotIdentity:
        """Name, path, sha256 (of the file), snapshot id and creation time."""
        ...

    def source_status(self) -> Mapping[str, str]:
        """Harvest status per source; a source missing here was not harvested."""
        ...

    def records(self, ids: Collection[str]) -> dict[str, StoredRecord]:
        """The records of the lineage among ``ids`` (absent ids are simply missing)."""
        ...

    def passages(self, keys: Collection[PassageKey]) -> dict[PassageKey, StoredPassage]:
        """The passages among ``keys`` (absent keys are simply missing)."""
        ...

    def passage_versions(self, refs: Collection[PathRef]) -> dict[PathRef, list[StoredPassage]]:
        """For each (record, path), the passage in every retained version holding that path."""
        ...


@dataclass
class InMemoryCorpus:
    """A corpus held in Python values; build it with :meth:`add_record`.

    >>> corpus = InMemoryCorpus(sources={"pubmed": "ok"})
    >>> _ = corpus.add_record("pmid:99000001", "pubmed", {"1": {"title": "Zentravir."}})
    >>> corpus.records(["pmid:99000001"])["pmid:99000001"].current_version
    '1'
    """

    sources: dict[str, str] = field(default_factory=dict)
    name: str = "memory"
    snapshot_id: str | None = None
    created_at: str | None = None
    _records: dict[str, StoredRecord] = field(default_factory=dict)
    _passages: dict[PassageKey, StoredPassage] = field(default_factory=dict)
    _annotations: dict[PassageKey, list[StoredAnnotation]] = field(default_factory=dict)

    def add_record(
        self,
        record_id: str,
        source: str,
        versions: Mapping[str, Mapping[str, str]],
        *,
        current: str | None = None,
        retained: Sequence[str] | None = None,
        relations: Iterable[StoredRelation] = (),
        **metadata: object,
    ) -> StoredRecord:
        """Add a record with its versions (version → {path: text}, oldest first).

        ``current`` defaults to the last version; ``retained`` (default: every version given)
        lets a test drop versions the lineage no longer holds. ``metadata`` fills the other
        :class:`StoredRecord` fields (title, withdrawn, retracted, …).
        """
        order = list(versions)
        kept = tuple(retained) if retained is not None else tuple(order)
        record = StoredRecord(
            record_id=record_id,
            source=source,
            current_version=current if current is not None else order[-1],
            versions=kept,
            relations=tuple(relations),
            **metadata,  # type: ignore[arg-type]  # the test names StoredRecord fields
        )
        self._records[record_id] = record
        for version in kept:
            for path, text in versions.get(version, {}).items():
                key = PassageKey(record_id, version, path)
                section = path.split(".")[0]
                self._passages[key] = StoredPassage(
                    record_id, version, path, section, text, fold(text)
                )
        return record

    def add_annotations(self, key: PassageKey, annotations: Iterable[StoredAnnotation]) -> None:
        """Annotate one passage (PubTator3 entities, spans relative to its text)."""
        self._annotations.setdefault(key, []).extend(annotations)

    def all_annotations(self) -> dict[PassageKey, list[StoredAnnotation]]:
        """Every annotation by passage (for writing the corpus out, in tests)."""
        return {k: list(v) for k, v in self._annotations.items()}

    def annotations(
        self, keys: Collection[PassageKey]
    ) -> dict[PassageKey, tuple[StoredAnnotation, ...]]:
        """The annotations of the passages among ``keys``, by start (absent keys are missing)."""
        return {k: tuple(sorted(self._annotations[k])) for k in keys if k in self._annotations}

    def all_records(self) -> list[StoredRecord]:
        """Every record, in the order added (for writing the corpus out, in tests)."""
        return list(self._records.values())

    def all_passages(self) -> list[StoredPassage]:
        """Every passage, in the order added."""
        return list(self._passages.values())

    def identity(self) -> SnapshotIdentity:
        return SnapshotIdentity(
            name=self.name,
            path=f"memory:{self.name}",
            sha256="0" * 64,
            snapshot_id=self.snapshot_id,
            created_at=self.created_at,
        )

    def source_status(self) -> Mapping[str, str]:
        return dict(self.sources)

    def records(self, ids: Collection[str]) -> dict[str, StoredRecord]:
        return {i: self._records[i] for i in ids if i in self._records}

    def passages(self, keys: Collection[PassageKey]) -> dict[PassageKey, StoredPassage]:
        return {k: self._passages[k] for k in keys if k in self._passages}

    def passage_versions(self, refs: Collection[PathRef]) -> dict[PathRef, list[StoredPassage]]:
        found: dict[PathRef, list[StoredPassage]] = {}
        for ref in refs:
            record = self._records.get(ref.record_id)
            if record is None:
                continue
            held = [
                self._passages[key]
                for version in record.versions
                if (key := PassageKey(ref.record_id, version, ref.path)) in self._passages
            ]
            if held:
                found[ref] = held
        return found
