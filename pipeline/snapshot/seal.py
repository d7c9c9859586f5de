"""Sealing a freshly written snapshot: check it, fsync it, write its sealed manifest, rename it.

The manifest records the file's sha256 and carries an HMAC seal under the keyring's current
key (:func:`pipeline.snapshot.manifest.sealed_with`). The rename is the commit point of a
build (:mod:`pipeline.snapshot.build`) or a backfill (:mod:`pipeline.snapshot.backfill`):
before it, no visible file exists; after it, the file and its manifest agree.
"""

from __future__ import annotations

from pathlib import Path

from audit.keys import Keyring
from pipeline.errors import SnapshotError
from pipeline.snapshot.manifest import (
    Manifest,
    fsync_path,
    sealed_with,
    sha256_file,
    write_manifest,
)
from pipeline.snapshot.store import check_schema, connect, snapshot_totals


def check_built(path: Path, manifest: Manifest) -> None:
    """Re-open a freshly written file read-only and check it holds what the build wrote.

    Only counts: that no key is held twice was checked before, on the build's connection
    (:func:`pipeline.snapshot.store.require_unique_keys`), within its memory limit."""
    con = connect(path, read_only=True)
    try:
        check_schema(con, str(path))
        row = con.execute("SELECT value FROM meta WHERE key = 'snapshot_id'").fetchone()
        if row is None or row[0] != manifest.snapshot_id:
            raise SnapshotError(f"{path}: meta.snapshot_id is not {manifest.snapshot_id}")
        if snapshot_totals(con) != (manifest.records, manifest.versions, manifest.passages):
            raise SnapshotError(f"{path}: row counts differ from what the build wrote")
        indexed = con.execute("SELECT count(*) FROM search_docs").fetchone()
        if indexed is None or indexed[0] != manifest.passages:
            raise SnapshotError(f"{path}: the search index does not cover every passage")
    finally:
        con.close()


def seal(temp: Path, final: Path, manifest: Manifest, keyring: Keyring) -> Manifest:
    """Verify, fsync, write the sealed manifest, rename into place (the commit point)."""
    check_built(temp, manifest)
    fsync_path(temp)
    digest = manifest.model_copy(update={"sha256": sha256_file(temp), "size": temp.stat().st_size})
    sealed = sealed_with(digest, keyring)
    write_manifest(final, sealed)
    temp.replace(final)
    fsync_path(final.parent)
    return sealed
