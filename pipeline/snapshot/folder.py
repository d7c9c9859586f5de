"""The corpus folder ``snapshots/<name>/`` while building: one build at a time, leftovers of
interrupted builds removed, a stamp no snapshot of the corpus uses yet.

Hidden ``.build-*`` entries are a build's work in progress (lock, temp file, work folder,
resume cache); see :mod:`pipeline.snapshot.build` for how a build commits.
"""

from __future__ import annotations

import contextlib
import re
import shutil
from collections.abc import Callable, Iterator
from datetime import UTC, datetime, timedelta
from pathlib import Path

from audit.locking import hold
from pipeline.errors import SnapshotError


@contextlib.contextmanager
def corpus_lock(corpus_dir: Path) -> Iterator[None]:
    """Exclusive lock on a corpus folder: one build at a time (see :mod:`audit.locking`)."""
    path = corpus_dir / ".build-lock"
    with (
        path.open("a") as handle,
        hold(handle.fileno(), what=f"building a snapshot of {corpus_dir}", wait=False) as held,
    ):
        if not held:
            raise SnapshotError(
                f"another build of {corpus_dir} is running (lock {path})",
                advice="wait for it to finish",
            )
        yield


def clean_leftovers(corpus_dir: Path) -> list[Path]:
    """Remove what interrupted builds left (hidden build files, manifests without a file)."""
    removed: list[Path] = []
    for path in corpus_dir.glob(".build-[0-9]*"):
        if path.is_dir():
            shutil.rmtree(path, ignore_errors=True)
        else:
            path.unlink(missing_ok=True)
        removed.append(path)
    for path in corpus_dir.glob(".manifest-*.tmp"):
        path.unlink(missing_ok=True)
        removed.append(path)
    for path in corpus_dir.glob("*.manifest.json"):
        snapshot = path.with_name(path.name.removesuffix(".manifest.json") + ".duckdb")
        if not snapshot.exists():
            path.unlink(missing_ok=True)
            removed.append(path)
    return removed


_STAMP = re.compile(r"-(\d{8}T\d{6}Z)$")


def free_stamp(
    corpus_dir: Path,
    name: str,
    now: Callable[[], datetime] = lambda: datetime.now(UTC),
    *,
    after: Path | None = None,
) -> str:
    """A UTC stamp ``YYYYmmddTHHMMSSZ`` no snapshot of this corpus uses yet, and later than
    the stamp of ``after`` (the parent's file). A child built within the second of its parent,
    in another folder, would otherwise share its snapshot id, and the audit would read the
    parent's harvest as the child's own (``refreshed``): a record the child's failed harvest
    did not refresh would lose its ``not_refreshed`` flag."""
    moment = now().replace(microsecond=0)
    found = _STAMP.search(after.stem) if after is not None else None
    if found is not None:
        floor = datetime.strptime(found.group(1), "%Y%m%dT%H%M%SZ").replace(tzinfo=UTC)
        moment = max(moment, floor + timedelta(seconds=1))
    while True:
        stamp = moment.strftime("%Y%m%dT%H%M%SZ")
        if not (corpus_dir / f"{name}-{stamp}.duckdb").exists():
            return stamp
        moment += timedelta(seconds=1)
