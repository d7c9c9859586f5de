"""``snapshot verify`` and ``snapshot info``: is the file what its manifest says, what is in it.

Verification is a list of small checks that fail closed, each saying what it saw and what it
expected: the sha256 and size of the file against the manifest (a difference is tampering,
:class:`~pipeline.errors.TamperedSnapshotError`, exit 1), then, inside the file, the recorded
migrations, the tables, the snapshot id, the row counts and the search index.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import duckdb

from pipeline.errors import SnapshotError, TamperedSnapshotError
from pipeline.snapshot.manifest import Manifest, read_manifest, sha256_file
from pipeline.snapshot.store import (
    applied_migrations,
    check_schema,
    connect,
    duplicate_keys,
    first_line,
    read_meta,
    snapshot_totals,
)


@dataclass(frozen=True)
class VerifyReport:
    path: Path
    manifest: Manifest
    checks: list[str] = field(default_factory=list)
    parent: str = "none"  # none | ok | missing | differs


def verify_snapshot(path: Path) -> VerifyReport:
    """Check ``path`` against its manifest and its own schema; raise on the first failure."""
    manifest = read_manifest(path)
    checks: list[str] = []
    size = path.stat().st_size
    digest = sha256_file(path)
    if digest != manifest.sha256 or size != manifest.size:
        raise TamperedSnapshotError(
            f"{path} does not match its manifest: sha256 {digest} ({size} bytes), "
            f"manifest says {manifest.sha256} ({manifest.size} bytes)",
            advice="the file was changed after it was built; rebuild it or restore a copy",
        )
    checks.append(f"sha256 {digest} matches the manifest")
    if path.name != manifest.file:
        raise TamperedSnapshotError(
            f"{path.name} is not the file its manifest names ({manifest.file})"
        )
    con = connect(path, read_only=True)
    try:
        try:
            check_schema(con, str(path))
            meta = read_meta(con)
            counts = snapshot_totals(con)
            indexed = _indexed(con)
            duplicates = duplicate_keys(con)
        except duckdb.Error as error:
            raise SnapshotError(f"cannot read {path}: {first_line(error)}") from None
        checks.append(
            "migrations " + ", ".join(f"{i} {n}" for i, n in applied_migrations(con)) + " applied"
        )
    finally:
        con.close()
    checks.append("every table present")
    if meta.get("snapshot_id") != manifest.snapshot_id:
        raise SnapshotError(
            f"{path}: meta.snapshot_id is {meta.get('snapshot_id')!r}, "
            f"the manifest says {manifest.snapshot_id!r}"
        )
    expected = (manifest.records, manifest.versions, manifest.passages)
    if counts != expected:
        raise SnapshotError(
            f"{path}: holds {counts[0]} records, {counts[1]} versions, {counts[2]} passages; "
            f"the manifest says {expected[0]}, {expected[1]}, {expected[2]}"
        )
    checks.append(f"{counts[0]} records, {counts[1]} versions, {counts[2]} passages as listed")
    if duplicates:
        raise SnapshotError(f"{path}: a key is held twice: {'; '.join(duplicates)}")
    checks.append("every record version, passage and index term held once")
    if indexed != counts[2]:
        raise SnapshotError(f"{path}: the search index covers {indexed} passages of {counts[2]}")
    checks.append(f"search index ({meta.get('search_index')}) covers every passage")
    return VerifyReport(path=path, manifest=manifest, checks=checks, parent=_parent(path, manifest))


def _indexed(con: duckdb.DuckDBPyConnection) -> int:
    row = con.execute("SELECT count(*) FROM search_docs").fetchone()
    return int(row[0]) if row else 0


def _parent(path: Path, manifest: Manifest) -> str:
    if manifest.parent is None:
        return "none"
    parent = (path.parent / manifest.parent.path).resolve()
    if not parent.is_file():
        return "missing"
    return "ok" if sha256_file(parent) == manifest.parent.sha256 else "differs"


# -- info ---------------------------------------------------------------------------------------


def snapshot_info(path: Path) -> dict[str, Any]:
    """What a snapshot holds: meta, manifest summary, per-source counts (no verification)."""
    con = connect(path, read_only=True)
    try:
        try:
            check_schema(con, str(path))
            meta = read_meta(con)
            sources = [
                {
                    "source": s,
                    "status": st,
                    "records": r,
                    "passages": p,
                    "failed_requests": f,
                    "detail": d,
                }
                for s, st, r, p, f, d in con.execute(
                    "SELECT source, status, records, passages, failed_requests, detail "
                    "FROM sources ORDER BY source"
                ).fetchall()
            ]
            held = {
                s: {"records": r, "withdrawn": w, "versions": v, "passages": p}
                for s, r, w, v, p in con.execute(_HELD_SQL).fetchall()
            }
            flags = con.execute(_FLAGS_SQL).fetchone() or (0, 0, 0)
        except duckdb.Error as error:
            raise SnapshotError(f"cannot read {path}: {first_line(error)}") from None
    finally:
        con.close()
    try:
        manifest: dict[str, Any] | None = read_manifest(path).model_dump(mode="json")
    except SnapshotError:
        manifest = None
    meta.pop("spec", None)
    statuses = {row["source"]: row["status"] for row in sources}
    failed = sum(int(row["failed_requests"] or 0) for row in sources)
    carried = manifest.get("carried") if manifest else None
    partial = bool(manifest and manifest.get("partial")) or any(
        status in INCOMPLETE for status in statuses.values()
    )
    return {
        "path": str(path),
        "meta": meta,
        "partial": partial,
        "partial_detail": describe_partial(statuses, failed, carried) if partial else None,
        "harvest": sources,
        "lineage": held,
        "current": {"retracted": flags[0], "expression_of_concern": flags[1], "preprint": flags[2]},
        "manifest": manifest,
    }


INCOMPLETE = ("partial", "failed")  # source statuses of a harvest in which requests failed


def describe_partial(statuses: Mapping[str, str], failed: int, carried: int | None) -> str:
    """``2 failed requests (crossref partial, clinicaltrials failed); 4 records kept their
    parent state`` — what makes a snapshot partial, in one line."""
    bad = ", ".join(f"{s} {st}" for s, st in sorted(statuses.items()) if st in INCOMPLETE)
    if failed:
        text = f"{failed} failed request{'s' if failed != 1 else ''}" + (f" ({bad})" if bad else "")
    else:  # a backfill child: the statuses of the harvest it carries
        text = bad or "requests failed"
    if carried:
        text += (
            "; 1 record kept its parent state"
            if carried == 1
            else f"; {carried} records kept their parent state"
        )
    return text


def partial_summary(manifest: Manifest) -> str:
    """:func:`describe_partial` of a manifest."""
    statuses = {name: s.status for name, s in manifest.sources.items()}
    return describe_partial(statuses, len(manifest.failed_requests), manifest.carried)


_HELD_SQL = """
SELECT s.source, count(*) AS records, count(*) FILTER (WHERE s.withdrawn) AS withdrawn,
       sum(v.n) AS versions, sum(p.n) AS passages
FROM record_state s
LEFT JOIN (SELECT record_id, count(*) AS n FROM record_versions GROUP BY record_id) v
       USING (record_id)
LEFT JOIN (SELECT record_id, count(*) AS n FROM passages GROUP BY record_id) p USING (record_id)
GROUP BY s.source ORDER BY s.source
"""

_FLAGS_SQL = """
SELECT count(*) FILTER (WHERE r.retracted), count(*) FILTER (WHERE r.expression_of_concern),
       count(*) FILTER (WHERE r.preprint)
FROM record_state s JOIN records r ON r.record_id = s.record_id AND r.version = s.current_version
"""
