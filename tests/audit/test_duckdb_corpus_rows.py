"""Rows of a snapshot file become the same stored values as the in-memory corpus holds.

The DuckDB corpus hands the folded text over only where it differs from the text and orders the
versions of a path in Python: neither may show."""

from __future__ import annotations

from pathlib import Path

from audit.corpus import InMemoryCorpus, PathRef
from audit.duckdb_corpus import DuckDBCorpus
from tests.audit.planted import write_snapshot

TYPOGRAPHIC = "Zentravir \u2013 20\u00a0mg \u201cdaily\u201d \u2026 in Farrow syndrome."
PLAIN = "Zentravir 20 mg daily in Farrow syndrome."


def _corpus() -> InMemoryCorpus:
    corpus = InMemoryCorpus(sources={"pubmed": "ok", "clinicaltrials": "ok"})
    corpus.add_record(
        "pmid:99000001",
        "pubmed",
        {"1": {"abstract.1": TYPOGRAPHIC, "abstract.2": PLAIN}},
        year=2024,
        journal="Journal of Invented Results",
        retracted=False,
    )
    corpus.add_record(
        "nct:NCT99000001",
        "clinicaltrials",
        {
            "2025-01-15": {"trial.brief_summary.1": PLAIN},
            "2025-03-01": {"trial.brief_summary.1": TYPOGRAPHIC},
            "2025-06-02": {"trial.brief_summary.1": PLAIN + " Updated."},
        },
    )
    return corpus


def test_rows_become_the_in_memory_values(tmp_path: Path) -> None:
    memory = _corpus()
    path = write_snapshot(memory, tmp_path / "rows.duckdb")
    refs = [
        PathRef("pmid:99000001", "abstract.1"),
        PathRef("pmid:99000001", "abstract.2"),
        PathRef("nct:NCT99000001", "trial.brief_summary.1"),
        PathRef("nct:NCT99000001", "trial.nothing"),
    ]
    ids = ["pmid:99000001", "nct:NCT99000001", "pmid:99000999"]
    with DuckDBCorpus(path) as corpus:
        found = corpus.passage_versions(refs)
        records = corpus.records(ids)
    assert found == memory.passage_versions(refs)
    assert records == memory.records(ids)
    typographic = found[refs[0]][0]
    assert typographic.text == TYPOGRAPHIC
    assert typographic.folded == 'Zentravir - 20 mg "daily" ... in Farrow syndrome.'
    assert found[refs[1]][0].folded == PLAIN
    # three versions of one path, oldest first (as record_versions orders them)
    assert [p.version for p in found[refs[2]]] == ["2025-01-15", "2025-03-01", "2025-06-02"]
    assert records["nct:NCT99000001"].versions == ("2025-01-15", "2025-03-01", "2025-06-02")
