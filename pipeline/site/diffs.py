"""What changed between two consecutive snapshots of a lineage, for the diff pages.

Both files are attached read-only to one in-memory DuckDB connection and compared through the
schema contract (``record_state``, ``records``, ``relations``): records new in the child,
records with a new current version, records withdrawn upstream, and new retractions and
expressions of concern.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import duckdb

from audit.errors import CorpusError
from pipeline.site.snapshots import LIST_CAP, LoadedSnapshot


@dataclass(frozen=True)
class DiffItem:
    record_id: str
    version: str
    title: str | None
    note: str | None


@dataclass(frozen=True)
class DiffList:
    key: str
    title: str
    items: tuple[DiffItem, ...]
    total: int


@dataclass(frozen=True)
class SnapshotDiff:
    old: LoadedSnapshot
    new: LoadedSnapshot
    lists: tuple[DiffList, ...]

    @property
    def slug(self) -> str:
        return f"{self.old.slug}--{self.new.slug}"


_CURRENT = """
    SELECT s.record_id, s.current_version, s.withdrawn, r.title, r.retracted,
           r.expression_of_concern
    FROM {db}.record_state s
    LEFT JOIN {db}.records r ON r.record_id = s.record_id AND r.version = s.current_version
"""

_QUERIES: tuple[tuple[str, str, str], ...] = (
    (
        "new",
        "New records",
        """SELECT n.record_id, n.current_version, n.title, NULL FROM n
           LEFT JOIN o USING (record_id) WHERE o.record_id IS NULL""",
    ),
    (
        "changed",
        "Records with a new version",
        """SELECT n.record_id, n.current_version, n.title,
                  'was version ' || o.current_version FROM n JOIN o USING (record_id)
           WHERE n.current_version <> o.current_version""",
    ),
    (
        "withdrawn",
        "Withdrawn upstream",
        """SELECT n.record_id, n.current_version, n.title, NULL FROM n
           LEFT JOIN o USING (record_id)
           WHERE n.withdrawn AND NOT coalesce(o.withdrawn, FALSE)""",
    ),
    (
        "retracted",
        "Newly retracted",
        """SELECT n.record_id, n.current_version, n.title, NULL FROM n
           LEFT JOIN o USING (record_id)
           WHERE n.retracted AND NOT coalesce(o.retracted, FALSE)""",
    ),
    (
        "expression_of_concern",
        "New expressions of concern",
        """SELECT n.record_id, n.current_version, n.title, NULL FROM n
           LEFT JOIN o USING (record_id)
           WHERE n.expression_of_concern AND NOT coalesce(o.expression_of_concern, FALSE)""",
    ),
)


def diff_snapshots(old: LoadedSnapshot, new: LoadedSnapshot) -> SnapshotDiff:
    """Compare ``new`` with its parent ``old``; raises :class:`CorpusError` if unreadable."""
    con = duckdb.connect(":memory:")
    try:
        con.execute(f"ATTACH '{_quote(old.path)}' AS old_db (READ_ONLY)")
        con.execute(f"ATTACH '{_quote(new.path)}' AS new_db (READ_ONLY)")
        con.execute("CREATE TEMP TABLE o AS " + _CURRENT.format(db="old_db"))
        con.execute("CREATE TEMP TABLE n AS " + _CURRENT.format(db="new_db"))
        lists = tuple(
            _list(key, title, con.execute(sql + " ORDER BY 1").fetchall())
            for key, title, sql in _QUERIES
        )
    except duckdb.Error as error:
        message = " ".join(str(error).split())
        raise CorpusError(f"cannot compare {old.label} and {new.label}: {message}") from None
    finally:
        con.close()
    return SnapshotDiff(old=old, new=new, lists=lists)


def _list(key: str, title: str, rows: list[tuple[Any, ...]]) -> DiffList:
    items = tuple(
        DiffItem(str(r[0]), str(r[1]), None if r[2] is None else str(r[2]), r[3])
        for r in rows[:LIST_CAP]
    )
    return DiffList(key=key, title=title, items=items, total=len(rows))


def _quote(path: object) -> str:
    return str(path).replace("'", "''")
