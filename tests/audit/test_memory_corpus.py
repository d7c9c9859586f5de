"""The in-memory corpus (audit/corpus.py): what tests and the evaluation audit against."""

from __future__ import annotations

from audit.corpus import InMemoryCorpus


def test_an_in_memory_corpus_names_its_snapshot_id_and_time_in_its_identity() -> None:
    corpus = InMemoryCorpus(
        sources={"pubmed": "ok"},
        name="planted",
        snapshot_id="planted-2026-12-03",
        created_at="2026-12-03T09:00:00Z",
    )
    identity = corpus.identity()
    assert (identity.name, identity.path, identity.sha256) == (
        "planted",
        "memory:planted",
        "0" * 64,
    )
    assert (identity.snapshot_id, identity.created_at) == (
        "planted-2026-12-03",
        "2026-12-03T09:00:00Z",
    )
    assert corpus.source_status() == {"pubmed": "ok"}
