"""``citeseal scale snapshot FOLDER --out FILE.duckdb``: a scale folder → a sealed snapshot.

The snapshot is an ordinary one (schema :data:`~pipeline.snapshot.schema.SCHEMA_VERSION`,
manifest sealed with the keyring's current key), so ``audit``, ``search``, ``serve`` and
``snapshot verify`` read it as they read a built one. Its id is the last generation's
(:func:`pipeline.scale.history.generation_ids`): the versions seen there are those a build of
the same files would call refreshed. Its mode is ``scale``; its spec is the ``[pubmed]``
table naming the folders' files (``baseline``/``updates``), so it says what it holds.

Written as a build writes (:mod:`pipeline.snapshot.build`): into a hidden file beside
``out``, the tables copied from the Parquet by DuckDB, then the search index, the works, the
``record_id`` indexes and the key check, then checked, fsynced, sealed and renamed into place
(:func:`pipeline.snapshot.seal.seal`): an interrupted run leaves no ``out``.

Fails closed: a folder without its manifest, a table whose rows differ from what the manifest
counts, or a key held twice is an error and nothing is written.
"""

from __future__ import annotations

import hashlib
import json
import shutil
from dataclasses import dataclass
from pathlib import Path

import duckdb

from audit.keys import Keyring
from pipeline import __version__
from pipeline.errors import ScaleError, SnapshotError
from pipeline.scale.folder import ScaleManifest, read_manifest
from pipeline.scale.history import SNAPSHOT_TABLE, TABLES
from pipeline.settings import Settings
from pipeline.snapshot.index import INDEX_VERSION, index_unindexed
from pipeline.snapshot.manifest import Manifest, SourceSummary
from pipeline.snapshot.schema import SCHEMA_VERSION
from pipeline.snapshot.seal import seal
from pipeline.snapshot.store import (
    apply_migrations,
    checkpoint,
    connect,
    first_line,
    index_record_ids,
    insert_sources,
    limit_memory,
    load_fts,
    now_text,
    require_unique_keys,
    snapshot_totals,
    write_meta,
)
from pipeline.snapshot.works import store_works
from pipeline.sources.pubmed_xml import SOURCE


@dataclass(frozen=True)
class ScaleSnapshot:
    path: Path
    manifest: Manifest


def build_from_folder(
    folder: Path, out: Path, *, keyring: Keyring, settings: Settings | None = None
) -> ScaleSnapshot:
    """Write the sealed snapshot ``out`` from the scale folder ``folder`` (module docstring)."""
    settings = settings or Settings.from_env()
    if out.suffix != ".duckdb":
        raise ScaleError(f"expected an --out file ending .duckdb, got {out.name}")
    if out.exists():
        raise ScaleError(
            f"{out} exists: a snapshot is never written over", advice="give a new --out"
        )
    scale = read_manifest(folder)
    out.parent.mkdir(parents=True, exist_ok=True)
    temp = out.with_name(f".{out.stem}.build-tmp.duckdb")
    work = out.with_name(f".{out.stem}.build-tmp")
    for leftover in (temp, temp.with_name(temp.name + ".wal")):
        leftover.unlink(missing_ok=True)  # an earlier run that was killed
    try:
        created = now_text()
        totals, withdrawn = _write(folder, scale, temp, work, settings, created)
        manifest = _manifest(scale, out, created, totals, withdrawn)
        sealed = seal(temp, out, manifest, keyring)
    except duckdb.Error as error:
        raise ScaleError(f"cannot write {out} from {folder}: {first_line(error)}") from None
    finally:
        for leftover in (temp, temp.with_name(temp.name + ".wal")):
            leftover.unlink(missing_ok=True)
        shutil.rmtree(work, ignore_errors=True)
    return ScaleSnapshot(out, sealed)


def _parquet(folder: Path, table: str) -> str:
    where = str(folder / table / "**" / "*.parquet").replace("'", "''")
    return f"read_parquet('{where}', hive_partitioning = true)"


def _write(
    folder: Path, scale: ScaleManifest, temp: Path, work: Path, settings: Settings, created: str
) -> tuple[tuple[int, int, int], int]:
    con = connect(temp)
    try:
        limit_memory(con, work, memory=settings.build_memory)
        load_fts(con)
        apply_migrations(con, now=created)
        write_meta(con, _meta(scale, created))
        for table, columns in TABLES.items():
            target = SNAPSHOT_TABLE[table]
            if scale.rows.get(table, 0) == 0:
                continue  # Spark writes no file for an empty table
            held = {str(d[0]) for d in con.execute(f"SELECT * FROM {target} LIMIT 0").description}  # noqa: S608
            names = ", ".join(f'"{c}"' for c, _ in columns if c in held)  # not the partition
            source = _parquet(folder, table)
            con.execute(f"INSERT INTO {target} ({names}) SELECT {names} FROM {source}")  # noqa: S608
            row = con.execute(f"SELECT count(*) FROM {target}").fetchone()  # noqa: S608
            if row is None or row[0] != scale.rows[table]:
                held = row[0] if row else 0
                raise ScaleError(
                    f"{folder}/{table} holds {held} rows where its manifest counts "
                    f"{scale.rows[table]}: not the folder scale ingest wrote"
                )
        records, _, passages = snapshot_totals(con)
        refused = sum(_refused(scale).values())
        detail = f"{len(scale.files)} baseline/update files" + (
            f"; {refused} records refused" if refused else ""
        )
        insert_sources(con, [(SOURCE, "ok", records, passages, 0, detail)])
        index_unindexed(con)
        store_works(con)
        totals = snapshot_totals(con)
        require_unique_keys(con)
        index_record_ids(con)
        row = con.execute(
            "SELECT count(*) FROM record_state WHERE withdrawn AND withdrawn_since = $1",
            [scale.generations[-1]],
        ).fetchone()
        checkpoint(con)
    except SnapshotError as error:
        raise ScaleError(error.message, advice=error.advice) from None
    finally:
        con.close()
    return totals, int(row[0]) if row else 0


def _spec(scale: ScaleManifest) -> dict[str, object]:
    updates = any(f.generation > 0 for f in scale.files)
    pubmed: dict[str, str] = {"baseline": "baseline"}
    if updates:
        pubmed["updates"] = "updates"
    return {
        "name": scale.name,
        "description": f"PubMed baseline and update files ingested by citeseal scale "
        f"({len(scale.files)} files, {len(scale.generations)} generations)",
        "pubmed": pubmed,
    }


def inputs_hash(scale: ScaleManifest) -> str:
    """sha256 of the input files (names, generations, digests): the snapshot's spec hash, so
    two snapshots of the same files say so."""
    listing = [(f.name, f.generation, f.sha256) for f in scale.files]
    return hashlib.sha256(json.dumps(listing).encode("utf-8")).hexdigest()


def _meta(scale: ScaleManifest, created: str) -> dict[str, str | None]:
    spec = _spec(scale)
    return {
        "name": scale.name,
        "description": str(spec["description"]),
        "snapshot_id": scale.generations[-1],
        "created_at": created,
        "parent_sha256": None,
        "parent_snapshot_id": None,
        "spec_hash": inputs_hash(scale),
        "spec": json.dumps(spec, separators=(",", ":")),
        "tool_version": __version__,
        "schema_version": str(SCHEMA_VERSION),
        "segmentation_version": scale.segmentation_version,
        "mode": "scale",
        "search_index": INDEX_VERSION,
    }


def _manifest(
    scale: ScaleManifest, out: Path, created: str, totals: tuple[int, int, int], withdrawn: int
) -> Manifest:
    records, versions, passages = totals
    return Manifest(
        name=scale.name,
        snapshot_id=scale.generations[-1],
        file=out.name,
        sha256="",
        size=0,
        created_at=created,
        spec_hash=inputs_hash(scale),
        tool_version=__version__,
        schema_version=SCHEMA_VERSION,
        segmentation_version=scale.segmentation_version,
        mode="scale",
        records=records,
        versions=versions,
        passages=passages,
        withdrawn=withdrawn,
        sources={
            SOURCE: SourceSummary(
                status="ok",
                records=records,
                passages=passages,
                new_versions=versions,
                refused=_refused(scale),
            )
        },
    )


def _refused(scale: ScaleManifest) -> dict[str, int]:
    """Records the parser refused in all the files, by reason."""
    refused: dict[str, int] = {}
    for item in scale.files:
        for reason, count in item.refused.items():
            refused[reason] = refused.get(reason, 0) + count
    return refused
