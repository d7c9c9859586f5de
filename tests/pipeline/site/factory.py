"""Hand-made inputs for the site tests: small snapshot files and reports with known content.

Snapshots are written with the real schema (:data:`pipeline.snapshot.schema.MIGRATIONS`), so
the site reads them exactly as it reads a built snapshot; the records are synthetic.
"""

from __future__ import annotations

import hashlib
import json
from dataclasses import dataclass, field
from pathlib import Path

import duckdb

from audit.folding import fold
from pipeline.snapshot.schema import MIGRATIONS


@dataclass
class FakeRecord:
    record_id: str
    source: str
    versions: dict[str, dict[str, str]]  # version → path → text
    title: str = "Zentravir and Farrow syndrome"
    retracted: bool | None = False
    expression_of_concern: bool | None = False
    withdrawn: bool = False
    relations: list[tuple[str, str]] = field(default_factory=list)  # (kind, target)

    @property
    def current(self) -> str:
        return list(self.versions)[-1]


def write_snapshot(
    path: Path,
    records: list[FakeRecord],
    *,
    name: str = "demo",
    created_at: str = "2025-01-15T00:00:00Z",
    parent_sha256: str | None = None,
    manifest: bool = True,
) -> str:
    """Write a snapshot file (and its manifest); returns the file's sha256."""
    path.parent.mkdir(parents=True, exist_ok=True)
    con = duckdb.connect(str(path))
    for migration in MIGRATIONS:
        con.execute(migration.sql)
    meta = {
        "name": name,
        "snapshot_id": path.stem,
        "created_at": created_at,
        "schema_version": "1",
        "tool_version": "0.1.0",
    }
    if parent_sha256:
        meta["parent_sha256"] = parent_sha256
    con.executemany("INSERT INTO meta VALUES (?, ?)", list(meta.items()))
    sources = sorted({r.source for r in records})
    for source in sources:
        mine = [r for r in records if r.source == source]
        passages = sum(len(r.versions[r.current]) for r in mine)
        con.execute(
            "INSERT INTO sources (source, status, records, passages) VALUES (?, 'ok', ?, ?)",
            [source, len(mine), passages],
        )
    for r in records:
        for seq, (version, texts) in enumerate(r.versions.items(), 1):
            current = version == r.current
            con.execute(
                "INSERT INTO records (record_id, version, source, content_hash, title, retracted,"
                " expression_of_concern, preprint) VALUES (?, ?, ?, ?, ?, ?, ?, FALSE)",
                [
                    r.record_id,
                    version,
                    r.source,
                    f"hash-{r.record_id}-{version}",
                    r.title,
                    r.retracted if current else False,
                    r.expression_of_concern if current else False,
                ],
            )
            con.execute(
                "INSERT INTO record_versions VALUES (?, ?, ?, ?, ?, ?, 'harvest')",
                [r.record_id, version, seq, f"hash-{version}", path.stem, path.stem],
            )
            for n, (p, text) in enumerate(texts.items(), 1):
                con.execute(
                    "INSERT INTO passages VALUES (?, ?, ?, ?, ?, ?, ?)",
                    [r.record_id, version, p, n, p.split(".")[0], text, fold(text)],
                )
        con.execute(
            "INSERT INTO record_state VALUES (?, ?, ?, ?, ?)",
            [r.record_id, r.source, r.current, r.withdrawn, path.stem if r.withdrawn else None],
        )
        for kind, target in r.relations:
            con.execute(
                "INSERT INTO relations (record_id, kind, target, source) VALUES (?, ?, ?, ?)",
                [r.record_id, kind, target, r.source],
            )
    con.close()
    sha = hashlib.sha256(path.read_bytes()).hexdigest()
    if manifest:
        document = {"sha256": sha, "name": name, "parent_sha256": parent_sha256}
        path.with_name(path.name + ".manifest.json").write_text(
            json.dumps(document, indent=2), encoding="utf-8"
        )
    return sha
