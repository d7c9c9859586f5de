"""Snapshot lineages: which snapshot is whose parent, and which is the newest of a lineage.

A snapshot names its parent by sha256 (``meta.parent_sha256``); consecutive snapshots of a
lineage are (parent, child) pairs whose files are both present. Pure: no I/O.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field

from pipeline.site.snapshots import LoadedSnapshot


@dataclass(frozen=True)
class Lineage:
    snapshots: tuple[LoadedSnapshot, ...]  # oldest first
    by_sha: dict[str, LoadedSnapshot] = field(default_factory=dict)
    parents: dict[str, LoadedSnapshot] = field(default_factory=dict)  # slug → parent
    children: dict[str, tuple[LoadedSnapshot, ...]] = field(default_factory=dict)

    @classmethod
    def of(cls, snapshots: Sequence[LoadedSnapshot]) -> Lineage:
        ordered = tuple(sorted(snapshots, key=_order))
        by_sha: dict[str, LoadedSnapshot] = {}
        for snapshot in ordered:
            by_sha.setdefault(snapshot.sha256, snapshot)  # the manifest's, checked at load
        parents: dict[str, LoadedSnapshot] = {}
        children: dict[str, list[LoadedSnapshot]] = {}
        for snapshot in ordered:
            parent = by_sha.get(snapshot.parent_sha256 or "")
            if parent is not None and parent is not snapshot:
                parents[snapshot.slug] = parent
                children.setdefault(parent.slug, []).append(snapshot)
        return cls(
            snapshots=ordered,
            by_sha=by_sha,
            parents=parents,
            children={k: tuple(v) for k, v in children.items()},
        )

    def find(self, sha256: str) -> LoadedSnapshot | None:
        return self.by_sha.get(sha256)

    def parent(self, snapshot: LoadedSnapshot) -> LoadedSnapshot | None:
        return self.parents.get(snapshot.slug)

    def descendants(self, snapshot: LoadedSnapshot) -> list[LoadedSnapshot]:
        seen: dict[str, LoadedSnapshot] = {}
        todo = [snapshot]
        while todo:
            current = todo.pop()
            for child in self.children.get(current.slug, ()):
                if child.slug not in seen:
                    seen[child.slug] = child
                    todo.append(child)
        return sorted(seen.values(), key=_order)

    def newest_from(self, snapshot: LoadedSnapshot) -> LoadedSnapshot:
        """The newest snapshot descending from ``snapshot`` (itself when it has no child)."""
        later = self.descendants(snapshot)
        return later[-1] if later else snapshot

    def newest_named(self, name: str) -> LoadedSnapshot | None:
        named = [s for s in self.snapshots if s.name == name]
        return named[-1] if named else None

    def pairs(self) -> list[tuple[LoadedSnapshot, LoadedSnapshot]]:
        """(parent, child) for every snapshot whose parent is present, oldest child first."""
        return [(self.parents[s.slug], s) for s in self.snapshots if s.slug in self.parents]

    def groups(self) -> list[tuple[str, list[LoadedSnapshot]]]:
        """Snapshots grouped by corpus name (names sorted), oldest first within a group."""
        names = sorted({s.name for s in self.snapshots})
        return [(n, [s for s in self.snapshots if s.name == n]) for n in names]


def _order(snapshot: LoadedSnapshot) -> tuple[str, str]:
    return (snapshot.created_at, snapshot.label)
