"""A fixture snapshot of invented works for the reference-check tests (ids out of real ranges).

Used by test_resolve.py, test_check.py, the golden check reports (check_golden.py) and
tests/pipeline/test_check_cmd.py. :func:`write_works` writes the schema's tables with the
works below and seals the manifest with ``tests.conftest.TEST_KEYRING``.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import duckdb

from pipeline.snapshot.schema import MIGRATIONS
from tests.conftest import TEST_KEYRING
from tests.sealing import seal_snapshot

COHORT = {
    "record_id": "pmid:99100001",
    "source": "pubmed",
    "title": "A synthetic cohort of vitamin X in adults: ten-year outcomes.",
    "doi": "10.5555/ref.0001",
    "pmid": "99100001",
    "pmcid": "PMC99100001",
    "year": 2020,
    "journal": "Journal of Synthetic Medicine",
    "authors": ["van der Berg K", "Müller J", "Smith AB"],
    "retracted": False,
    "expression_of_concern": False,
    "preprint": False,
}
RETRACTED = {
    "record_id": "pmid:99100002",
    "source": "pubmed",
    "title": "Vitamin Y and sleep quality in older adults: a randomised trial.",
    "doi": "10.5555/ref.0002",
    "pmid": "99100002",
    "year": 2021,
    "journal": "Synthetic Reviews in Geriatrics",
    "authors": ["Doe J", "Roe R"],
    "retracted": True,
    "expression_of_concern": False,
    "preprint": False,
}
PUBLISHED = {
    "record_id": "pmid:99100003",
    "source": "pubmed",
    "title": "Vitamin Z protects against liver injury in mice.",
    "doi": "10.5555/ref.0003",
    "pmid": "99100003",
    "year": 2022,
    "journal": "Journal of Synthetic Medicine",
    "authors": ["Ng L", "Okafor C"],
    "retracted": False,
    "expression_of_concern": True,
    "preprint": False,
}
PREPRINT = {
    "record_id": "ppr:PPR991001",
    "source": "europepmc",
    "title": "Vitamin Z and liver injury in mice (preprint)",
    "doi": "10.5555/ref.pre.0001",
    "year": 2021,
    "journal": "Synthetic Preprint Server",
    "authors": ["Ng L", "Okafor C"],
    "retracted": False,
    "expression_of_concern": False,
    "preprint": True,
}
TRIAL = {
    "record_id": "nct:NCT99100001",
    "source": "clinicaltrials",
    "title": "A Trial of Vitamin X in Children With Synthetic Syndrome",
    "year": 2023,
    "authors": [],
    "retracted": False,
    "expression_of_concern": False,
    "preprint": False,
}
WORKS: tuple[dict[str, Any], ...] = (COHORT, RETRACTED, PUBLISHED, PREPRINT, TRIAL)
RELATIONS = (("ppr:PPR991001", "preprint_of", "pmid:99100003", "europepmc"),)
_COLUMNS = ("title", "doi", "pmid", "pmcid", "year", "journal", "retracted")
_COLUMNS += ("expression_of_concern", "preprint")


def write_works(path: Path, works: tuple[dict[str, Any], ...] = WORKS) -> Path:
    """A sealed snapshot file holding ``works`` (current version '1' each)."""
    con = duckdb.connect(str(path))
    try:
        for migration in MIGRATIONS:
            con.execute(migration.sql)
        con.executemany(
            "INSERT INTO meta VALUES (?, ?)",
            [["name", "works"], ["snapshot_id", "works-1"], ["schema_version", "4"]],
        )
        for source in ("pubmed", "europepmc", "clinicaltrials"):
            con.execute("INSERT INTO sources (source, status) VALUES (?, 'ok')", [source])
        for work in works:
            values = [work.get(c) for c in _COLUMNS]
            con.execute(
                "INSERT INTO records (record_id, version, source, content_hash, title, doi, pmid, "
                "pmcid, year, journal, retracted, expression_of_concern, preprint, authors) "
                "VALUES (?, '1', ?, 'h', ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
                [work["record_id"], work["source"], *values, json.dumps(work["authors"])],
            )
            con.execute(
                "INSERT INTO record_versions VALUES (?, '1', 1, 'h', 'works-1', 'works-1', "
                "'harvest')",
                [work["record_id"]],
            )
            con.execute(
                "INSERT INTO record_state VALUES (?, ?, '1', FALSE, NULL)",
                [work["record_id"], work["source"]],
            )
        for record_id, kind, target, source in RELATIONS:
            con.execute(
                "INSERT INTO relations VALUES (?, ?, ?, ?, NULL, NULL, NULL)",
                [record_id, kind, target, source],
            )
    finally:
        con.close()
    seal_snapshot(path, TEST_KEYRING, name="works")
    return path
