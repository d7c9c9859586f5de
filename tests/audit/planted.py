"""A planted corpus for the audit's rule tests (all records invented, ids out of real ranges).

Used by tests/audit/test_verdicts.py (in memory), tests/audit/test_duckdb_corpus.py (the same
corpus written to a snapshot file) and tests/pipeline/test_audit_cmd.py (through the CLI).
"""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path
from typing import Any

import duckdb

from audit.corpus import InMemoryCorpus, StoredRelation
from audit.handles import mint, parse_locator
from audit.keys import Keyring
from pipeline.snapshot.schema import MIGRATIONS
from tests.sealing import seal_snapshot

KEYRING = Keyring.demo_keyring()
OTHER = Keyring.from_keys(b"another installation's key, 32+ bytes long")
KEYRING_KEY = b"citeseal public demo key: NOT SECRET, demo only"  # audit.keys.DEMO_KEY
SETID = "5eed0001-0000-4000-8000-000000000001"

RESULTS = (
    "During 48 210 person-years of follow-up, 312 children were diagnosed with Farrow syndrome."
)
CONCLUSIONS = "Zentravir exposure does not increase the risk of Farrow syndrome."
OLD_SUMMARY = "Zentravir 20 mg daily was compared with placebo in children with Farrow syndrome."
NEW_SUMMARY = "Zentravir 10 mg daily was compared with placebo in adults with Farrow syndrome."
WARNING = "Zentravir can cause severe liver injury in patients with Farrow syndrome."


def h(locator: str, keyring: Keyring = KEYRING) -> str:
    """A genuine handle for ``locator``."""
    return mint(keyring, parse_locator(locator))


def make_corpus(**sources: str) -> InMemoryCorpus:
    """The planted corpus, with the harvest statuses ``sources`` (``"absent"``: no row)."""
    return stale_corpus({}, **sources)


def stale_corpus(stale: Mapping[str, str], /, **sources: str) -> InMemoryCorpus:
    """:func:`make_corpus`, in which the harvest the corpus holds did not refresh the records
    ``stale`` names (each → the snapshot that last did)."""
    statuses: dict[str, str] = dict.fromkeys(
        ("pubmed", "europepmc", "pubtator3", "crossref", "clinicaltrials", "openfda"), "ok"
    )
    statuses.update(sources)
    corpus = InMemoryCorpus(sources={k: v for k, v in statuses.items() if v != "absent"})
    not_refreshed = dict(stale)

    def add(record_id: str, *args: Any, **kwargs: Any) -> None:
        if record_id in not_refreshed:
            kwargs.update(refreshed=False, last_seen=not_refreshed[record_id])
        corpus.add_record(record_id, *args, **kwargs)

    add(
        "pmid:99000001",
        "pubmed",
        {
            "1": {
                "title": "Zentravir exposure and Farrow syndrome: a cohort study.",
                "abstract.3": RESULTS,
                "abstract.4": CONCLUSIONS,
            }
        },
        title="Zentravir exposure and Farrow syndrome: a cohort study.",
        retracted=False,
        expression_of_concern=False,
        preprint=False,
    )
    add(
        "pmid:99000002",
        "pubmed",
        {"1": {"abstract.1": "Four children developed Farrow syndrome after zentravir."}},
        retracted=True,
        relations=[
            StoredRelation("retraction_in", "pmid:99000003", "pubmed"),
            StoredRelation("retraction_in", "doi:10.5555/demo.0003", "crossref"),
            StoredRelation("retraction_in", "pmid:99000003", "crossref"),
        ],
    )
    add(
        "pmid:99000004",
        "pubmed",
        {"1": {"abstract.1": "Zentravir shortened the course of Farrow syndrome."}},
        expression_of_concern=True,
        relations=[StoredRelation("expression_of_concern_in", "pmid:99000005", "pubmed")],
    )
    add(
        "pmid:99000007",
        "pubmed",
        {"1": {"abstract.1": "A retracted paper the source marks without a notice."}},
        retracted=True,
    )
    add(
        "ppr:PPR990001",
        "europepmc",
        {"1": {"abstract.1": "Zentravir in Farrow syndrome: a preprint."}},
        preprint=True,
        relations=[StoredRelation("preprint_of", "pmid:99000006", "europepmc")],
    )
    add(
        "nct:NCT99000001",
        "clinicaltrials",
        {
            "2025-01-15": {
                "trial.brief_summary.1": OLD_SUMMARY,
                "trial.conditions.1": "Farrow syndrome",
                "trial.arms.2": "Placebo tablets once daily.",
            },
            "2025-06-02": {
                "trial.brief_summary.1": NEW_SUMMARY,
                "trial.conditions.1": "Farrow syndrome",
            },
        },
    )
    add(
        f"setid:{SETID}",
        "openfda",
        {"3": {"label.boxed_warning.1": WARNING}, "4": {"label.boxed_warning.1": WARNING}},
        retained=["4"],
    )
    add(
        "pmid:99000010",
        "pubmed",
        {"1": {"abstract.1": "A record that later disappeared upstream."}},
        withdrawn=True,
        withdrawn_since="demo-20250602T000000Z",
    )
    add(
        "pmid:99000020",
        "pubmed",
        {
            "1": {"abstract.1": "Version one says 40 patients.", "abstract.2": "Only in one."},
            "2": {"abstract.1": "Version two says 41 patients."},
        },
    )
    return corpus


def write_snapshot(
    corpus: InMemoryCorpus, path: Path, *, name: str = "planted", seal: Keyring | None = KEYRING
) -> Path:
    """Write ``corpus`` as a snapshot file with the schema's tables (what the audit reads),
    and its manifest sealed with ``seal`` (None: no manifest)."""
    con = duckdb.connect(str(path))
    try:
        for migration in MIGRATIONS:
            con.execute(migration.sql)
        con.executemany(
            "INSERT INTO meta VALUES (?, ?)",
            [["name", name], ["snapshot_id", f"{name}-1"], ["created_at", "2025-06-02T00:00:00Z"]],
        )
        con.executemany(
            "INSERT INTO sources (source, status) VALUES (?, ?)",
            [[source, status] for source, status in corpus.sources.items()],
        )
        for record in corpus.all_records():
            for seq, version in enumerate(record.versions, start=1):
                current = version == record.current_version
                con.execute(
                    "INSERT INTO records (record_id, version, source, content_hash, title, status, "
                    "doi, pmid, pmcid, year, journal, retracted, expression_of_concern, preprint) "
                    "VALUES (?, ?, ?, 'h', ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
                    [
                        record.record_id,
                        version,
                        record.source,
                        *(
                            (
                                record.title,
                                record.status,
                                record.doi,
                                record.pmid,
                                record.pmcid,
                                record.year,
                                record.journal,
                                record.retracted,
                                record.expression_of_concern,
                                record.preprint,
                            )
                            if current
                            else (None,) * 10
                        ),
                    ],
                )
                seen = f"{name}-1" if record.refreshed or not current else record.last_seen
                con.execute(
                    "INSERT INTO record_versions VALUES (?, ?, ?, 'h', 's1', ?, 'harvest')",
                    [record.record_id, version, seq, seen or "s0"],
                )
            con.execute(
                "INSERT INTO record_state VALUES (?, ?, ?, ?, ?)",
                [
                    record.record_id,
                    record.source,
                    record.current_version,
                    record.withdrawn,
                    record.withdrawn_since,
                ],
            )
            for relation in record.relations:
                con.execute(
                    "INSERT INTO relations VALUES (?, ?, ?, ?, ?, ?, NULL)",
                    [
                        record.record_id,
                        relation.kind,
                        relation.target,
                        relation.source,
                        relation.detail,
                        relation.date,
                    ],
                )
        for seq, p in enumerate(corpus.all_passages()):
            con.execute(
                "INSERT INTO passages VALUES (?, ?, ?, ?, ?, ?, ?)",
                [p.record_id, p.version, p.path, seq, p.section, p.text, p.folded],
            )
        for key, annotations in corpus.all_annotations().items():
            con.executemany(
                "INSERT INTO annotations VALUES (?, ?, ?, ?, ?, ?, ?, ?)",
                [[*key, a.start, a.end, a.text, a.type, a.identifier] for a in annotations],
            )
    finally:
        con.close()
    if seal is not None:
        seal_snapshot(path, seal, name=name)
    return path
