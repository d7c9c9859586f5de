"""The in-memory corpus (audit/corpus.py): what tests and the evaluation audit against."""

from __future__ import annotations

from audit.corpus import InMemoryCorpus, PathRef


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


def test_a_record_keeps_the_current_and_retained_versions_it_was_given() -> None:
    corpus = InMemoryCorpus()
    versions = {"1": {"title": "First."}, "2": {"title": "Second."}, "3": {"title": "Third."}}
    record = corpus.add_record(
        "pmid:99000001", "pubmed", versions, current="2", retained=["2", "3"]
    )
    assert (record.current_version, record.versions) == ("2", ("2", "3"))
    assert [p.version for p in corpus.all_passages()] == ["2", "3"]  # version 1 not retained


def test_a_retained_version_without_passages_adds_none() -> None:
    corpus = InMemoryCorpus()
    record = corpus.add_record(
        "pmid:99000001", "pubmed", {"1": {"title": "First."}}, retained=["0", "1"]
    )
    assert record.versions == ("0", "1")
    assert [p.key.version for p in corpus.all_passages()] == ["1"]


def test_path_versions_skip_a_record_it_does_not_hold_and_go_on() -> None:
    corpus = InMemoryCorpus()
    corpus.add_record("pmid:99000001", "pubmed", {"1": {"title": "First."}})
    refs = [PathRef("pmid:99000009", "title"), PathRef("pmid:99000001", "title")]
    found = corpus.passage_versions(refs)
    assert list(found) == [PathRef("pmid:99000001", "title")]
    assert [p.text for p in found[PathRef("pmid:99000001", "title")]] == ["First."]
