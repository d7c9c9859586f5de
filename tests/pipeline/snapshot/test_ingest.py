"""The Python half of ingesting: batches cut to a bounded size, nothing lost or repeated."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from audit.folding import fold
from pipeline.records import Passage, Record
from pipeline.snapshot import ingest
from pipeline.snapshot.ingest import Ingest
from pipeline.snapshot.store import BatchWriter, Staged


def record(n: int, passages: int, size: int = 10) -> Record:
    return Record(
        record_id=f"pmid:{99_000_000 + n}",
        source="pubmed",
        title=f"Zentravir trial {n}",
        passages=[
            Passage(path=f"abstract.{i}", section="Abstract", text="z" * size + f" {n}.{i}")
            for i in range(1, passages + 1)
        ],
    )


def test_batches_are_cut_by_passages_and_text_and_keep_every_record_once(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(ingest, "BATCH_PASSAGES", 10)
    monkeypatch.setattr(ingest, "BATCH_TEXT", 1_000)
    stage = Ingest(None, BatchWriter(tmp_path), "s1", fold, first_docid=1)
    records = [record(1, 4), record(2, 4), record(3, 4), record(4, 1, size=990), record(5, 30)]
    batches = stage.prepare("pubmed", records)

    def ids(staged: Staged | None) -> list[str]:
        assert staged is not None
        return json.loads(staged.path.read_text())["record_id"]

    # 4 + 4 passages fit; the third record would make 12; the 990-character one would pass
    # the text bound; a record larger than the bounds travels alone
    assert [ids(b.seen) for b in batches] == [
        ["pmid:99000001", "pmid:99000002"],
        ["pmid:99000003"],
        ["pmid:99000004"],
        ["pmid:99000005"],
    ]
    assert [len(ids(b.passages)) for b in batches] == [8, 4, 1, 30]
    assert stage.stats.of("pubmed").records == 5
    assert stage.prepare("pubmed", records) == []  # met again: the first one wins
