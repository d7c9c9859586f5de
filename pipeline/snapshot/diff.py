"""``snapshot diff OLD NEW``: new, changed and withdrawn records; new retractions and EoCs.

Both files are read in one DuckDB connection (NEW opened, OLD attached read-only) and
compared on ``record_state`` (the current version of each record) and the flags of those
current versions.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

import duckdb

from pipeline.errors import SnapshotError
from pipeline.snapshot.store import connect, first_line, read_meta


@dataclass(frozen=True)
class RecordChange:
    record_id: str
    source: str
    old_version: str | None
    new_version: str | None
    title: str | None = None


@dataclass(frozen=True)
class FlagChange:
    record_id: str
    flag: str  # retracted | expression_of_concern
    notices: tuple[str, ...] = ()  # targets of the retraction/EoC relations
    title: str | None = None


@dataclass
class SnapshotDiff:
    old: str
    new: str
    new_records: list[RecordChange] = field(default_factory=list)
    changed: list[RecordChange] = field(default_factory=list)
    withdrawn: list[RecordChange] = field(default_factory=list)
    reinstated: list[RecordChange] = field(default_factory=list)
    new_flags: list[FlagChange] = field(default_factory=list)

    def to_json(self) -> dict[str, Any]:
        return asdict(self)

    @property
    def empty(self) -> bool:
        return not (
            self.new_records or self.changed or self.withdrawn or self.reinstated or self.new_flags
        )


_STATES_SQL = """
SELECT coalesce(n.record_id, o.record_id) AS record_id, coalesce(n.source, o.source) AS source,
       o.current_version, n.current_version, o.withdrawn, n.withdrawn, r.title
FROM record_state n
FULL OUTER JOIN old.record_state o ON o.record_id = n.record_id
LEFT JOIN records r ON r.record_id = n.record_id AND r.version = n.current_version
ORDER BY 1
"""

_FLAGS_SQL = """
WITH now AS (
    SELECT r.record_id, r.title, r.retracted, r.expression_of_concern FROM record_state s
    JOIN records r ON r.record_id = s.record_id AND r.version = s.current_version
), before AS (
    SELECT r.record_id, r.retracted, r.expression_of_concern FROM old.record_state s
    JOIN old.records r ON r.record_id = s.record_id AND r.version = s.current_version
)
SELECT now.record_id, now.title,
       now.retracted AND NOT coalesce(before.retracted, FALSE),
       now.expression_of_concern AND NOT coalesce(before.expression_of_concern, FALSE)
FROM now LEFT JOIN before USING (record_id)
WHERE (now.retracted AND NOT coalesce(before.retracted, FALSE))
   OR (now.expression_of_concern AND NOT coalesce(before.expression_of_concern, FALSE))
ORDER BY 1
"""

_NOTICES_SQL = """
SELECT record_id, kind, list(DISTINCT target ORDER BY target) FROM relations
WHERE kind IN ('retraction_in', 'retracted_and_republished_in', 'expression_of_concern_in')
GROUP BY record_id, kind
"""


def diff_snapshots(old: Path, new: Path) -> SnapshotDiff:
    """Compare two snapshots (usually a parent and its child)."""
    con = connect(new, read_only=True)
    try:
        try:
            con.execute(f"ATTACH '{_quote(old)}' AS old (READ_ONLY)")
        except duckdb.Error as error:
            raise SnapshotError(f"cannot open snapshot {old}: {first_line(error)}") from None
        try:
            return _diff(con, old, new)
        except duckdb.Error as error:
            raise SnapshotError(f"cannot compare {old} and {new}: {first_line(error)}") from None
    finally:
        con.close()


def _quote(path: Path) -> str:
    return str(path).replace("'", "''")


def _diff(con: duckdb.DuckDBPyConnection, old: Path, new: Path) -> SnapshotDiff:
    new_id = read_meta(con).get("snapshot_id", str(new))
    old_row = con.execute("SELECT value FROM old.meta WHERE key = 'snapshot_id'").fetchone()
    result = SnapshotDiff(old=str(old_row[0]) if old_row else str(old), new=new_id)
    for rid, source, v_old, v_new, w_old, w_new, title in con.execute(_STATES_SQL).fetchall():
        change = RecordChange(rid, source, v_old, v_new, title)
        if v_old is None:
            result.new_records.append(change)
        elif v_new is None:
            continue  # only in OLD: not a child of OLD
        elif v_old != v_new:
            result.changed.append(change)
        if w_new and not w_old and v_old is not None:
            result.withdrawn.append(change)
        elif w_old and v_new is not None and not w_new:
            result.reinstated.append(change)
    notices: dict[tuple[str, str], tuple[str, ...]] = {
        (rid, kind): tuple(targets) for rid, kind, targets in con.execute(_NOTICES_SQL).fetchall()
    }
    for rid, title, retracted, concern in con.execute(_FLAGS_SQL).fetchall():
        if retracted:
            targets = notices.get((rid, "retraction_in"), ()) + notices.get(
                (rid, "retracted_and_republished_in"), ()
            )
            result.new_flags.append(FlagChange(rid, "retracted", targets, title))
        if concern:
            targets = notices.get((rid, "expression_of_concern_in"), ())
            result.new_flags.append(FlagChange(rid, "expression_of_concern", targets, title))
    return result
