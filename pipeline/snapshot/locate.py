"""Find snapshots: ``--snapshot`` may be a ``.duckdb`` file or a corpus folder.

A corpus folder (``snapshots/<name>/``) holds ``<name>-<YYYYmmddTHHMMSSZ>.duckdb`` files and
their manifests; hidden entries (``.build-*``: builds in progress, the lock, the resume cache)
never count. The newest snapshot is the one with the latest stamp.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path

from pipeline.errors import SnapshotError

SNAPSHOT_FILE = re.compile(r"^(?P<name>[a-z0-9][a-z0-9_-]*)-(?P<stamp>\d{8}T\d{6}Z)\.duckdb$")


@dataclass(frozen=True)
class SnapshotFile:
    path: Path
    name: str
    stamp: str


def parse_snapshot_name(path: Path) -> SnapshotFile | None:
    match = SNAPSHOT_FILE.match(path.name)
    if match is None:
        return None
    return SnapshotFile(path, match["name"], match["stamp"])


def snapshots_in(folder: Path) -> list[SnapshotFile]:
    """Snapshot files directly in ``folder``, oldest first."""
    if not folder.is_dir():
        return []
    found = [s for p in folder.iterdir() if p.is_file() and (s := parse_snapshot_name(p))]
    return sorted(found, key=lambda s: (s.stamp, s.name))


def latest_snapshot(folder: Path) -> Path | None:
    """The newest snapshot in a corpus folder, or None."""
    found = snapshots_in(folder)
    return found[-1].path if found else None


def corpus_folders(root: Path) -> list[Path]:
    """Folders under ``root`` (``snapshots/``) that hold at least one snapshot."""
    if not root.is_dir():
        return []
    return sorted(p for p in root.iterdir() if p.is_dir() and snapshots_in(p))


CORPORA = Path("snapshots")
"""Where a bare corpus NAME is looked for (``--snapshot demo`` → ``snapshots/demo/``)."""
DEMO_SPEC = CORPORA / "demo.toml"


def build_hint() -> str:
    """What to pass or build, naming the demo spec only where it exists (from the cwd)."""
    if DEMO_SPEC.is_file():
        return f"build one with: citeseal snapshot build {DEMO_SPEC.as_posix()}"
    return (
        "pass a snapshot file (.duckdb), a corpus folder or a corpus NAME (snapshots/NAME); "
        "build one with: citeseal snapshot build SPEC.toml"
    )


def resolve_snapshot(path: Path) -> Path:
    """The snapshot file meant by ``path`` (a file, a corpus folder → its newest, or, when no
    such path exists, a bare corpus name → the newest of ``snapshots/NAME/``)."""
    if path.is_file():
        return path
    named = CORPORA / path
    if not path.exists() and len(path.parts) == 1 and not path.suffix and named.is_dir():
        path = named
    if path.is_dir():
        newest = latest_snapshot(path)
        if newest is not None:
            return newest
        raise SnapshotError(
            f"no snapshot in {path} (a corpus folder holds <name>-<stamp>.duckdb files)",
            advice=build_hint(),
        )
    raise SnapshotError(
        f"snapshot {path} does not exist",
        advice=build_hint(),
    )
