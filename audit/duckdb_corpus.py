"""The :class:`~audit.corpus.Corpus` of a snapshot file, read through one read-only connection.

Every look-up is a batch: the keys travel as one string parameter (fields joined by U+001F,
keys by U+001E; no record id or path can contain either) that DuckDB splits and joins against
the table, so a whole answer, or a chunk of answers, costs one scan instead of one query per
citation (DESIGN.md §9: ~650 point queries/s against ~190,000 look-ups/s in one join).

The tables and columns read here are those of ``pipeline/snapshot/schema.py`` (the audit does
not import it): meta, sources, records, record_versions, record_state, passages, relations.
"""

from __future__ import annotations

import copy
import hashlib
import threading
from collections.abc import Collection, Iterable, Mapping
from pathlib import Path
from types import TracebackType
from typing import TYPE_CHECKING, Any

import duckdb

from audit.corpus import (
    PassageKey,
    PathRef,
    SnapshotIdentity,
    StoredAnnotation,
    StoredPassage,
    StoredRecord,
    StoredRelation,
)
from audit.errors import CorpusError
from audit.folding import FoldedText

if TYPE_CHECKING:
    from audit.references.resolve import SnapshotResolver

READABLE_SCHEMA_VERSION = 6  # 2, 4, 6: tables the audit does not read; 3: folded may be NULL;
# 5: records.licence (older snapshots: every licence 'unknown')
_FIELD = "\x1f"  # chr(31) in the SQL below
_KEY = "\x1e"  # chr(30)
_TABLES = ("meta", "sources", "records", "record_versions", "record_state", "passages")

# refreshed: the current version was seen by the harvest this snapshot holds ($2, see
# DuckDBCorpus.harvest_id; a NULL harvest id or last_seen is never "refreshed"); last_seen
# only for a record that was not.
_RECORDS_SQL = """
WITH k AS (SELECT DISTINCT unnest(string_split($1, chr(30))) AS record_id)
SELECT s.record_id, s.source, s.current_version, s.withdrawn, s.withdrawn_since,
       r.title, r.status, r.doi, r.pmid, r.pmcid, r.year, r.journal,
       r.retracted, r.expression_of_concern, r.preprint,
       coalesce(v.last_seen = $2, FALSE) AS refreshed,
       CASE WHEN NOT refreshed THEN v.last_seen END,
       coalesce({licence}, 'unknown')
FROM record_state s JOIN k USING (record_id)
LEFT JOIN records r ON r.record_id = s.record_id AND r.version = s.current_version
LEFT JOIN record_versions v ON v.record_id = s.record_id AND v.version = s.current_version
"""

# Retained versions as rows, oldest first (a list aggregate here costs twice as much).
_VERSIONS_SQL = """
WITH k AS (SELECT DISTINCT unnest(string_split($1, chr(30))) AS record_id)
SELECT r.record_id, r.version
FROM records r JOIN k USING (record_id)
LEFT JOIN record_versions v USING (record_id, version)
ORDER BY coalesce(v.seq, 0), r.version
"""

# The version order of some records, for the few paths held in several versions.
_SEQ_SQL = """
WITH k AS (SELECT DISTINCT unnest(string_split($1, chr(30))) AS record_id)
SELECT record_id, version, seq FROM record_versions JOIN k USING (record_id)
"""

_RELATIONS_SQL = """
WITH k AS (SELECT DISTINCT unnest(string_split($1, chr(30))) AS record_id)
SELECT record_id, kind, target, source, detail, date
FROM relations JOIN k USING (record_id)
ORDER BY record_id, kind, date NULLS LAST, target
"""

_PASSAGES_SQL = """
WITH k AS (
    SELECT DISTINCT s[1] AS record_id, s[2] AS version, s[3] AS path
    FROM (SELECT string_split(unnest(string_split($1, chr(30))), chr(31)) AS s)
)
SELECT p.record_id, p.version, p.path, p.section, p.text, coalesce(p.folded, p.text)
FROM passages p JOIN k USING (record_id, version, path)
"""

# Unordered (the few paths held in several versions are ordered in Python); the folded text
# only where it differs from the text (NULL otherwise: half the strings to hand to Python).
# Snapshots of schema 3 store it so; older ones store it always (hence nullif).
_PASSAGE_VERSIONS_SQL = """
WITH k AS (
    SELECT DISTINCT s[1] AS record_id, s[2] AS path
    FROM (SELECT string_split(unnest(string_split($1, chr(30))), chr(31)) AS s)
)
SELECT p.record_id, p.version, p.path, p.section, p.text, nullif(p.folded, p.text)
FROM passages p JOIN k USING (record_id, path)
"""


# Read only for claim support (audit.support.run); a snapshot without the table cannot say.
_ANNOTATIONS_SQL = """
WITH k AS (
    SELECT DISTINCT s[1] AS record_id, s[2] AS version, s[3] AS path
    FROM (SELECT string_split(unnest(string_split($1, chr(30))), chr(31)) AS s)
)
SELECT a.record_id, a.version, a.path, a.start, a."end", a.text, a.type, a.identifier
FROM annotations a JOIN k USING (record_id, version, path)
ORDER BY a.record_id, a.version, a.path, a.start, a."end", a.identifier NULLS LAST
"""


def _blob(keys: Iterable[tuple[str, ...]]) -> str:
    """Keys as one parameter; keys holding a separator cannot exist in a snapshot: dropped."""
    parts = []
    for key in keys:
        text = _FIELD.join(key)
        if _KEY not in text and text.count(_FIELD) == len(key) - 1:
            parts.append(text)
    return _KEY.join(parts)


def _sha256(path: Path) -> str:
    digest = hashlib.sha256()
    with path.open("rb") as handle:
        for block in iter(lambda: handle.read(1 << 20), b""):
            digest.update(block)
    return digest.hexdigest()


class DuckDBCorpus:
    """A snapshot file opened read-only; one instance (one connection) serves a whole run."""

    def __init__(
        self,
        path: Path,
        *,
        sha256: str | None = None,
        connection: duckdb.DuckDBPyConnection | None = None,
    ) -> None:
        """Open ``path`` read-only. ``sha256``: the file's digest when the caller has already
        computed it (checking the file against its manifest), so it is not hashed again.
        ``connection``: an open read-only connection to ``path`` to read through instead (a
        server's per-call cursor, since DuckDB refuses a second connection to a file with a
        different configuration in one process); :meth:`close` closes it."""
        self.path = Path(path)
        if connection is not None:
            self._con = connection
        elif not self.path.is_file():
            raise CorpusError(
                f"snapshot {self.path} does not exist",
                advice="build one with: citeseal snapshot build snapshots/demo.toml",
            )
        else:
            try:
                self._con = duckdb.connect(str(self.path), read_only=True)
            except duckdb.Error as error:
                first = str(error).splitlines()[0] if str(error) else type(error).__name__
                raise CorpusError(f"cannot open snapshot {self.path}: {first}") from None
        self._check_shape()
        self._meta = dict(self._fetch("SELECT key, value FROM meta"))
        self._sources: dict[str, str] | None = None
        self._sha256 = sha256
        self._sharing = threading.Lock()  # reading_through's first read of what it shares
        licensed = self._fetch(
            "SELECT count(*) FROM information_schema.columns WHERE table_schema = 'main' "
            "AND table_name = 'records' AND column_name = 'licence'"
        )[0][0]
        # a snapshot from before migration 5 holds no licence: every record's is unknown
        self._records_sql = _RECORDS_SQL.format(licence="r.licence" if licensed else "NULL")

    def _fetch(self, sql: str, params: list[Any] | None = None) -> list[tuple[Any, ...]]:
        try:
            return self._con.execute(sql, params).fetchall()
        except duckdb.Error as error:
            first = str(error).splitlines()[0] if str(error) else type(error).__name__
            raise CorpusError(f"cannot read snapshot {self.path}: {first}") from None

    def _check_shape(self) -> None:
        present = {
            row[0]
            for row in self._con.execute(
                "SELECT table_name FROM information_schema.tables WHERE table_schema = 'main'"
            ).fetchall()
        }
        missing = [t for t in _TABLES if t not in present]
        if missing:
            self._con.close()
            raise CorpusError(
                f"{self.path} is not a citeseal snapshot (missing table {missing[0]!r})"
            )
        rows = self._con.execute("SELECT value FROM meta WHERE key = 'schema_version'").fetchall()
        if rows and rows[0][0] is not None and rows[0][0].isdigit():
            version = int(rows[0][0])
            if version > READABLE_SCHEMA_VERSION:
                self._con.close()
                raise CorpusError(
                    f"snapshot {self.path} has schema version {version}; this citeseal reads "
                    f"up to {READABLE_SCHEMA_VERSION}",
                    advice="upgrade citeseal",
                )

    def reading_through(self, connection: duckdb.DuckDBPyConnection) -> DuckDBCorpus:
        """This corpus read through ``connection``, another read-only connection (or cursor)
        to the same file: the shape check, meta, source statuses and digest already read are
        shared, not read again (a server's per-call corpus). Only for a file the caller knows
        unchanged since this corpus opened it (``TrustedSnapshot.still_unchanged``).
        :meth:`close` of the result closes ``connection`` only. Safe to call from several
        threads at once: the shared part is read under a lock, through this corpus's own
        connection, which no two threads may use at the same time."""
        with self._sharing:
            self.source_status()  # read once here, shared by every corpus made from this one
        twin = copy.copy(self)
        twin._con = connection
        return twin

    # -- context manager ----------------------------------------------------------------------

    def close(self) -> None:
        self._con.close()

    def __enter__(self) -> DuckDBCorpus:
        return self

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        self.close()

    def reference_resolver(self) -> SnapshotResolver:
        """A resolver of ordinary references on this snapshot (:mod:`audit.references`),
        reading through a cursor of its own (the audit's look-ups run on another thread);
        the caller closes it."""
        from audit.references.resolve import SnapshotResolver

        return SnapshotResolver(self._con.cursor(), self._meta.get("name") or self.path.stem)

    # -- Corpus -------------------------------------------------------------------------------

    def identity(self) -> SnapshotIdentity:
        if self._sha256 is None:
            self._sha256 = _sha256(self.path)
        return SnapshotIdentity(
            name=self._meta.get("name") or self.path.stem,
            path=str(self.path),
            sha256=self._sha256,
            snapshot_id=self._meta.get("snapshot_id"),
            created_at=self._meta.get("created_at"),
        )

    @property
    def harvest_id(self) -> str | None:
        """The snapshot whose harvest this one holds: its own id, or for a backfill child
        (which harvests nothing and carries its parent's sources) the parent's. A record whose
        current version that harvest did not see was not refreshed (``record_versions.
        last_seen``; every build sets it to its own id for each record it saw completely).
        A backfill of a backfill names its parent, whose harvest saw nothing: every record
        reads as not refreshed there, which errs on the side of saying so."""
        if self._meta.get("mode") == "backfill":
            return self._meta.get("parent_snapshot_id")
        return self._meta.get("snapshot_id")

    def source_status(self) -> Mapping[str, str]:
        if self._sources is None:
            self._sources = dict(self._fetch("SELECT source, status FROM sources"))
        return self._sources

    def records(self, ids: Collection[str]) -> dict[str, StoredRecord]:
        if not ids:
            return {}
        blob = _blob((i,) for i in ids)
        relations: dict[str, list[StoredRelation]] = {}
        for rid, kind, target, source, detail, date in self._fetch(_RELATIONS_SQL, [blob]):
            relations.setdefault(rid, []).append(
                StoredRelation(kind=kind, target=target, source=source, detail=detail, date=date)
            )
        versions: dict[str, tuple[str, ...]] = {}
        for rid, version in self._fetch(_VERSIONS_SQL, [blob]):  # oldest first
            held = versions.get(rid)
            versions[rid] = (version,) if held is None else (*held, version)
        found: dict[str, StoredRecord] = {}
        make, no_relations = StoredRecord._make, ()
        for row in self._fetch(self._records_sql, [blob, self.harvest_id]):
            rid = row[0]
            # StoredRecord's field order: the row with the versions after current_version,
            # withdrawn as a bool, the relations after the flags, refreshed and last_seen last.
            found[rid] = make(
                (
                    rid,
                    row[1],
                    row[2],
                    versions.get(rid, ()),
                    bool(row[3]),
                    *row[4:15],
                    tuple(relations[rid]) if rid in relations else no_relations,
                    row[15],
                    row[16],
                    row[17],
                )
            )
        return found

    def passages(self, keys: Collection[PassageKey]) -> dict[PassageKey, StoredPassage]:
        if not keys:
            return {}
        found: dict[PassageKey, StoredPassage] = {}
        for rid, version, path, section, text, folded in self._fetch(_PASSAGES_SQL, [_blob(keys)]):
            passage = StoredPassage(rid, version, path, section, text, FoldedText(folded))
            found[passage.key] = passage
        return found

    def passage_versions(self, refs: Collection[PathRef]) -> dict[PathRef, list[StoredPassage]]:
        if not refs:
            return {}
        found: dict[PathRef, list[StoredPassage]] = {}
        several: set[str] = set()  # records with a path held in several versions
        make, new_ref = StoredPassage._make, PathRef._make
        for row in self._fetch(_PASSAGE_VERSIONS_SQL, [_blob(refs)]):
            if row[5] is None:  # the folded text is the text
                row = (*row[:5], row[4])
            ref = new_ref((row[0], row[2]))
            held = found.get(ref)
            if held is None:
                found[ref] = [make(row)]
            else:
                held.append(make(row))
                several.add(ref.record_id)
        if several:  # oldest version first (record_versions.seq, then the version)
            seq = {
                (rid, version): n
                for rid, version, n in self._fetch(_SEQ_SQL, [_blob((i,) for i in several)])
            }
            for held in found.values():
                if len(held) > 1:
                    held.sort(key=lambda p: (seq.get((p.record_id, p.version), 0), p.version))
        return found

    def annotations(
        self, keys: Collection[PassageKey]
    ) -> dict[PassageKey, tuple[StoredAnnotation, ...]]:
        """The PubTator3 annotations of the passages among ``keys``, by start (a passage
        without any is missing)."""
        if not keys:
            return {}
        found: dict[PassageKey, list[StoredAnnotation]] = {}
        for rid, version, path, *rest in self._fetch(_ANNOTATIONS_SQL, [_blob(keys)]):
            found.setdefault(PassageKey(rid, version, path), []).append(StoredAnnotation(*rest))
        return {k: tuple(v) for k, v in found.items()}
