"""``scale ingest`` on Spark (local mode) against ``snapshot build`` over the same files.

The generated baseline (3 files) and update file (revisions, new records, a deletion, a new
retraction) go through both: ``snapshot build`` as a lineage (the baseline, then a child with
the update), ``scale ingest`` + ``scale snapshot`` at once. Records, versions, passages,
states and relations must agree row for row, the generation ids standing for the builds'
snapshot ids.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import duckdb
import pytest

from pipeline.scale.folder import read_manifest
from pipeline.scale.generate import Generated
from tests.cli import citeseal
from tests.conftest import TEST_KEY_HEX
from tests.pipeline.scale.conftest import Lineage

QUERIES = {
    "records": "SELECT * EXCLUDE (licence, licence_raw), licence, licence_raw FROM records",
    "passages": "SELECT record_id, version, path, seq, section, text, folded FROM passages",
    "versions": "SELECT record_id, version, seq, content_hash, first_seen, last_seen, origin "
    "FROM record_versions",
    "state": "SELECT record_id, source, current_version, withdrawn, withdrawn_since "
    "FROM record_state",
    "relations": "SELECT record_id, kind, target, source, detail, date, first_seen FROM relations",
}


def rows(
    path: Path, query: str, ids: dict[str, str] | None = None, params: tuple[str, ...] = ()
) -> list[tuple[Any, ...]]:
    """The rows of ``query`` in ``path``, sorted, with snapshot ids renamed by ``ids``."""
    con = duckdb.connect(str(path), read_only=True)
    try:
        found = con.execute(query, list(params)).fetchall()
    finally:
        con.close()
    rename = ids or {}
    return sorted(tuple(rename.get(v, v) if isinstance(v, str) else v for v in r) for r in found)


def snapshot_id(path: Path) -> str:
    return rows(path, "SELECT value FROM meta WHERE key = 'snapshot_id'")[0][0]


@pytest.mark.parametrize("table", list(QUERIES))
def test_scale_gives_the_rows_snapshot_build_gives(
    table: str, lineage: Lineage, scale_folder: Path, scale_snapshot: Path
) -> None:
    generations = read_manifest(scale_folder).generations
    builds = {
        snapshot_id(lineage.first): generations[0],
        snapshot_id(lineage.second): generations[1],
    }
    expected = rows(lineage.second, QUERIES[table], builds)
    assert expected  # the generated files hold rows of every table
    assert rows(scale_snapshot, QUERIES[table]) == expected


def test_the_update_moved_the_lineage_on(generated: Generated, scale_snapshot: Path) -> None:
    """What the comparison stands on: the update's revisions are second versions, its deletion
    a withdrawal, its retraction a retracted current version with its notice."""
    state = {r[0]: r[1:] for r in rows(scale_snapshot, QUERIES["state"])}
    versions = rows(scale_snapshot, "SELECT record_id, count(*) FROM record_versions GROUP BY 1")
    counts = dict(versions)
    assert all(counts[rid] == 2 for rid in generated.revised)
    (gone,) = generated.deleted
    assert state[gone][2] is True and state[gone][3] == "files-pubmed99n0004"
    (target,) = generated.retracted
    current = rows(
        scale_snapshot,
        "SELECT r.retracted FROM records r JOIN record_state s ON s.record_id = r.record_id "
        "AND s.current_version = r.version WHERE r.record_id = $1",
        params=(target,),
    )
    assert current == [(True,)]
    assert all(state[rid][1] == "1" for rid in generated.added)


def test_every_table_is_hive_partitioned_parquet_with_a_record_id(scale_folder: Path) -> None:
    for table in ("records", "passages", "versions", "state", "relations"):
        parts = list((scale_folder / table / "source=pubmed").glob("*.parquet"))
        assert parts, table
        con = duckdb.connect()
        where = str(scale_folder / table / "**" / "*.parquet")
        columns = [
            d[0]
            for d in con.execute(
                "SELECT * FROM read_parquet($1, hive_partitioning = true) LIMIT 0", [where]
            ).description
        ]
        con.close()
        assert "record_id" in columns and "source" in columns, table
    assert not [p for p in scale_folder.parent.iterdir() if p.name.startswith(".")]


def test_a_handle_minted_from_a_small_snapshot_verifies_against_the_big_one(
    lineage: Lineage, generated: Generated, scale_snapshot: Path, tmp_path: Path
) -> None:
    """A handle pinned to version 1 of a record the update revised, minted from the first
    build (the baseline only), quoted as issued: ok against the scale snapshot, flagged
    version_changed; a deleted record's handle is withdrawn there."""
    env = {"CITESEAL_KEY": TEST_KEY_HEX, "CITESEAL_DATA_DIR": str(tmp_path / "data")}
    revised = generated.revised[0]
    text = rows(
        lineage.first,
        "SELECT text FROM passages WHERE record_id = $1 AND path = 'abstract.1'",
        params=(revised,),
    )[0][0]
    (gone,) = generated.deleted
    minted = citeseal("handle", "mint", f"{revised}@1/abstract.1", f"{gone}@1/title", env=env)
    assert minted.returncode == 0, minted.stderr
    good, withdrawn = minted.stdout.split()
    quote = " ".join(text.split()[:6])
    answer = tmp_path / "answer.md"
    answer.write_text(f'A synthetic cohort [{good} "{quote}"].\n\nA gone one [{withdrawn}].\n')
    done = citeseal("audit", str(answer), "-s", str(scale_snapshot), "-f", "json", env=env)
    assert done.returncode == 0, done.stderr
    report = json.loads(done.stdout)
    verdicts = {
        c["handle"]: (c["verdict"], sorted(c.get("flags", [])))
        for s in report["sentences"]
        for c in s["citations"]
    }
    assert verdicts[good][0] == "ok" and "version_changed" in str(verdicts[good][1])
    assert verdicts[withdrawn][0] == "withdrawn"


def test_the_scale_snapshot_is_sealed_and_searchable(scale_snapshot: Path, tmp_path: Path) -> None:
    env = {"CITESEAL_KEY": TEST_KEY_HEX, "CITESEAL_DATA_DIR": str(tmp_path / "data")}
    verified = citeseal("snapshot", "verify", str(scale_snapshot), env=env)
    assert verified.returncode == 0, verified.stdout + verified.stderr
    found = citeseal("search", "synthetic retracted", "-s", str(scale_snapshot), env=env)
    assert found.returncode == 0, found.stderr
    assert "pmid:995" in found.stdout


def test_a_file_that_cannot_be_read_writes_nothing(
    spark: Any, generated: Generated, tmp_path: Path
) -> None:
    del spark
    baseline = tmp_path / "baseline"
    baseline.mkdir()
    for source in sorted(generated.baseline.iterdir())[:2]:
        (baseline / source.name).write_bytes(source.read_bytes())
    broken = sorted(baseline.iterdir())[1]
    broken.write_bytes(broken.read_bytes()[:-40])  # truncated, as by a failed download
    out = tmp_path / "out"
    done = citeseal("scale", "ingest", "--baseline", str(baseline), "--out", str(out))
    assert done.returncode == 2
    assert done.stderr.startswith(
        f"error: cannot ingest {broken.name}: not a complete gzip file"
    ), done.stderr
    assert done.stderr.count("\n") == 1 and "Traceback" not in done.stderr
    assert not out.exists()
    assert [p.name for p in tmp_path.iterdir() if p.name.startswith(".")] == []
