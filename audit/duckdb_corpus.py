"""The :class:`~audit.corpus.Corpus` of a snapshot file, read through one read-only connection.

Every look-up is a batch, one query per table, never one per citation (DESIGN.md §9). Its
shape depends on the batch:

- a few records (one answer; up to :data:`LITERAL_IDS`): each table filtered by
  ``record_id IN ('…', …)``, the ids written as literals with their quotes doubled. DuckDB
  pushes that filter into the scan, and on a snapshot whose tables index ``record_id`` (every
  build and backfill writes the indexes, ``pipeline.snapshot.store.index_record_ids``) the
  scan is an index look-up: an answer costs what it cites, not what the snapshot holds. The
  filter is on ``record_id`` alone, the cited versions and paths picked in Python, and the
  tables are joined in Python: a second condition or a join makes DuckDB scan the whole
  table. A literal, not a bound list: binding a list parameter costs DuckDB more than the
  look-up, and DuckDB uses the index for neither ``= ANY($1)`` over many ids nor a join.
- a chunk of answers (more records), or an id holding a control character (no literal carries
  a NUL): each table joined with the ids, or the exact passage keys, sent as one string
  parameter (fields joined by U+001F, keys by U+001E; no record id or path can contain
  either): one scan per table, which pays at that size.

A snapshot written before builds indexed ``record_id`` reads the same, through filtered scans.

A corpus kept open (a server's) can instead read every record and every passage once, each
table in one pass, and answer its look-ups from memory within a budget
(:meth:`DuckDBCorpus.keep_warm`, :mod:`audit.warm`).
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
from audit.lookup_cache import LookupCache
from audit.warm import (
    PASSAGE_BYTES,
    RECORD_BYTES,
    WARM_BUDGET,
    PassageHoard,
    WarmCorpus,
    Warmth,
)

if TYPE_CHECKING:
    from audit.references.resolve import SnapshotResolver

READABLE_SCHEMA_VERSION = 6  # 2, 4, 6: tables the audit does not read; 3: folded may be NULL;
# 5: records.licence (older snapshots: every licence 'unknown')
_TABLES = ("meta", "sources", "records", "record_versions", "record_state", "passages")

_STATE_SQL = """
SELECT record_id, source, current_version, withdrawn, withdrawn_since
FROM record_state WHERE {ids}
"""

# Every retained version of the records: the current one's fields, and the versions list.
_RECORDS_SQL = """
SELECT record_id, version, title, status, doi, pmid, pmcid, year, journal,
       retracted, expression_of_concern, preprint, coalesce({licence}, 'unknown')
FROM records WHERE {ids}
"""

# The version order (seq) and the harvest that last saw each version.
_LINEAGE_SQL = """
SELECT record_id, version, seq, last_seen
FROM record_versions WHERE {ids}
"""

_RELATIONS_SQL = """
SELECT record_id, kind, target, source, detail, date
FROM relations WHERE {ids}
ORDER BY record_id, kind, date NULLS LAST, target
"""

# Every passage of the records (the cited paths are picked in Python); the folded text only
# where it differs from the text (NULL otherwise: half the strings to hand to Python).
# Snapshots of schema 3 store it so; older ones store it always (hence nullif).
_PASSAGES_SQL = """
SELECT record_id, version, path, section, text, nullif(folded, text)
FROM passages WHERE {ids}
"""

_SEQ_SQL = """
SELECT record_id, version, seq FROM record_versions WHERE {ids}
"""

# Read only for claim support (audit.support.run); a snapshot without the table cannot say.
_ANNOTATIONS_SQL = """
SELECT record_id, version, path, start, "end", text, type, identifier
FROM annotations WHERE {ids}
ORDER BY record_id, version, path, start, "end", identifier NULLS LAST
"""

# A chunk of answers (more than LITERAL_IDS records): one scan of each table joined with the
# ids (records) or the exact keys (passages: every passage of forty thousand records costs
# more than the scan). They travel as one string parameter: fields joined by U+001F, keys by
# U+001E (no record id or path can contain either).
_IDS = "WITH k AS (SELECT DISTINCT unnest(string_split($1, chr(30))) AS record_id)\n"
_KEYS = """
WITH k AS (
    SELECT DISTINCT s[1] AS record_id, s[2] AS version, s[3] AS path
    FROM (SELECT string_split(unnest(string_split($1, chr(30))), chr(31)) AS s)
)
"""
_PASSAGES_JOIN_SQL = (
    _KEYS
    + """SELECT p.record_id, p.version, p.path, p.section, p.text, nullif(p.folded, p.text)
FROM passages p JOIN k USING (record_id, version, path)
"""
)
_PASSAGE_VERSIONS_JOIN_SQL = """
WITH k AS (
    SELECT DISTINCT s[1] AS record_id, s[2] AS path
    FROM (SELECT string_split(unnest(string_split($1, chr(30))), chr(31)) AS s)
)
SELECT p.record_id, p.version, p.path, p.section, p.text, nullif(p.folded, p.text)
FROM passages p JOIN k USING (record_id, path)
"""
_ANNOTATIONS_JOIN_SQL = (
    _KEYS
    + """SELECT a.record_id, a.version, a.path, a.start, a."end", a.text, a.type, a.identifier
FROM annotations a JOIN k USING (record_id, version, path)
ORDER BY a.record_id, a.version, a.path, a.start, a."end", a.identifier NULLS LAST
"""
)
_FIELD = "\x1f"  # chr(31) above
_KEY = "\x1e"  # chr(30)

_WARM_BATCH = 10_000  # passage rows fetched at a time while keeping them warm

LITERAL_IDS = 1_000
"""Up to this many record ids are written into the statement as literals; more travel as
one parameter (:func:`_literal`)."""


def read_only_connection(path: Path | str) -> duckdb.DuckDBPyConnection:
    """A read-only connection to the snapshot at ``path`` with DuckDB's progress bar off: left
    on, a statement over two seconds draws it on standard output, into ``--json`` output and
    an MCP server's protocol stream. Raises :class:`duckdb.Error` for the caller to name."""
    con = duckdb.connect(str(path), read_only=True)
    con.execute("SET enable_progress_bar = false")  # a setting of the connection, not global
    return con


def _ids(keys: Iterable[tuple[str, ...]]) -> list[str]:
    """The distinct record ids of ``keys`` (each key's first field)."""
    return list({key[0] for key in keys})


def _literal(ids: Collection[str]) -> str | None:
    """``record_id IN ('…', …)`` for a few ids, quotes doubled (the only character a DuckDB
    string literal escapes); None for more than :data:`LITERAL_IDS` (a chunk of answers: one
    scan pays there) or for any id holding a control character (no literal carries a NUL: it
    would end the statement's text)."""
    if len(ids) > LITERAL_IDS or any(c < " " for i in ids for c in i):
        return None
    quoted = ", ".join("'" + i.replace("'", "''") + "'" for i in ids)
    return f"record_id IN ({quoted})"


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
        cache: LookupCache | None = None,
    ) -> None:
        """Open ``path`` read-only. ``sha256``: the file's digest when the caller has already
        computed it (checking the file against its manifest), so it is not hashed again.
        ``connection``: an open read-only connection to ``path`` to read through instead (a
        server's per-call cursor, since DuckDB refuses a second connection to a file with a
        different configuration in one process); :meth:`close` closes it. ``cache``: keep
        the records and cited paths looked up, for later calls (:mod:`audit.lookup_cache`;
        only for a file the caller checks unchanged before every call, as a server does)."""
        self.path = Path(path)
        self._cache = cache
        if connection is not None:
            self._con = connection
        elif not self.path.is_file():
            raise CorpusError(
                f"snapshot {self.path} does not exist",
                advice="build one with: citeseal snapshot build snapshots/demo.toml",
            )
        else:
            try:
                self._con = read_only_connection(self.path)
            except duckdb.Error as error:
                first = str(error).splitlines()[0] if str(error) else type(error).__name__
                raise CorpusError(f"cannot open snapshot {self.path}: {first}") from None
        licensed = self._check_shape()
        self._meta = dict(self._fetch("SELECT key, value FROM meta"))
        self._check_version()
        self._sources: dict[str, str] | None = None
        self._sha256 = sha256
        self._sharing = threading.Lock()  # reading_through's first read of what it shares
        self._warm: WarmCorpus | None = None  # keep_warm's tiers, shared by reading_through
        # a snapshot from before migration 5 holds no licence: every record's is unknown
        self._records_sql = _RECORDS_SQL.replace("{licence}", "licence" if licensed else "NULL")

    def _fetch(self, sql: str, params: list[Any] | None = None) -> list[tuple[Any, ...]]:
        try:
            return self._con.execute(sql, params).fetchall()
        except duckdb.Error as error:
            first = str(error).splitlines()[0] if str(error) else type(error).__name__
            raise CorpusError(f"cannot read snapshot {self.path}: {first}") from None

    def _among(self, sql: str, ids: Collection[str] | None) -> list[tuple[Any, ...]]:
        """The rows of ``sql`` whose ``{ids}`` filter keeps the rows of the records ``ids``
        (a literal list, else the table joined with the ids as one string parameter; None:
        every row, one pass over the table)."""
        if ids is None:
            return self._fetch(sql.replace("WHERE {ids}", ""))
        literal = _literal(ids)
        if literal is None:  # joined: DuckDB takes minutes over `= ANY($1)` of 30,000 ids
            joined = _IDS + sql.replace("WHERE {ids}", "JOIN k USING (record_id)")
            return self._fetch(joined, [_blob((i,) for i in ids)])
        return self._fetch(sql.replace("{ids}", literal))

    def _rows_of(
        self, by_record: str, joined: str, keys: Collection[tuple[str, ...]], picked: Any
    ) -> Iterable[tuple[Any, ...]]:
        """The rows of the passages (or annotations) of ``keys``: those of their records,
        picked by ``picked(row)`` in ``keys`` (a few records), or the table joined with the
        keys themselves (a chunk of answers)."""
        ids = _ids(keys)
        literal = _literal(ids)
        if literal is None:
            return self._fetch(joined, [_blob(keys)])
        wanted = set(keys)
        return [
            row for row in self._fetch(by_record.replace("{ids}", literal)) if picked(row) in wanted
        ]

    def _check_shape(self) -> bool:
        """The tables the audit reads are there; whether ``records`` has a ``licence`` column
        (one read of the catalog, through ``duckdb_columns()``: a third of the cost of
        ``information_schema`` on each opening)."""
        present = dict(
            self._con.execute(
                "SELECT table_name, bool_or(column_name = 'licence') FROM duckdb_columns() "
                "WHERE schema_name = 'main' GROUP BY table_name"
            ).fetchall()
        )
        missing = [t for t in _TABLES if t not in present]
        if missing:
            self._con.close()
            raise CorpusError(
                f"{self.path} is not a citeseal snapshot (missing table {missing[0]!r})"
            )
        return bool(present["records"])

    def _check_version(self) -> None:
        """The snapshot's schema version (in its meta) is one this audit reads."""
        value = self._meta.get("schema_version")
        if value is not None and value.isdigit():
            version = int(value)
            if version > READABLE_SCHEMA_VERSION:
                self._con.close()
                raise CorpusError(
                    f"snapshot {self.path} has schema version {version}; this citeseal reads "
                    f"up to {READABLE_SCHEMA_VERSION}",
                    advice="upgrade citeseal",
                )

    def keep_warm(self, budget: int = WARM_BUDGET) -> Warmth:
        """Read every record (state, versions, lineage, relations) and then every passage
        into memory, one pass over each table, and answer :meth:`records`,
        :meth:`passage_versions` and :meth:`passages` from there (:mod:`audit.warm`). A tier
        whose estimate goes over ``budget`` bytes is not held: its look-ups stay statements.
        For a corpus kept open over a file the caller checks unchanged before every call (as
        a server does); call it before :meth:`reading_through`, whose corpora share it."""
        ((records,),) = self._fetch("SELECT count(*) FROM record_state")
        estimate = records * RECORD_BYTES
        if estimate > budget:
            warmth = Warmth.cold(
                budget, f"not kept warm: {records:,} records {_over(estimate, budget)}"
            )
        else:
            held = self._records(None)
            passages, size, note = self._warm_passages(budget - estimate)
            warmth = Warmth(held, passages, estimate + size, budget, note)
        self._warm = WarmCorpus(warmth)
        return warmth

    def _warm_passages(
        self, room: int
    ) -> tuple[dict[str, tuple[StoredPassage, ...]] | None, int, str]:
        """Every passage, per record, oldest version first, or None when they would take
        more than ``room`` bytes; their estimated size and what was kept warm."""
        ((count,),) = self._fetch("SELECT count(*) FROM passages")
        if count * PASSAGE_BYTES > room:
            return (
                None,
                0,
                f"records kept warm; {count:,} passages {_over(count * PASSAGE_BYTES, room)}",
            )
        hoard = PassageHoard(room)
        try:
            result = self._con.execute(_PASSAGES_SQL.replace("WHERE {ids}", ""))
            while rows := result.fetchmany(_WARM_BATCH):
                if not hoard.add(rows):
                    return (
                        None,
                        0,
                        f"records kept warm; {count:,} passages {_over(hoard.estimate, room)}",
                    )
        except duckdb.Error as error:
            first = str(error).splitlines()[0] if str(error) else type(error).__name__
            raise CorpusError(f"cannot read snapshot {self.path}: {first}") from None
        several = hoard.several_versions()
        seq = {(r, v): n for r, v, n in self._among(_SEQ_SQL, several)} if several else {}
        return hoard.done(several, seq), hoard.estimate, "records and passages kept warm"

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
        """The records among ``ids`` the snapshot holds (:meth:`_records`): from memory when
        they are kept warm, else remembered ones from the cache when there is one."""
        if self._warm is not None:
            return self._warm.records(ids, self._records_read)
        return self._records_read(ids)

    def _records_read(self, ids: Collection[str]) -> dict[str, StoredRecord]:
        if self._cache is not None:
            return self._cache.records(ids, self._records)
        return self._records(ids)

    def _records(self, ids: Collection[str] | None) -> dict[str, StoredRecord]:
        """The records among ``ids`` the snapshot holds (those of ``record_state``), each
        with the fields of its current version, its retained versions oldest first (by
        ``record_versions.seq``, then the version; a version without a lineage row first),
        its relations, and whether the harvest this snapshot holds saw the current version
        (``refreshed``; ``last_seen`` only for a record it did not). ``ids`` None: every
        record, one pass over each table."""
        if ids is not None and not ids:
            return {}
        wanted = None if ids is None else list(set(ids))
        states = self._among(_STATE_SQL, wanted)
        if not states:
            return {}
        if wanted is not None:
            wanted = [row[0] for row in states]
        held: dict[str, list[tuple[Any, ...]]] = {}
        for row in self._among(self._records_sql, wanted):
            held.setdefault(row[0], []).append(row)
        lineage = {(rid, v): (seq, seen) for rid, v, seq, seen in self._among(_LINEAGE_SQL, wanted)}
        relations: dict[str, list[StoredRelation]] = {}
        for rid, kind, target, source, detail, date in self._among(_RELATIONS_SQL, wanted):
            relations.setdefault(rid, []).append(
                StoredRelation(kind=kind, target=target, source=source, detail=detail, date=date)
            )
        harvest = self.harvest_id
        found: dict[str, StoredRecord] = {}
        make, no_relations, no_fields = StoredRecord._make, (), (None,) * 10 + ("unknown",)
        for rid, source, current, withdrawn, withdrawn_since in states:
            rows = held.get(rid, ())
            versions = sorted(
                (row[1] for row in rows),
                key=lambda v: (lineage[(rid, v)][0] if (rid, v) in lineage else 0, v),
            )
            fields = next((row[2:] for row in rows if row[1] == current), no_fields)
            seen = lineage.get((rid, current), (None, None))[1]
            refreshed = harvest is not None and seen == harvest
            # StoredRecord's field order: the versions after current_version, withdrawn as a
            # bool, the relations after the flags, refreshed and last_seen, the licence last.
            found[rid] = make(
                (
                    rid,
                    source,
                    current,
                    tuple(versions),
                    bool(withdrawn),
                    withdrawn_since,
                    *fields[:10],
                    tuple(relations[rid]) if rid in relations else no_relations,
                    refreshed,
                    None if refreshed else seen,
                    fields[10],
                )
            )
        return found

    def passages(self, keys: Collection[PassageKey]) -> dict[PassageKey, StoredPassage]:
        if self._warm is not None:
            return self._warm.passages(keys, self._passages)
        return self._passages(keys)

    def _passages(self, keys: Collection[PassageKey]) -> dict[PassageKey, StoredPassage]:
        if not keys:
            return {}
        found: dict[PassageKey, StoredPassage] = {}
        rows = self._rows_of(_PASSAGES_SQL, _PASSAGES_JOIN_SQL, keys, _passage_key)
        for rid, version, path, section, text, folded in rows:
            passage = StoredPassage(
                rid, version, path, section, text, FoldedText(text if folded is None else folded)
            )
            found[passage.key] = passage
        return found

    def passage_versions(self, refs: Collection[PathRef]) -> dict[PathRef, list[StoredPassage]]:
        """Each path's passage in every retained version holding it, oldest first
        (from memory when they are kept warm, else remembered ones from the cache when
        there is one)."""
        if self._warm is not None:
            return self._warm.passage_versions(refs, self._passage_versions_read)
        return self._passage_versions_read(refs)

    def _passage_versions_read(
        self, refs: Collection[PathRef]
    ) -> dict[PathRef, list[StoredPassage]]:
        if self._cache is None:
            return self._passage_versions(refs)
        found = self._cache.passage_versions(
            refs, lambda missing: {k: tuple(v) for k, v in self._passage_versions(missing).items()}
        )
        return {ref: list(held) for ref, held in found.items()}

    def _passage_versions(self, refs: Collection[PathRef]) -> dict[PathRef, list[StoredPassage]]:
        if not refs:
            return {}
        found: dict[PathRef, list[StoredPassage]] = {}
        several: set[str] = set()  # records with a path held in several versions
        make, new_ref = StoredPassage._make, PathRef._make
        for row in self._rows_of(_PASSAGES_SQL, _PASSAGE_VERSIONS_JOIN_SQL, refs, _path_ref):
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
            seq = {(rid, version): n for rid, version, n in self._among(_SEQ_SQL, several)}
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
        rows = self._rows_of(_ANNOTATIONS_SQL, _ANNOTATIONS_JOIN_SQL, keys, _passage_key)
        for rid, version, path, *rest in rows:
            found.setdefault(PassageKey(rid, version, path), []).append(StoredAnnotation(*rest))
        return {k: tuple(v) for k, v in found.items()}


def _passage_key(row: tuple[Any, ...]) -> tuple[str, str, str]:
    return (row[0], row[1], row[2])


def _path_ref(row: tuple[Any, ...]) -> tuple[str, str]:
    return (row[0], row[2])


def _over(estimate: int, budget: int) -> str:
    mib = 1 << 20
    return f"would take ~{estimate / mib:,.0f} MiB, over the budget of {budget / mib:,.0f} MiB"
