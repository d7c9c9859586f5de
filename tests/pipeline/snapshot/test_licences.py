"""The licence column (migration 5): what a build records, how a snapshot from before it
reads (every licence unknown), and how a child of such a snapshot learns the licences."""

from __future__ import annotations

import shutil
from pathlib import Path

import duckdb

from audit.duckdb_corpus import DuckDBCorpus
from pipeline.settings import Settings
from pipeline.snapshot.build import build_snapshot
from pipeline.snapshot.manifest import read_manifest, sealed_with, sha256_file, write_manifest
from pipeline.snapshot.schema import MIGRATIONS, SCHEMA_VERSION
from tests.conftest import TEST_KEYRING
from tests.pipeline.snapshot.conftest import DEMO_REPLAY, DEMO_UPDATE, copy_demo_spec

LICENCES = "SELECT record_id, version, licence, licence_raw FROM records ORDER BY ALL"


def query(path: Path, sql: str) -> list[tuple[object, ...]]:
    con = duckdb.connect(str(path), read_only=True)
    try:
        return con.execute(sql).fetchall()
    finally:
        con.close()


def _as_schema_4(path: Path, folder: Path) -> Path:
    """A copy of snapshot ``path`` in the layout of schema 4 (no licence columns), its
    manifest sealed again, as a snapshot built before migration 5 would be."""
    folder.mkdir(parents=True, exist_ok=True)
    target = Path(shutil.copyfile(path, folder / path.name))
    con = duckdb.connect(str(target))
    try:
        # built before the record_id indexes too (DuckDB alters no table an index depends on)
        for (name,) in con.execute("SELECT index_name FROM duckdb_indexes()").fetchall():
            con.execute(f'DROP INDEX "{name}"')
        con.execute("ALTER TABLE records DROP COLUMN licence")
        con.execute("ALTER TABLE records DROP COLUMN licence_raw")
        con.execute("DELETE FROM schema_migrations WHERE id = 5")
        con.execute("UPDATE meta SET value = '4' WHERE key = 'schema_version'")
    finally:
        con.close()
    old = read_manifest(path).model_copy(
        update={"sha256": sha256_file(target), "size": target.stat().st_size, "schema_version": 4}
    )
    write_manifest(target, sealed_with(old, TEST_KEYRING))
    return target


def test_migration_5_is_the_licence_columns() -> None:
    assert SCHEMA_VERSION >= 5 == MIGRATIONS[4].id
    assert MIGRATIONS[4].name == "record_licences"


def test_a_build_records_each_sources_licence(demo_pair: tuple[Path, Path]) -> None:
    by_source = {
        str(source): str(names)
        for source, names in query(
            demo_pair[0],
            "SELECT source, string_agg(DISTINCT licence, ',' ORDER BY licence) FROM records "
            "GROUP BY source",
        )
    }
    assert by_source == {
        "clinicaltrials": "public-domain",
        "openfda": "public-domain",
        "pubmed": "unknown",
        "europepmc": "CC-BY,CC0-1.0",  # the preprint (license "cc by"), the full text (CC0 URL)
    }


def test_a_snapshot_from_before_licences_reads_every_licence_as_unknown(
    tmp_path: Path, demo_pair: tuple[Path, Path]
) -> None:
    old = _as_schema_4(demo_pair[0], tmp_path / "old")
    with DuckDBCorpus(old) as corpus, DuckDBCorpus(demo_pair[0]) as new:
        ids = [str(r[0]) for r in query(old, "SELECT record_id FROM record_state")]
        assert {r.licence for r in corpus.records(ids).values()} == {"unknown"}
        assert new.records(["pmcid:PMC99000001"])["pmcid:PMC99000001"].licence == "CC0-1.0"


def test_a_child_of_a_snapshot_from_before_licences_records_them_for_unchanged_versions(
    tmp_path: Path, demo_pair: tuple[Path, Path]
) -> None:
    old = _as_schema_4(demo_pair[0], tmp_path / "old")
    child = build_snapshot(
        copy_demo_spec(tmp_path / "spec"),
        keyring=TEST_KEYRING,
        parent=old,
        replay=[DEMO_UPDATE, DEMO_REPLAY],
        settings=Settings(),
        resume=False,
    ).path
    seen = (
        "SELECT r.record_id, r.version, r.licence, r.licence_raw FROM records r "
        "JOIN record_versions v USING (record_id, version) "
        "WHERE v.last_seen = (SELECT value FROM meta WHERE key = 'snapshot_id') ORDER BY ALL"
    )
    unseen = seen.replace("v.last_seen =", "v.last_seen <>")
    # every version the child's harvest saw has the licence a parent with licences gives it
    assert query(child, seen) == query(demo_pair[1], seen)
    assert query(child, "SELECT count(*) FROM records WHERE licence = 'CC0-1.0'") == [(1,)]
    # a version no harvest saw again (an old trial version) keeps what its parent said
    gone = query(child, unseen)
    assert gone and {row[2] for row in gone} == {"unknown"}
