"""``snapshot export PATH --parquet DIR``: Hive-partitioned Parquet for Spark, Trino, DuckDB.

Layout: ``DIR/<table>/source=<source>/data_0.parquet`` for the tables that belong to a
source (``records``, ``record_versions``, ``record_state``, ``passages``, ``annotations``,
``relations``, ``harvest_log``, ``sources`` and, with ``responses=True``, ``responses``);
``DIR/<table>/data_0.parquet`` for ``meta`` and ``schema_migrations``. Tables without a
``source`` column get the source of their record from ``record_state``. The snapshot's
manifest is copied to ``DIR/manifest.json`` so the export says where it came from.
"""

from __future__ import annotations

import shutil
from dataclasses import dataclass
from pathlib import Path

import duckdb

from pipeline.errors import SnapshotError
from pipeline.snapshot.manifest import manifest_path
from pipeline.snapshot.store import check_schema, connect, first_line

_BY_RECORD = ("record_versions", "passages", "annotations")
_WITH_SOURCE = ("records", "record_state", "relations", "harvest_log", "sources")
_PLAIN = ("meta", "schema_migrations")
_ORDER = (
    "records",
    "record_versions",
    "record_state",
    "passages",
    "annotations",
    "relations",
    "harvest_log",
    "sources",
)


@dataclass(frozen=True)
class ExportedTable:
    table: str
    rows: int
    path: Path


def export_parquet(path: Path, out: Path, *, responses: bool = False) -> list[ExportedTable]:
    """Write every table of ``path`` under ``out`` (which must be absent or empty)."""
    if out.exists() and (not out.is_dir() or any(out.iterdir())):
        raise SnapshotError(f"export folder {out} exists and is not empty")
    out.mkdir(parents=True, exist_ok=True)
    con = connect(path, read_only=True)
    written: list[ExportedTable] = []
    try:
        check_schema(con, str(path))
        tables = [*_ORDER, *(("responses",) if responses else ())]
        for table in tables:
            if table in _BY_RECORD:
                query = (
                    f"SELECT t.*, coalesce(s.source, 'unknown') AS source FROM {table} t "  # noqa: S608
                    "LEFT JOIN record_state s USING (record_id)"
                )
            else:
                query = f"SELECT * REPLACE (coalesce(source, 'unknown') AS source) FROM {table}"  # noqa: S608
            written.append(_copy(con, table, query, out / table, partitioned=True))
        for table in _PLAIN:
            query = f"SELECT * FROM {table}"  # noqa: S608
            written.append(_copy(con, table, query, out / table, partitioned=False))
    except duckdb.Error as error:
        raise SnapshotError(f"cannot export {path}: {first_line(error)}") from None
    finally:
        con.close()
    manifest = manifest_path(path)
    if manifest.is_file():
        shutil.copyfile(manifest, out / "manifest.json")
    return written


def _copy(
    con: duckdb.DuckDBPyConnection, table: str, query: str, target: Path, *, partitioned: bool
) -> ExportedTable:
    row = con.execute(f"SELECT count(*) FROM ({query})").fetchone()  # noqa: S608
    rows = int(row[0]) if row else 0
    where = str(target).replace("'", "''")
    if partitioned:
        con.execute(
            f"COPY ({query}) TO '{where}' (FORMAT parquet, PARTITION_BY (source), "
            "OVERWRITE_OR_IGNORE)"
        )
        if rows == 0:
            target.mkdir(parents=True, exist_ok=True)
    else:
        target.mkdir(parents=True, exist_ok=True)
        con.execute(f"COPY ({query}) TO '{where}/data_0.parquet' (FORMAT parquet)")
    return ExportedTable(table=table, rows=rows, path=target)
