"""Durable storage for sealed snapshots: an archive keeps every snapshot a lineage needs.

A scheduled build continues its lineage only from the newest snapshot of it, so that snapshot
must outlive the machine that built it. An archive holds sealed snapshots by corpus, each as
three files — ``<id>.duckdb``, ``<id>.manifest.json`` and ``<id>.sha256`` (``sha256sum``
format) — and never changes one once written::

    Archive (Protocol)        list(corpus), put(files), checksum(item), get(item, folder),
                              delete(item)
    ├── FolderArchive         a folder: <root>/<corpus>/<id>.{duckdb,manifest.json,sha256}
    └── ReleasesArchive       GitHub Releases: one immutable release per snapshot

:mod:`pipeline.archive.transfer` moves snapshots in and out, checking each against its
manifest and its seal on the way out (push) and on the way in (pull), and prunes.
:func:`open_archive` reads a target: ``github:OWNER/REPO``, else a folder (``folder:PATH`` or a
plain path).
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Protocol

from audit.errors import InputError
from pipeline.settings import Settings

SNAPSHOT_ID = re.compile(r"^(?P<corpus>[a-z0-9][a-z0-9_-]*)-(?P<stamp>\d{8}T\d{6}Z)$")


@dataclass(frozen=True)
class SnapshotFiles:
    """The three files of one snapshot, side by side in one folder."""

    snapshot: Path

    @property
    def snapshot_id(self) -> str:
        return self.snapshot.name.removesuffix(".duckdb")

    @property
    def manifest(self) -> Path:
        return self.snapshot.with_name(f"{self.snapshot_id}.manifest.json")

    @property
    def checksum(self) -> Path:
        return self.snapshot.with_name(f"{self.snapshot_id}.sha256")

    def all(self) -> tuple[Path, Path, Path]:
        return (self.snapshot, self.manifest, self.checksum)


@dataclass(frozen=True)
class ArchivedSnapshot:
    """One snapshot an archive holds (what its listing says; checked only once pulled)."""

    corpus: str
    snapshot_id: str
    size: int | None  # of the .duckdb file, when the listing tells
    location: str  # for people: a path or a URL
    handle: str = ""  # the archive's own reference (a release id)

    @property
    def stamp(self) -> str:
        match = SNAPSHOT_ID.match(self.snapshot_id)
        return match["stamp"] if match else ""


class Archive(Protocol):
    """Where sealed snapshots are kept (see the module docstring)."""

    @property
    def label(self) -> str:
        """The target as people write it, e.g. ``github:me/corpus`` or a folder."""
        ...

    @property
    def max_file_bytes(self) -> int | None:
        """The largest file it can hold (None: no limit)."""
        ...

    def list(self, corpus: str) -> list[ArchivedSnapshot]:
        """The snapshots of ``corpus`` it holds, oldest first."""
        ...

    def put(self, files: SnapshotFiles) -> str:
        """Store the three files as one new snapshot; returns its location. Refuses to
        replace a snapshot it already holds (:class:`~pipeline.errors.ArchiveError`)."""
        ...

    def checksum(self, item: ArchivedSnapshot) -> str:
        """The text of ``item``'s ``.sha256`` file (small: read without the snapshot)."""
        ...

    def get(self, item: ArchivedSnapshot, folder: Path) -> SnapshotFiles:
        """Download the three files of ``item`` into ``folder`` (nothing is checked here)."""
        ...

    def delete(self, item: ArchivedSnapshot) -> None:
        """Remove ``item`` and all its files."""
        ...


def snapshot_id_parts(snapshot_id: str) -> tuple[str, str]:
    """``demo-20250602T100000Z`` → ``("demo", "20250602T100000Z")``; InputError otherwise."""
    match = SNAPSHOT_ID.match(snapshot_id)
    if match is None:
        raise InputError(
            f"{snapshot_id!r} is not a snapshot id (expected <corpus>-<YYYYmmddTHHMMSSZ>)"
        )
    return match["corpus"], match["stamp"]


def newest(items: Sequence[ArchivedSnapshot]) -> ArchivedSnapshot | None:
    return max(items, key=lambda item: item.stamp, default=None)


def open_archive(target: str, settings: Settings) -> Archive:
    """The archive a target names: ``github:OWNER/REPO`` (GitHub Releases, the token from
    ``GITHUB_TOKEN``/``GH_TOKEN``), else a folder (``folder:PATH`` or a plain path)."""
    if target.startswith("github:"):
        from pipeline.archive.releases import ReleasesArchive

        return ReleasesArchive.for_target(target.removeprefix("github:"), settings)
    folder = Path(target.removeprefix("folder:"))
    if not target.strip() or (folder.exists() and not folder.is_dir()):
        raise InputError(
            f"archive {target!r} is neither github:OWNER/REPO nor a folder",
            advice="e.g. --to github:me/evidence, or --to /mnt/archive",
        )
    from pipeline.archive.folder import FolderArchive

    return FolderArchive(folder)
