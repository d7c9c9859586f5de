"""Hand-made inputs for the site tests: small snapshot files and reports with known content.

Snapshots are written with the real schema (:data:`pipeline.snapshot.schema.MIGRATIONS`), so
the site reads them exactly as it reads a built snapshot; the records are synthetic.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from pathlib import Path
from xml.etree import ElementTree

import duckdb

from audit.folding import fold
from pipeline.snapshot.manifest import sha256_file
from pipeline.snapshot.schema import MIGRATIONS
from tests.conftest import TEST_KEYRING
from tests.sealing import seal_snapshot


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
    if manifest:
        seal_snapshot(path, TEST_KEYRING, name=name)
    return sha256_file(path)


HOSTILE = (
    '<script>alert("x")</script><img src=x onerror="alert(1)"><a href="javascript:alert(2)">j</a>'
)


def demo_records(*, second: bool) -> list[FakeRecord]:
    """Three records; the second snapshot retracts one, versions one and withdraws one."""
    trial_versions = {"2025-01-15": {"trial.brief_summary.1": "Zentravir once daily."}}
    if second:
        trial_versions["2025-06-02"] = {"trial.brief_summary.1": "Zentravir twice daily."}
    return [
        FakeRecord(
            "pmid:99000001",
            "pubmed",
            {"1": {"title": "Zentravir cohort " + HOSTILE, "abstract.1": "No risk. " + HOSTILE}},
            title="Zentravir cohort " + HOSTILE,
            retracted=second,
            relations=[("retraction_in", "pmid:99000003")] if second else [],
        ),
        FakeRecord("nct:NCT99000001", "clinicaltrials", trial_versions),
        FakeRecord(
            "nct:NCT99000002",
            "clinicaltrials",
            {"2025-01-15": {"trial.brief_summary.1": "A withdrawn trial."}},
            withdrawn=second,
        ),
    ]


def make_inputs(root: Path, *, reports: int = 3, hostile: bool = True) -> tuple[Path, Path]:
    """A reports folder and a snapshots folder (two snapshots of one lineage)."""
    from pipeline.bench.bench_site import make_report

    snapshots = root / "snapshots"
    first = write_snapshot(snapshots / "demo" / "demo-20250115.duckdb", demo_records(second=False))
    write_snapshot(
        snapshots / "demo" / "demo-20250602.duckdb",
        demo_records(second=True),
        created_at="2025-06-02T00:00:00Z",
        parent_sha256=first,
    )
    folder = root / "reports"
    folder.mkdir(parents=True)
    for i in range(reports):
        document = make_report(i, snapshot_sha256=first).model_dump(mode="json")
        document["snapshot"]["name"] = "demo"
        if hostile and i == 0:
            poison(document)
        (folder / f"answer-{i}.json").write_text(json.dumps(document, indent=2), encoding="utf-8")
    return folder, snapshots


def poison(document: dict) -> None:
    """Put hostile HTML into every text field of a report document."""
    document["source"] = HOSTILE
    document["verdict_reasons"] = [HOSTILE]
    for sentence in document["sentences"]:
        sentence["text"] = HOSTILE
        for citation in sentence["citations"]:
            citation["raw"] = HOSTILE
            citation["handle"] = HOSTILE
            if citation.get("detail") is not None:
                citation["detail"] = HOSTILE
            if citation.get("quote") is not None:
                citation["quote"] = HOSTILE
            for flag in citation["flags"]:
                flag["detail"] = HOSTILE
            for key in ("passage", "current_passage"):
                if citation.get(key):
                    citation[key]["text"] = "Before " + HOSTILE + " after."
                    citation[key]["section"] = HOSTILE
            if citation.get("closest_match") is not None:
                citation["closest_match"] = HOSTILE
            if citation.get("record"):
                citation["record"]["title"] = HOSTILE
                citation["record"]["status"] = HOSTILE


def parse_html(path: Path) -> ElementTree.Element:
    import html5lib

    return html5lib.parse(
        path.read_text(encoding="utf-8"), treebuilder="etree", namespaceHTMLElements=False
    )


def pages_of(site: Path) -> list[Path]:
    return sorted(site.rglob("*.html"))


def ids_of(path: Path) -> set[str]:
    return {e.get("id", "") for e in parse_html(path).iter() if e.get("id")}
