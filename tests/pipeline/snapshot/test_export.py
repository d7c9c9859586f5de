"""Parquet export: Hive-partitioned by table and source, readable back by DuckDB."""

from __future__ import annotations

from pathlib import Path

import duckdb
import pytest

from pipeline.errors import SnapshotError
from pipeline.snapshot.export import export_parquet


def count(path: Path, sql: str) -> int:
    con = duckdb.connect(str(path), read_only=True)
    try:
        row = con.execute(sql).fetchone()
    finally:
        con.close()
    assert row is not None
    return int(row[0])


def test_export_is_readable_back_with_the_same_rows(
    demo_pair: tuple[Path, Path], tmp_path: Path
) -> None:
    _, second = demo_pair
    out = tmp_path / "parquet"
    tables = {t.table: t.rows for t in export_parquet(second, out)}
    assert set(tables) == {
        "records",
        "record_versions",
        "record_state",
        "passages",
        "annotations",
        "relations",
        "harvest_log",
        "sources",
        "meta",
        "schema_migrations",
    }
    assert (out / "manifest.json").is_file()
    assert (out / "passages" / "source=clinicaltrials").is_dir()
    assert (out / "meta" / "data_0.parquet").is_file()
    reader = duckdb.connect()
    for table in ("records", "record_versions", "passages", "relations", "sources"):
        expected = count(second, f"SELECT count(*) FROM {table}")  # noqa: S608
        assert tables[table] == expected
        got = reader.execute(
            f"SELECT count(*) FROM read_parquet('{out}/{table}/*/*.parquet', "  # noqa: S608
            "hive_partitioning = true)"
        ).fetchone()
        assert got == (expected,)
    versions = reader.execute(
        f"SELECT source, count(*) FROM read_parquet('{out}/record_versions/*/*.parquet', "  # noqa: S608
        "hive_partitioning = true) GROUP BY source ORDER BY source"
    ).fetchall()
    assert ("clinicaltrials", 4) in versions and ("openfda", 2) in versions
    text = reader.execute(
        f"SELECT text FROM read_parquet('{out}/passages/*/*.parquet', hive_partitioning = true) "  # noqa: S608
        "WHERE record_id = 'nct:NCT99000001' AND version = '2025-01-15' "
        "AND path = 'trial.brief_summary.1'"
    ).fetchone()
    assert text is not None and "zentravir" in text[0]


def test_export_refuses_a_folder_that_is_not_empty(
    demo_pair: tuple[Path, Path], tmp_path: Path
) -> None:
    (tmp_path / "keep.txt").write_text("mine")
    with pytest.raises(SnapshotError) as caught:
        export_parquet(demo_pair[0], tmp_path)
    assert str(caught.value) == f"export folder {tmp_path} exists and is not empty"
    assert [p.name for p in tmp_path.iterdir()] == ["keep.txt"]
