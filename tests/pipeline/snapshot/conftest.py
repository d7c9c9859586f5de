"""Fixtures for snapshot tests: the demo corpus built twice, and small spec writers."""

from __future__ import annotations

import shutil
from pathlib import Path

import duckdb

from tests.conftest import ROOT

DEMO_SPEC = ROOT / "snapshots" / "demo.toml"


def index_terms_as_text(con: duckdb.DuckDBPyConnection) -> None:
    """Turn a numbered search index into the layout before schema 4 (terms as text)."""
    con.execute(
        "CREATE TABLE text_terms AS SELECT docid, term, tf FROM search_terms "
        "JOIN search_vocab USING (term_id)"
    )
    con.execute("DROP TABLE search_terms")
    con.execute("DROP TABLE search_vocab")
    con.execute("ALTER TABLE text_terms RENAME TO search_terms")


def migrated_to(con: duckdb.DuckDBPyConnection, schema: int) -> None:
    """Apply and record the first ``schema`` migrations only (a snapshot of that schema)."""
    from pipeline.snapshot.schema import MIGRATIONS

    con.execute(
        "CREATE TABLE schema_migrations (id INTEGER PRIMARY KEY, name VARCHAR NOT NULL, "
        "applied_at VARCHAR NOT NULL)"
    )
    for migration in MIGRATIONS[:schema]:
        con.execute(migration.sql)
        con.execute(
            "INSERT INTO schema_migrations VALUES (?, ?, 'then')", [migration.id, migration.name]
        )


DEMO_REPLAY = ROOT / "snapshots" / "demo" / "replay"
DEMO_UPDATE = ROOT / "snapshots" / "demo" / "replay-update"


def copy_demo_spec(folder: Path) -> Path:
    """The demo spec in ``folder`` (its corpus folder is ``folder/demo``)."""
    folder.mkdir(parents=True, exist_ok=True)
    return Path(shutil.copy(DEMO_SPEC, folder / "demo.toml"))
