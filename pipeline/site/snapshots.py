"""Phase one of the site build, for snapshots: read what the snapshot pages show.

Snapshots are opened read-only through the schema contract in
:mod:`pipeline.snapshot.schema` (tables ``meta``, ``sources``, ``records``, ``record_state``,
``record_versions``, ``passages``, ``relations``), each only once it checks out against its
manifest and the manifest against its seal (:func:`pipeline.snapshot.trust.trust_snapshot`):
a snapshot without a valid manifest, whose sha256 differs from it, or whose seal does not
verify under the build's keyring stops the build (exit 1) with its name, as does one that
cannot be opened. A published site shows only snapshots whose provenance was checked.
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

import duckdb

from audit.duckdb_corpus import read_only_connection
from audit.errors import CorpusError
from audit.report import is_partial
from pipeline.site.contexts import RecordItem, SourceLine
from pipeline.site.loaders import BuildWarning, slugify
from pipeline.snapshot.digests import DigestCache
from pipeline.snapshot.manifest import manifest_path
from pipeline.snapshot.store import read_meta
from pipeline.snapshot.trust import SealPolicy, trust_snapshot
from pipeline.snapshot.verify import describe_partial

LIST_CAP = 500  # at most this many records per list on a snapshot page


@dataclass(frozen=True)
class LoadedSnapshot:
    path: Path
    name: str  # the corpus name (meta.name, else the folder name)
    label: str  # the file name, for people
    slug: str
    sha256: str  # of the file, checked against its manifest at load
    manifest: dict[str, Any]  # the sealed manifest, as JSON
    manifest_name: str
    seal: str  # "sealed" | "demo" (trust.SealStatus: an unchecked seal is never published)
    seal_key: str | None  # fingerprint of the key that sealed the manifest
    meta: dict[str, str]
    sources: tuple[SourceLine, ...]
    records: int
    record_versions: int
    passages: int
    retracted: tuple[RecordItem, ...]
    expression_of_concern: tuple[RecordItem, ...]
    withdrawn: tuple[RecordItem, ...]
    multi_version: tuple[RecordItem, ...]
    list_totals: dict[str, int]

    @property
    def snapshot_id(self) -> str | None:
        return self.meta.get("snapshot_id")

    @property
    def created_at(self) -> str:
        return self.meta.get("created_at") or ""

    @property
    def parent_sha256(self) -> str | None:
        return self.meta.get("parent_sha256") or None

    @property
    def partial(self) -> str | None:
        """Why the snapshot is partial, in one line (from its sources and its manifest), or
        None when every request of its harvest was answered."""
        statuses = {s.source: s.status for s in self.sources}
        manifest = self.manifest or {}
        if not manifest.get("partial") and not is_partial(statuses):
            return None
        failed = sum(s.failed_requests for s in self.sources)
        carried = manifest.get("carried")
        return describe_partial(statuses, failed, carried if isinstance(carried, int) else None)


def load_snapshots(
    folder: Path, trust: SealPolicy, digests: DigestCache | None = None
) -> tuple[list[LoadedSnapshot], list[BuildWarning]]:
    """Every ``*.duckdb`` under ``folder``, oldest first (created_at, then file name), each
    trusted under ``trust`` before it is read."""
    if not folder.is_dir():
        raise CorpusError(f"snapshots folder not found: {folder}")
    snapshots: list[LoadedSnapshot] = []
    warnings: list[BuildWarning] = []
    taken: set[str] = set()
    found = [
        p
        for p in folder.rglob("*.duckdb")
        if not any(part.startswith(".") for part in p.relative_to(folder).parts)
    ]  # hidden files and folders are builds in progress or resume caches
    for path in sorted(found, key=lambda p: p.relative_to(folder).as_posix()):
        label = path.relative_to(folder).as_posix()
        snapshot = _load_one(path, label, trust, digests)
        slug, n = snapshot.slug, 1
        while slug in taken:
            n += 1
            slug = f"{snapshot.slug}-{n}"
        taken.add(slug)
        snapshots.append(_replace_slug(snapshot, slug))
    snapshots.sort(key=lambda s: (s.created_at, s.label))
    return snapshots, warnings


def _replace_slug(snapshot: LoadedSnapshot, slug: str) -> LoadedSnapshot:
    return snapshot if slug == snapshot.slug else replace(snapshot, slug=slug)


def _load_one(
    path: Path, label: str, trust: SealPolicy, digests: DigestCache | None
) -> LoadedSnapshot:
    trusted = trust_snapshot(path, trust, digests)
    manifest = trusted.manifest.model_dump(mode="json")
    try:
        con = read_only_connection(path)
    except duckdb.Error as error:
        raise CorpusError(f"cannot open snapshot {label}: {_one_line(error)}") from None
    try:
        data = _read(con)
    except duckdb.Error as error:
        raise CorpusError(f"cannot read snapshot {label}: {_one_line(error)}") from None
    finally:
        con.close()
    meta = data["meta"]
    name = meta.get("name") or path.parent.name or path.stem
    return LoadedSnapshot(
        path=path,
        name=name,
        label=label,
        slug=slugify(path.stem, fallback="snapshot"),
        sha256=trusted.sha256,
        manifest=manifest,
        manifest_name=manifest_path(path).name,
        seal=trusted.seal,
        seal_key=trusted.seal_key,
        meta=meta,
        sources=data["sources"],
        records=data["records"],
        record_versions=data["record_versions"],
        passages=data["passages"],
        retracted=data["retracted"],
        expression_of_concern=data["expression_of_concern"],
        withdrawn=data["withdrawn"],
        multi_version=data["multi_version"],
        list_totals=data["list_totals"],
    )


def _one_line(error: BaseException) -> str:
    return " ".join(str(error).split())


_FLAGGED = """
    SELECT r.record_id, r.version, r.title
    FROM record_state s
    JOIN records r ON r.record_id = s.record_id AND r.version = s.current_version
    WHERE r.{flag} ORDER BY r.record_id
"""
_NOTICES = """
    SELECT record_id, kind, target, detail, date FROM relations
    WHERE kind IN ('retraction_in', 'expression_of_concern_in', 'erratum_in', 'correction_in',
                   'retracted_and_republished_in')
    ORDER BY record_id, kind, target
"""
_WITHDRAWN = """
    SELECT s.record_id, s.current_version, r.title, s.withdrawn_since
    FROM record_state s LEFT JOIN records r
      ON r.record_id = s.record_id AND r.version = s.current_version
    WHERE s.withdrawn ORDER BY s.record_id
"""
_MULTI = """
    SELECT v.record_id, string_agg(v.version, ', ' ORDER BY v.seq), max(r.title)
    FROM record_versions v JOIN record_state s ON s.record_id = v.record_id
    LEFT JOIN records r ON r.record_id = v.record_id AND r.version = s.current_version
    GROUP BY v.record_id HAVING count(*) > 1 ORDER BY v.record_id
"""


def _read(con: duckdb.DuckDBPyConnection) -> dict[str, Any]:
    meta = read_meta(con)
    sources = tuple(
        SourceLine(str(a), str(b), int(c), int(d), int(e), None if f is None else str(f))
        for a, b, c, d, e, f in con.execute(
            "SELECT source, status, records, passages, failed_requests, detail"
            " FROM sources ORDER BY source"
        ).fetchall()
    )

    def count(sql: str) -> int:
        row = con.execute(sql).fetchone()
        return int(row[0]) if row else 0

    notices: dict[str, list[str]] = {}
    for record_id, kind, target, detail, date in con.execute(_NOTICES).fetchall():
        text = f"{str(kind).replace('_', ' ')} {target}"
        if date:
            text += f" ({date})"
        if detail:
            text += f": {detail}"
        notices.setdefault(str(record_id), []).append(text)

    totals: dict[str, int] = {}

    def listed(key: str, rows: list[tuple[Any, ...]], extra: int | None = None) -> tuple:
        totals[key] = len(rows)
        out: list[RecordItem] = []
        for row in rows[:LIST_CAP]:
            record_id = str(row[0])
            lines = list(notices.get(record_id, ()))
            if extra is not None and row[extra]:
                lines.insert(0, f"since snapshot {row[extra]}")
            out.append(RecordItem(record_id, str(row[1]), _opt(row[2]), tuple(lines)))
        return tuple(out)

    return {
        "meta": meta,
        "sources": sources,
        "records": count("SELECT count(*) FROM record_state"),
        "record_versions": count("SELECT count(*) FROM records"),
        "passages": count("SELECT count(*) FROM passages"),
        "retracted": listed("retracted", con.execute(_FLAGGED.format(flag="retracted")).fetchall()),
        "expression_of_concern": listed(
            "expression_of_concern",
            con.execute(_FLAGGED.format(flag="expression_of_concern")).fetchall(),
        ),
        "withdrawn": listed("withdrawn", con.execute(_WITHDRAWN).fetchall(), extra=3),
        "multi_version": listed("multi_version", con.execute(_MULTI).fetchall()),
        "list_totals": totals,
    }


def _opt(value: object) -> str | None:
    return None if value is None else str(value)
