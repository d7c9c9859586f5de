"""An archive in a folder: ``<root>/<corpus>/<id>.duckdb``, ``.manifest.json`` and ``.sha256``.

The default archive, and what the tests use: a folder on a disk that outlives the build
machine (a mounted volume, a synced folder). A snapshot is written as its checksum and
manifest first, then its ``.duckdb`` file by one rename — the commit point, as for a build — so
a listing never shows a snapshot whose files are not all there. Nothing already archived is
ever overwritten.
"""

from __future__ import annotations

import shutil
import tempfile
from pathlib import Path

from pipeline.archive import ArchivedSnapshot, SnapshotFiles, snapshot_id_parts
from pipeline.errors import ArchiveError
from pipeline.snapshot.locate import snapshots_in
from pipeline.snapshot.manifest import fsync_path


class FolderArchive:
    """Sealed snapshots kept in a folder (see the module docstring)."""

    max_file_bytes: int | None = None

    def __init__(self, root: Path) -> None:
        self.root = root

    @property
    def label(self) -> str:
        return str(self.root)

    def list(self, corpus: str) -> list[ArchivedSnapshot]:
        found = [s for s in snapshots_in(self.root / corpus) if s.name == corpus]
        return [
            ArchivedSnapshot(
                corpus=corpus,
                snapshot_id=s.path.stem,
                size=s.path.stat().st_size,
                location=str(s.path),
            )
            for s in found
        ]

    def put(self, files: SnapshotFiles) -> str:
        corpus, _ = snapshot_id_parts(files.snapshot_id)
        folder = self.root / corpus
        final = folder / files.snapshot.name
        if final.exists():
            raise ArchiveError(f"{self.label} already holds {files.snapshot_id}")
        try:
            folder.mkdir(parents=True, exist_ok=True)
            staging = Path(tempfile.mkdtemp(prefix=f".put-{files.snapshot_id}-", dir=folder))
        except OSError as error:
            raise ArchiveError(f"cannot write to {folder}: {error.strerror or error}") from None
        try:
            for source in files.all():
                shutil.copyfile(source, staging / source.name)
                fsync_path(staging / source.name)
            for source in (files.checksum, files.manifest):
                (staging / source.name).replace(folder / source.name)
            (staging / files.snapshot.name).replace(final)  # the commit point
            fsync_path(folder)
        except OSError as error:
            raise ArchiveError(f"cannot write to {folder}: {error.strerror or error}") from None
        finally:
            shutil.rmtree(staging, ignore_errors=True)
        return str(final)

    def _files(self, item: ArchivedSnapshot) -> SnapshotFiles:
        return SnapshotFiles(self.root / item.corpus / f"{item.snapshot_id}.duckdb")

    def checksum(self, item: ArchivedSnapshot) -> str:
        try:
            return self._files(item).checksum.read_text(encoding="ascii")
        except (OSError, UnicodeDecodeError) as error:
            raise ArchiveError(
                f"cannot read the checksum of {item.snapshot_id} from {self.label}: {error}"
            ) from None

    def get(self, item: ArchivedSnapshot, folder: Path) -> SnapshotFiles:
        source = self._files(item)
        try:
            for path in source.all():
                shutil.copyfile(path, folder / path.name)
        except OSError as error:
            raise ArchiveError(
                f"cannot read {item.snapshot_id} from {self.label}: {error.strerror or error}"
            ) from None
        return SnapshotFiles(folder / source.snapshot.name)

    def delete(self, item: ArchivedSnapshot) -> None:
        try:
            for path in self._files(item).all():  # the .duckdb first: a listing never shows a half
                path.unlink(missing_ok=True)
        except OSError as error:
            raise ArchiveError(
                f"cannot delete {item.snapshot_id} from {self.label}: {error.strerror or error}"
            ) from None
