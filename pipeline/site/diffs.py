"""What changed between two consecutive snapshots of a lineage, for the diff pages.

The comparison is ``snapshot diff``'s (:func:`pipeline.snapshot.diff.diff_snapshots`); this
module only shapes it into lists for the page: new records, records with a new version,
records withdrawn upstream or reinstated, and new retractions and expressions of concern.
"""

from __future__ import annotations

from dataclasses import dataclass

from pipeline.site.snapshots import LIST_CAP, LoadedSnapshot
from pipeline.snapshot.diff import FlagChange, RecordChange
from pipeline.snapshot.diff import diff_snapshots as snapshot_diff


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


def _changes(key: str, title: str, changes: list[RecordChange], note: str | None) -> DiffList:
    items = tuple(
        DiffItem(
            c.record_id,
            c.new_version or c.old_version or "",
            c.title,
            note.format(old=c.old_version) if note else None,
        )
        for c in changes[:LIST_CAP]
    )
    return DiffList(key=key, title=title, items=items, total=len(changes))


def _flags(key: str, title: str, changes: list[FlagChange], versions: dict[str, str]) -> DiffList:
    items = tuple(
        DiffItem(
            c.record_id,
            versions.get(c.record_id, ""),
            c.title,
            ("notice: " + ", ".join(c.notices)) if c.notices else None,
        )
        for c in changes[:LIST_CAP]
    )
    return DiffList(key=key, title=title, items=items, total=len(changes))


def diff_snapshots(old: LoadedSnapshot, new: LoadedSnapshot) -> SnapshotDiff:
    """Compare ``new`` with its parent ``old`` (raises SnapshotError if either is unreadable)."""
    diff = snapshot_diff(old.path, new.path)
    versions = {c.record_id: c.new_version or "" for c in diff.changed + diff.new_records}
    retracted = [f for f in diff.new_flags if f.flag == "retracted"]
    concern = [f for f in diff.new_flags if f.flag == "expression_of_concern"]
    lists = (
        _changes("new", "New records", diff.new_records, None),
        _changes("changed", "Records with a new version", diff.changed, "was version {old}"),
        _changes("withdrawn", "Withdrawn upstream", diff.withdrawn, None),
        _changes("reinstated", "Back upstream after a withdrawal", diff.reinstated, None),
        _flags("retracted", "Newly retracted", retracted, versions),
        _flags("expression_of_concern", "New expressions of concern", concern, versions),
    )
    return SnapshotDiff(old=old, new=new, lists=lists)
