"""DuckDB access for snapshots: connections, migrations and batched writes.

Rows are written in batches through one columnar JSON file per batch (``{"column": [values,
…], …}``, UTF-8) that DuckDB reads with ``read_json`` and unnests — about 100,000 rows/s, where
``executemany`` manages a few hundred. Python lists are never passed as query parameters:
DuckDB's binding converts them element by element (and retries an import of numpy for each),
so id lists travel as one string joined with :data:`SEP` and are split in SQL.

SQL text is assembled only from the schema's own table and column names and from the paths of
our own batch files (quoted); hence the ``noqa: S608`` marks.

Nothing here decides versions (that is :mod:`pipeline.snapshot.lineage`) or talks to the
network.
"""

from __future__ import annotations

import base64
import hashlib
import itertools
import zlib
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import duckdb
import duckdb_ext

from pipeline.errors import SnapshotError
from pipeline.snapshot.schema import MIGRATIONS, SCHEMA_VERSION

SEP = "\x1f"  # joins id lists passed as one string (no id contains it)
BUILD_CHECKPOINT = "256MB"  # write-ahead log size that triggers a checkpoint while building
EXTENSION_DIRECTORY = str(Path(duckdb_ext.__path__[0]) / "extensions")

# Tables a snapshot must hold, and those carried from a parent into its child.
TABLES = (
    "schema_migrations",
    "meta",
    "sources",
    "records",
    "record_versions",
    "record_state",
    "passages",
    "annotations",
    "relations",
    "responses",
    "harvest_log",
    "search_docs",
    "search_terms",
    "search_vocab",
    "search_works",
    "search_postings",
)
# Tables that only snapshots with this migration applied hold (older ones stay readable).
TABLE_SINCE = {
    "search_docs": 2,
    "search_terms": 2,
    "search_vocab": 4,
    "search_works": 6,
    "search_postings": 6,
}
CARRIED_TABLES = (
    "records",
    "record_versions",
    "record_state",
    "passages",
    "annotations",
    "relations",
    "search_docs",
    "search_vocab",  # before search_terms: a parent without it has its terms numbered then
    "search_terms",
)

_COLUMNS: dict[str, tuple[tuple[str, str], ...]] = {
    "records": (
        ("record_id", "VARCHAR"),
        ("version", "VARCHAR"),
        ("source", "VARCHAR"),
        ("content_hash", "VARCHAR"),
        ("version_date", "VARCHAR"),
        ("title", "VARCHAR"),
        ("doi", "VARCHAR"),
        ("pmid", "VARCHAR"),
        ("pmcid", "VARCHAR"),
        ("year", "INTEGER"),
        ("journal", "VARCHAR"),
        ("authors", "VARCHAR"),
        ("publication_types", "VARCHAR"),
        ("content_type", "VARCHAR"),
        ("status", "VARCHAR"),
        ("retracted", "BOOLEAN"),
        ("expression_of_concern", "BOOLEAN"),
        ("preprint", "BOOLEAN"),
        ("metadata", "VARCHAR"),
        ("licence", "VARCHAR"),
        ("licence_raw", "VARCHAR"),
    ),
    "record_versions": (
        ("record_id", "VARCHAR"),
        ("version", "VARCHAR"),
        ("seq", "INTEGER"),
        ("content_hash", "VARCHAR"),
        ("first_seen", "VARCHAR"),
        ("last_seen", "VARCHAR"),
        ("origin", "VARCHAR"),
    ),
    "passages_docs": (  # passages staged with their search document id
        ("docid", "BIGINT"),
        ("record_id", "VARCHAR"),
        ("version", "VARCHAR"),
        ("path", "VARCHAR"),
        ("seq", "INTEGER"),
        ("section", "VARCHAR"),
        ("text", "VARCHAR"),
        ("folded", "VARCHAR"),
        ("words", "VARCHAR"),  # index words split by the harvest (index.ascii_words) or NULL
    ),
    "passages": (
        ("record_id", "VARCHAR"),
        ("version", "VARCHAR"),
        ("path", "VARCHAR"),
        ("seq", "INTEGER"),
        ("section", "VARCHAR"),
        ("text", "VARCHAR"),
        ("folded", "VARCHAR"),
    ),
    "annotations": (
        ("record_id", "VARCHAR"),
        ("version", "VARCHAR"),
        ("path", "VARCHAR"),
        ("start", "INTEGER"),
        ("end", "INTEGER"),
        ("text", "VARCHAR"),
        ("type", "VARCHAR"),
        ("identifier", "VARCHAR"),
    ),
    "relations": (
        ("record_id", "VARCHAR"),
        ("kind", "VARCHAR"),
        ("target", "VARCHAR"),
        ("source", "VARCHAR"),
        ("detail", "VARCHAR"),
        ("date", "VARCHAR"),
        ("first_seen", "VARCHAR"),
    ),
    "responses": (
        ("id", "INTEGER"),
        ("source", "VARCHAR"),
        ("method", "VARCHAR"),
        ("url", "VARCHAR"),
        ("status", "INTEGER"),
        ("content_type", "VARCHAR"),
        ("body", "VARCHAR"),  # base64 of the zlib bytes in the batch file; BLOB in the table
        ("sha256", "VARCHAR"),
        ("fetched_at", "VARCHAR"),
        ("request_body", "VARCHAR"),
    ),
    "harvest_log": (
        ("ts", "VARCHAR"),
        ("source", "VARCHAR"),
        ("step", "VARCHAR"),
        ("url", "VARCHAR"),
        ("status", "INTEGER"),
        ("ok", "BOOLEAN"),
        ("records", "INTEGER"),
        ("detail", "VARCHAR"),
    ),
    "seen": (("record_id", "VARCHAR"), ("source", "VARCHAR"), ("version", "VARCHAR")),
    "keys": (("record_id", "VARCHAR"), ("version", "VARCHAR")),
    "licences": (  # the licence of an existing version, as a harvest saw it again
        ("record_id", "VARCHAR"),
        ("version", "VARCHAR"),
        ("licence", "VARCHAR"),
        ("licence_raw", "VARCHAR"),
    ),
}


# How a staged column becomes a table column, where it is not copied as it is.
_SELECT: dict[str, dict[str, str]] = {
    "responses": {"body": "from_base64(body)::BLOB"},
}


def connect(path: Path, *, read_only: bool = False) -> duckdb.DuckDBPyConnection:
    """A connection to ``path`` with the bundled fts extension available (``LOAD fts``) and
    DuckDB's progress bar off: left on, a statement that runs over two seconds draws it on
    standard output, into ``--json`` output and an MCP server's protocol stream."""
    try:
        con = duckdb.connect(
            str(path),
            read_only=read_only,
            config={"extension_directory": EXTENSION_DIRECTORY},
        )
    except duckdb.Error as error:
        raise SnapshotError(f"cannot open snapshot {path}: {first_line(error)}") from None
    con.execute("SET enable_progress_bar = false")  # a setting of the connection, not global
    return con


def first_line(error: BaseException) -> str:
    """The first line of a DuckDB error (the rest is context meant for developers)."""
    text = str(error).strip()
    return text.splitlines()[0] if text else type(error).__name__


def load_fts(con: duckdb.DuckDBPyConnection) -> None:
    """Load the fts extension of the ``duckdb-ext-fts`` wheel (its ``stem`` function)."""
    try:
        con.execute("LOAD fts")
    except duckdb.Error as error:
        raise SnapshotError(
            f"cannot load DuckDB's fts extension: {first_line(error)}",
            advice="reinstall the duckdb-ext-fts wheel matching your duckdb version",
        ) from None


def now_text() -> str:
    """The current UTC time as ISO 8601 with seconds (``2025-06-02T10:00:00Z``)."""
    return datetime.now(UTC).strftime("%Y-%m-%dT%H:%M:%SZ")


def limit_memory(
    con: duckdb.DuckDBPyConnection, work: Path, *, memory: str, threads: int | None = None
) -> None:
    """Bound DuckDB's memory to ``memory`` (it spills to ``work``), so a build's RSS does not
    grow with the corpus: the caller passes ``Settings.build_memory``, which
    ``CITESEAL_BUILD_MEMORY`` (e.g. ``2GB``) sets (default :data:`pipeline.settings.BUILD_MEMORY`).
    ``threads`` caps DuckDB's worker threads (None: one per core)."""
    work.mkdir(parents=True, exist_ok=True)
    con.execute(f"SET memory_limit = '{_sql_text(memory.strip())}'")
    con.execute(f"SET temp_directory = '{_sql_text(str(work / 'spill'))}'")
    con.execute("SET preserve_insertion_order = false")
    # DuckDB checkpoints whenever its write-ahead log passes this size. A build checkpoints
    # when its writer reopens the file (every build.REOPEN_EVERY batches, about 60 MB of log),
    # so this is only a backstop: a checkpoint triggered in the middle of an index query cost
    # 1-3 s where the same work at a reopen costs 1 s, and at the default (16 MB) nearly every
    # batch was checkpointed, which doubled the cost of indexing
    con.execute(f"SET checkpoint_threshold = '{BUILD_CHECKPOINT}'")
    if threads is not None:
        con.execute(f"SET threads = {int(threads)}")


RECORD_ID_INDEXED = ("records", "record_versions", "passages", "annotations", "relations")
"""The tables the audit reads by ``record_id`` (``record_state``'s primary key indexes it)."""


def index_record_ids(con: duckdb.DuckDBPyConnection) -> None:
    """Index ``record_id`` in the tables the audit looks records up in, once every row is
    written (a build or backfill, just before its last checkpoint; building an index once is
    cheaper than keeping it up to date through every insert). DuckDB answers the audit's
    literal ``record_id IN (…)`` look-ups (``audit/duckdb_corpus.py``) and a search's look-up
    of its page's passages (:mod:`pipeline.snapshot.ranked`) through such an index, so one
    answer or one page costs what it shows, not a scan of a million passages. Not a schema
    migration: the tables and their rows are unchanged, and a snapshot written before reads the
    same, only slower. Last because DuckDB alters no table an index depends on: every
    migration runs on a fresh file before this (parents are copied, never migrated)."""
    for table in RECORD_ID_INDEXED:
        con.execute(f"CREATE INDEX IF NOT EXISTS {table}_record_id ON {table} (record_id)")


def checkpoint(con: duckdb.DuckDBPyConnection) -> None:
    """Write everything to the database file."""
    con.execute("CHECKPOINT")


def snapshot_totals(con: duckdb.DuckDBPyConnection) -> tuple[int, int, int]:
    """``(records, record versions, passages)`` of a snapshot."""
    row = con.execute(
        "SELECT (SELECT count(*) FROM record_state), (SELECT count(*) FROM record_versions), "
        "(SELECT count(*) FROM passages)"
    ).fetchone()
    assert row is not None
    return int(row[0]), int(row[1]), int(row[2])


KEY_CHECK_ROWS = 250_000  # rows grouped at once by duplicate_keys
_KEYS = (
    ("records", "record_id, version"),
    ("record_versions", "record_id, version"),
    ("passages", "record_id, version, path"),
    ("search_vocab", "term"),
    ("search_vocab", "term_id"),
)


def table_names(con: duckdb.DuckDBPyConnection) -> set[str]:
    """The tables of the connection's current database (its ``main`` schema)."""
    rows = con.execute(
        "SELECT table_name FROM duckdb_tables() WHERE database_name = current_database() "
        "AND schema_name = 'main'"
    ).fetchall()
    return {str(row[0]) for row in rows}


def duplicate_keys(con: duckdb.DuckDBPyConnection) -> list[str]:
    """Keys held twice, as ``table (key, …)``; empty when every key is unique. Passages (since
    schema 3) and the term list of the search index (schema 4) have no index to refuse a
    duplicate (they are unique by construction), so a snapshot is checked when it is sealed
    and verified.

    The keys are grouped in slices of at most :data:`KEY_CHECK_ROWS` rows (by a hash of the
    key's first column, so the copies of a key meet in one slice): memory stays that of one
    slice however large the snapshot (all passage keys at once ran out of a build's 128 MB
    limit at 1.5 million passages)."""
    present = table_names(con)
    found: list[str] = []
    for table, key in _KEYS:
        if table not in present:
            continue  # a snapshot from before the migration that added it
        counted = con.execute(f"SELECT count(*) FROM {table}").fetchone()  # noqa: S608
        slices = max(1, -(-int(counted[0] if counted else 0) // KEY_CHECK_ROWS))
        first = key.split(",")[0].strip()
        for part in range(slices):
            where = f"WHERE hash({first}) % {slices} = {part}" if slices > 1 else ""
            rows = con.execute(
                f"SELECT {key} FROM {table} {where} "  # noqa: S608
                "GROUP BY ALL HAVING count(*) > 1 LIMIT 3"
            ).fetchall()
            found += [f"{table} ({', '.join(str(v) for v in row)})" for row in rows]
    return found


def require_unique_keys(con: duckdb.DuckDBPyConnection) -> None:
    """Raise :class:`SnapshotError` when :func:`duplicate_keys` finds a key held twice.

    Run on the build's own connection before it is sealed, within the build's memory limit:
    on a fresh connection at DuckDB's default limit the grouping of every passage key made
    the peak RSS of a build grow with its corpus."""
    duplicates = duplicate_keys(con)
    if duplicates:
        raise SnapshotError(f"a key is held twice: {'; '.join(duplicates)}")


def insert_sources(con: duckdb.DuckDBPyConnection, rows: Sequence[Sequence[object]]) -> None:
    """Rows of the ``sources`` table (source, status, records, passages, failed, detail)."""
    if rows:
        con.executemany("INSERT INTO sources VALUES (?, ?, ?, ?, ?, ?)", rows)


# -- migrations -------------------------------------------------------------------------------


def applied_migrations(con: duckdb.DuckDBPyConnection) -> list[tuple[int, str]]:
    """``(id, name)`` of every migration recorded in ``schema_migrations``, in order."""
    present = con.execute(
        "SELECT count(*) FROM information_schema.tables "
        "WHERE table_schema = 'main' AND table_name = 'schema_migrations'"
    ).fetchone()
    if not present or not present[0]:
        return []
    rows = con.execute("SELECT id, name FROM schema_migrations ORDER BY id").fetchall()
    return [(int(i), str(n)) for i, n in rows]


def apply_migrations(con: duckdb.DuckDBPyConnection, *, now: str | None = None) -> list[int]:
    """Apply every migration not yet recorded, in order; return the ids applied."""
    con.execute(
        "CREATE TABLE IF NOT EXISTS schema_migrations "
        "(id INTEGER PRIMARY KEY, name VARCHAR NOT NULL, applied_at VARCHAR NOT NULL)"
    )
    done = dict(applied_migrations(con))
    applied: list[int] = []
    for migration in MIGRATIONS:
        if migration.id in done:
            if done[migration.id] != migration.name:
                raise SnapshotError(
                    f"migration {migration.id} is recorded as {done[migration.id]!r}, "
                    f"expected {migration.name!r}"
                )
            continue
        con.execute("BEGIN TRANSACTION")
        con.execute(migration.sql)
        con.execute(
            "INSERT INTO schema_migrations VALUES (?, ?, ?)",
            [migration.id, migration.name, now or now_text()],
        )
        con.execute("COMMIT")
        applied.append(migration.id)
    return applied


def check_schema(con: duckdb.DuckDBPyConnection, where: str) -> None:
    """Raise :class:`SnapshotError` unless every migration and table is present as expected."""
    recorded = applied_migrations(con)
    expected = [(m.id, m.name) for m in MIGRATIONS]
    if not recorded:
        raise SnapshotError(f"{where} is not a citeseal snapshot (no schema_migrations table)")
    newer = [m for m in recorded if m[0] > SCHEMA_VERSION]
    if newer:
        raise SnapshotError(
            f"{where} has schema migration {newer[0][0]} ({newer[0][1]}); this citeseal knows "
            f"up to {SCHEMA_VERSION}",
            advice="upgrade citeseal",
        )
    if recorded != expected[: len(recorded)]:
        raise SnapshotError(f"{where} records unexpected migrations: {recorded}")
    present = table_names(con)
    applied = {m[0] for m in recorded}
    missing = [t for t in TABLES if t not in present and TABLE_SINCE.get(t, 1) in applied]
    if missing:
        raise SnapshotError(f"{where} lacks the table {missing[0]!r}")


# -- batched writes ---------------------------------------------------------------------------


@dataclass(frozen=True)
class Staged:
    """Rows of one table written to a batch file, waiting to be inserted."""

    kind: str
    path: Path
    size: int  # bytes of the file (read_json needs buffers this large)

    @property
    def source(self) -> str:
        """A subquery yielding the staged rows."""
        columns = _COLUMNS[self.kind]
        spec = ", ".join(f"'{name}': '{kind_}[]'" for name, kind_ in columns)
        unnest = ", ".join(f'unnest("{name}") AS "{name}"' for name, _ in columns)
        return (
            f"(SELECT {unnest} FROM read_json('{_sql_text(str(self.path))}', "  # noqa: S608
            f"format = 'unstructured', columns = {{{spec}}}, "
            f"maximum_object_size = {self.size + 1024}))"
        )

    def insert(self, con: duckdb.DuckDBPyConnection, table: str) -> int:
        """Append the staged rows to ``table``, delete the file; returns the rows written."""
        names = [name for name, _ in _COLUMNS[self.kind]]
        special = _SELECT.get(table, {})
        select = ", ".join(f'{special[n]} AS "{n}"' if n in special else f'"{n}"' for n in names)
        quoted = ", ".join(f'"{n}"' for n in names)
        sql = f"INSERT INTO {table} ({quoted}) SELECT {select} FROM {self.source}"  # noqa: S608
        row = con.execute(sql).fetchone()
        self.done()
        return int(row[0]) if row else 0

    def done(self) -> None:
        self.path.unlink(missing_ok=True)


class BatchWriter:
    """Stages rows as columnar JSON files in ``workdir`` (no database work: any thread)."""

    def __init__(self, workdir: Path) -> None:
        self.workdir = workdir
        workdir.mkdir(parents=True, exist_ok=True)
        self._counter = itertools.count(1)

    def stage(self, kind: str, rows: Iterable[Sequence[Any]]) -> Staged | None:
        """Write ``rows`` (tuples in the column order of ``kind``); None when there are none."""
        columns = _COLUMNS[kind]
        values = list(zip(*rows, strict=True))
        if not values:
            return None
        path = self.workdir / f"{kind}-{next(self._counter)}.json"
        # pydantic_core's encoder (Rust) writes the same JSON as json.dumps seven times faster;
        # imported here so that the writer process, which never stages, does not load it
        from pydantic_core import to_json

        data = {name: list(column) for (name, _), column in zip(columns, values, strict=True)}
        encoded = to_json(data)
        path.write_bytes(encoded)
        return Staged(kind, path, len(encoded))

    def insert(
        self,
        con: duckdb.DuckDBPyConnection,
        table: str,
        rows: Iterable[Sequence[Any]],
        *,
        kind: str | None = None,
    ) -> int:
        """Stage and insert at once; returns the number of rows written."""
        staged = self.stage(kind or table, rows)
        return staged.insert(con, table) if staged is not None else 0


def insert_staged(
    con: duckdb.DuckDBPyConnection, staged: Sequence[tuple[str, Staged | None]]
) -> None:
    """Insert each staged batch file into its table, in order (None: nothing staged)."""
    for table, rows in staged:
        if rows is not None:
            rows.insert(con, table)


def _sql_text(text: str) -> str:
    return text.replace("'", "''")


# -- rows ------------------------------------------------------------------------------------


@dataclass(frozen=True)
class ResponseRow:
    """One raw response to keep: the body is compressed on the way in."""

    source: str | None
    method: str
    url: str
    status: int
    content_type: str
    body: bytes
    fetched_at: str
    request_body: str | None = None

    def row(self, response_id: int) -> tuple[Any, ...]:
        packed = base64.b64encode(zlib.compress(self.body, 1)).decode("ascii")
        return (
            response_id,
            self.source,
            self.method,
            self.url,
            self.status,
            self.content_type,
            packed,
            hashlib.sha256(self.body).hexdigest(),
            self.fetched_at,
            self.request_body,
        )


def unpack_body(blob: bytes | bytearray | memoryview | None) -> bytes:
    """The raw body of a ``responses.body`` value."""
    return zlib.decompress(bytes(blob)) if blob is not None else b""


def write_meta(con: duckdb.DuckDBPyConnection, meta: Mapping[str, str | None]) -> None:
    """Insert or replace meta keys."""
    for key, value in meta.items():
        con.execute("INSERT OR REPLACE INTO meta VALUES (?, ?)", [key, value])


def read_meta(con: duckdb.DuckDBPyConnection) -> dict[str, str]:
    """The meta table as a dict; a key whose value is NULL is absent (never the text "None")."""
    rows = con.execute("SELECT key, value FROM meta").fetchall()
    return {str(k): str(v) for k, v in rows if v is not None}
