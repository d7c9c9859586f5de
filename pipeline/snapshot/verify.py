"""``snapshot verify`` and ``info``: does a file match its sealed manifest, what it holds.

Verification is a list of small checks that fail closed, each saying what it saw and what it
expected: first those every command runs before it reads a snapshot
(:mod:`pipeline.snapshot.trust`: the manifest, the file name, the sha256 and size, the seal),
then, inside the file, the recorded migrations and tables, the snapshot id, the row counts,
keys held once and the search index. :func:`check_snapshot` runs them all and reports each;
:func:`verify_snapshot` raises on the first failure (a trust check:
:class:`~pipeline.errors.TamperedSnapshotError`, exit 1).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import duckdb

from audit.report import incomplete_sources, is_partial
from pipeline.errors import SnapshotError
from pipeline.snapshot.digests import DigestCache
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
from pipeline.snapshot.trust import Check, SealPolicy, refuse, run_checks


@dataclass(frozen=True)
class VerifyReport:
    path: Path
    manifest: Manifest | None
    checks: list[Check] = field(default_factory=list)
    parent: str = "none"  # none | ok | missing | differs

    @property
    def ok(self) -> bool:
        """Every check ran and passed (a seal that could not be checked is not a pass)."""
        return all(check.ok for check in self.checks)

    @property
    def failed(self) -> list[Check]:
        return [check for check in self.checks if check.ok is False]


def check_snapshot(
    path: Path, policy: SealPolicy, digests: DigestCache | None = None
) -> VerifyReport:
    """Every check of ``path``: trust first, then its contents (when the file can be read)."""
    checks, manifest = run_checks(path, policy, digests)
    if manifest is None:
        checks.append(Check("contents", None, "not run: there is no valid manifest"))
        return VerifyReport(path=path, manifest=None, checks=checks)
    checks.extend(_content_checks(path, manifest))
    return VerifyReport(path=path, manifest=manifest, checks=checks, parent=_parent(path, manifest))


def verify_snapshot(
    path: Path, policy: SealPolicy, digests: DigestCache | None = None
) -> VerifyReport:
    """:func:`check_snapshot`, raising :class:`~pipeline.errors.TamperedSnapshotError` (exit 1)
    for the first check that failed: a file that does not hold what its sealed manifest
    says is not to be trusted, whichever check found it."""
    report = check_snapshot(path, policy, digests)
    refuse(path, report.checks)
    return report


def _content_checks(path: Path, manifest: Manifest) -> list[Check]:
    """The checks inside the file: schema, snapshot id, counts, unique keys, search index."""
    try:
        con = connect(path, read_only=True)
    except SnapshotError as error:
        return [Check("schema", False, error.message)]
    try:
        try:
            check_schema(con, str(path))
            migrations = applied_migrations(con)
            meta = read_meta(con)
            counts = snapshot_totals(con)
            indexed = _indexed(con)
            duplicates = duplicate_keys(con)
        except SnapshotError as error:
            return [Check("schema", False, error.message)]
        except duckdb.Error as error:
            return [Check("schema", False, f"cannot read it: {first_line(error)}")]
    finally:
        con.close()
    applied = ", ".join(f"{i} {n}" for i, n in migrations)
    checks = [Check("schema", True, f"migrations {applied} applied; every table present")]
    if meta.get("snapshot_id") == manifest.snapshot_id:
        checks.append(Check("snapshot id", True, f"{manifest.snapshot_id} as in the manifest"))
    else:
        checks.append(
            Check(
                "snapshot id",
                False,
                f"meta.snapshot_id is {meta.get('snapshot_id')!r}, "
                f"the manifest says {manifest.snapshot_id!r}",
            )
        )
    expected = (manifest.records, manifest.versions, manifest.passages)
    if counts == expected:
        checks.append(
            Check(
                "counts",
                True,
                f"{counts[0]} records, {counts[1]} versions, {counts[2]} passages as listed",
            )
        )
    else:
        checks.append(
            Check(
                "counts",
                False,
                f"holds {counts[0]} records, {counts[1]} versions, {counts[2]} passages; the "
                f"manifest says {expected[0]}, {expected[1]}, {expected[2]}",
            )
        )
    if duplicates:
        checks.append(Check("unique keys", False, f"a key is held twice: {'; '.join(duplicates)}"))
    else:
        checks.append(
            Check("unique keys", True, "every record version, passage and index term held once")
        )
    if indexed == counts[2]:
        checks.append(
            Check(
                "search index",
                True,
                f"search index ({meta.get('search_index')}) covers every passage",
            )
        )
    else:
        checks.append(Check("search index", False, f"covers {indexed} passages of {counts[2]}"))
    return checks


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
    partial = bool(manifest and manifest.get("partial")) or is_partial(statuses)
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


def describe_partial(statuses: Mapping[str, str], failed: int, carried: int | None) -> str:
    """``2 failed requests (crossref partial, clinicaltrials failed); 4 records kept their
    parent state`` — what makes a snapshot partial, in one line."""
    bad = ", ".join(f"{s} {st}" for s, st in incomplete_sources(statuses).items())
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
