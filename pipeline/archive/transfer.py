"""Moving sealed snapshots in and out of an archive, checked both ways; and pruning.

* :func:`push` — a snapshot is checked against its manifest and seal
  (:func:`pipeline.snapshot.trust.trust_snapshot`) before it leaves, its checksum file
  written, and the three files stored. Pushing a snapshot the archive already holds with the
  same sha256 does nothing; with another one it is refused (archived snapshots never change).
* :func:`pull` — the files are downloaded into a hidden folder inside the corpus folder, the
  checksum file compared with the manifest, and the snapshot checked against its manifest and
  seal; only then are the manifest and the file renamed into the corpus folder (the file last:
  the commit point). A corrupted download, a manifest that does not verify, or an archive
  without any snapshot of the corpus leaves nothing behind and fails.
* :func:`prune` — the retention rule: keep the ``keep`` newest snapshots of a corpus and every
  snapshot a published report was audited against (by sha256); the newest one holds every
  version of its lineage, so older ones are needed only by the reports that cite them.
"""

from __future__ import annotations

import json
import shutil
import tempfile
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path
from typing import Literal

from audit.errors import InputError
from pipeline.archive import Archive, ArchivedSnapshot, SnapshotFiles, newest
from pipeline.errors import ArchiveError, TamperedSnapshotError
from pipeline.snapshot.manifest import fsync_path, read_manifest
from pipeline.snapshot.trust import SealPolicy, TrustedSnapshot, run_checks, trust_snapshot

GIB = 1 << 30


@dataclass(frozen=True)
class Pushed:
    snapshot_id: str
    location: str
    status: Literal["pushed", "already archived"]


@dataclass(frozen=True)
class Pulled:
    snapshot_id: str
    path: Path
    status: Literal["pulled", "already here"]


def checksum_text(sha256: str, file_name: str) -> str:
    """The ``.sha256`` file: ``sha256sum`` format, so ``sha256sum -c`` checks a download."""
    return f"{sha256}  {file_name}\n"


def parse_checksum(text: str, where: str) -> str:
    """The digest a ``.sha256`` file's text records; ArchiveError when it is not one."""
    digest, _, name = text.strip().partition("  ")
    if len(digest) != 64 or any(c not in "0123456789abcdef" for c in digest) or not name:
        raise ArchiveError(f"the checksum file of {where} is not '<sha256>  <file name>'")
    return digest


def read_checksum(path: Path) -> str:
    """The digest of a downloaded ``.sha256`` file."""
    try:
        text = path.read_text(encoding="ascii")
    except (OSError, UnicodeDecodeError) as error:
        raise ArchiveError(f"cannot read the checksum file {path.name}: {error}") from None
    return parse_checksum(text, path.name)


def push(snapshot: Path, archive: Archive, policy: SealPolicy) -> Pushed:
    """Check ``snapshot``, then store it with its manifest and checksum in ``archive``."""
    trusted = trust_snapshot(snapshot, policy)
    limit = archive.max_file_bytes
    if limit is not None and trusted.manifest.size > limit:
        raise ArchiveError(
            f"{snapshot} is {trusted.manifest.size / GIB:.2f} GiB; {archive.label} holds files "
            f"of at most {limit / GIB:.0f} GiB",
            advice="archive it in a folder (--to PATH), or export it for Spark: "
            "citeseal snapshot export PATH --parquet DIR",
        )
    snapshot_id = trusted.manifest.snapshot_id
    held = {item.snapshot_id: item for item in archive.list(trusted.manifest.name)}
    if snapshot_id in held:
        return Pushed(snapshot_id, held[snapshot_id].location, _same(trusted, held, archive))
    with tempfile.TemporaryDirectory(prefix="citeseal-push-") as tmp:
        files = SnapshotFiles(Path(tmp) / snapshot.name)
        files.snapshot.symlink_to(snapshot.resolve())
        shutil.copyfile(snapshot.with_name(f"{snapshot_id}.manifest.json"), files.manifest)
        files.checksum.write_text(checksum_text(trusted.sha256, snapshot.name), "ascii")
        trusted.still_unchanged()
        location = archive.put(files)
    return Pushed(snapshot_id, location, "pushed")


def _same(
    trusted: TrustedSnapshot, held: dict[str, ArchivedSnapshot], archive: Archive
) -> Literal["already archived"]:
    """An archived snapshot of the same id is the same snapshot, or the push is refused."""
    item = held[trusted.manifest.snapshot_id]
    where = f"{item.snapshot_id} in {archive.label}"
    if parse_checksum(archive.checksum(item), where) == trusted.sha256:
        return "already archived"
    raise ArchiveError(
        f"{archive.label} already holds another {item.snapshot_id} (archived snapshots never "
        "change)",
        advice="a rebuilt snapshot gets a new id: build it again instead of pushing this one",
    )


def choose(
    archive: Archive, corpus: str, which: Literal["latest", "all"] | str
) -> list[ArchivedSnapshot]:
    """The snapshots of ``corpus`` to pull: the newest, all, or one id."""
    items = archive.list(corpus)
    if not items:
        raise ArchiveError(
            f"{archive.label} holds no snapshot of corpus {corpus!r}",
            advice="push one first, or start a new lineage on purpose "
            "(citeseal snapshot build SPEC --new-lineage)",
        )
    if which == "latest":
        latest = newest(items)
        return [latest] if latest is not None else []
    if which == "all":
        return items
    found = [item for item in items if item.snapshot_id == which]
    if not found:
        raise ArchiveError(f"{archive.label} holds no snapshot {which!r} of corpus {corpus!r}")
    return found


def pull(item: ArchivedSnapshot, archive: Archive, corpus_dir: Path, policy: SealPolicy) -> Pulled:
    """Download ``item`` into ``corpus_dir``, checked on the way in (see the module docstring)."""
    final = corpus_dir / f"{item.snapshot_id}.duckdb"
    if final.exists():
        trust_snapshot(final, policy)  # the copy already here must itself check out
        return Pulled(item.snapshot_id, final, "already here")
    corpus_dir.mkdir(parents=True, exist_ok=True)
    staging = Path(tempfile.mkdtemp(prefix=f".pull-{item.snapshot_id}-", dir=corpus_dir))
    try:
        files = archive.get(item, staging)
        recorded = read_checksum(files.checksum)
        manifest = read_manifest(files.snapshot)
        if recorded != manifest.sha256:
            raise TamperedSnapshotError(
                f"{item.snapshot_id} from {archive.label} failed its checksum check: its "
                f"checksum file says {recorded}, its manifest says {manifest.sha256}",
                advice="the download was discarded",
            )
        checks, _ = run_checks(files.snapshot, policy)
        failed = next((check for check in checks if check.ok is False), None)
        if failed is not None:
            raise TamperedSnapshotError(
                f"{item.snapshot_id} from {archive.label} failed its {failed.name} check: "
                f"{failed.detail}",
                advice="the download was discarded; " + (failed.advice or "push it again"),
            )
        for path in (files.checksum, files.manifest):
            path.replace(corpus_dir / path.name)
        files.snapshot.replace(final)  # the commit point
        fsync_path(corpus_dir)
    finally:
        shutil.rmtree(staging, ignore_errors=True)
    return Pulled(item.snapshot_id, final, "pulled")


@dataclass(frozen=True)
class Pruning:
    keep: tuple[ArchivedSnapshot, ...]
    drop: tuple[ArchivedSnapshot, ...]
    reasons: dict[str, str]  # snapshot id → why it is kept


def plan_prune(items: Iterable[ArchivedSnapshot], keep: int, cited: dict[str, str]) -> Pruning:
    """The retention rule (pure): the ``keep`` newest, and every snapshot in ``cited``
    (snapshot id → the report that was audited against it)."""
    ordered = sorted(items, key=lambda item: item.stamp)
    reasons: dict[str, str] = {}
    for item in ordered[-keep:] if keep > 0 else []:
        reasons[item.snapshot_id] = f"one of the {keep} newest"
    for item in ordered:
        if item.snapshot_id in cited and item.snapshot_id not in reasons:
            reasons[item.snapshot_id] = f"report {cited[item.snapshot_id]} was audited against it"
    return Pruning(
        keep=tuple(i for i in ordered if i.snapshot_id in reasons),
        drop=tuple(i for i in ordered if i.snapshot_id not in reasons),
        reasons=reasons,
    )


def cited_snapshots(reports_dir: Path | None) -> dict[str, str]:
    """Snapshot id → the first report (by file name) that names it, from report JSON files.

    Fails closed: pruning deletes what no report protects, so a ``reports_dir`` that is not a
    folder (a typo), or a JSON file in it that names no snapshot (broken, or not a report),
    is an error rather than a report skipped and its snapshot deleted.
    """
    cited: dict[str, str] = {}
    if reports_dir is None:
        return cited
    if not reports_dir.is_dir():
        raise InputError(f"--reports {reports_dir}: no such folder")
    for path in sorted(reports_dir.rglob("*.json")):
        name = path.relative_to(reports_dir).as_posix()
        try:
            document = json.loads(path.read_bytes())
        except (OSError, ValueError, RecursionError):
            document = None
        snapshot = document.get("snapshot") if isinstance(document, dict) else None
        snapshot_id = snapshot.get("snapshot_id") if isinstance(snapshot, dict) else None
        if not isinstance(snapshot_id, str):
            raise InputError(
                f"{name} in --reports names no snapshot, so what it protects is unknown",
                advice="fix the report or move it out of the folder, then prune again",
            )
        cited.setdefault(snapshot_id, name)
    return cited
    for path in sorted(reports_dir.rglob("*.json")):
        try:
            document = json.loads(path.read_bytes())
        except (OSError, ValueError, RecursionError):
            continue  # not a report: the site build names it
        snapshot = document.get("snapshot") if isinstance(document, dict) else None
        snapshot_id = snapshot.get("snapshot_id") if isinstance(snapshot, dict) else None
        if isinstance(snapshot_id, str):
            cited.setdefault(snapshot_id, path.relative_to(reports_dir).as_posix())
    return cited
