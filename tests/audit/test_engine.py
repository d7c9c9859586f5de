"""The engine's batching and streaming: chunks change nothing but how often the corpus is asked."""

from __future__ import annotations

from collections.abc import Collection, Iterator, Mapping
from dataclasses import dataclass, field
from datetime import UTC, datetime

import pytest

from audit.citations import parse_answer
from audit.corpus import (
    InMemoryCorpus,
    PassageKey,
    PathRef,
    SnapshotIdentity,
    StoredPassage,
    StoredRecord,
)
from audit.engine import AuditInput, audit_answer, audit_many, iso_utc, reaudit
from audit.errors import CorpusError
from tests.audit.planted import KEYRING, h, make_corpus, stale_corpus

GOOD = h("pmid:99000001/abstract.3")
OLD_TRIAL = h("nct:NCT99000001@2025-01-15/trial.brief_summary.1")


@dataclass
class CountingCorpus:
    """Wraps a corpus and counts the batched calls the engine makes."""

    inner: InMemoryCorpus
    calls: list[tuple[str, int]] = field(default_factory=list)

    def identity(self) -> SnapshotIdentity:
        return self.inner.identity()

    def source_status(self) -> Mapping[str, str]:
        return self.inner.source_status()

    def records(self, ids: Collection[str]) -> dict[str, StoredRecord]:
        self.calls.append(("records", len(ids)))
        return self.inner.records(ids)

    def passages(self, keys: Collection[PassageKey]) -> dict[PassageKey, StoredPassage]:
        self.calls.append(("passages", len(keys)))
        return self.inner.passages(keys)

    def passage_versions(self, refs: Collection[PathRef]) -> dict[PathRef, list[StoredPassage]]:
        self.calls.append(("passage_versions", len(refs)))
        return self.inner.passage_versions(refs)


def answers(n: int) -> list[AuditInput]:
    texts = [
        f'A [{GOOD} "312 children"]. B [{OLD_TRIAL}]. C.',
        f"A [{h('pmid:99000002/abstract.1')}]. B [pmid:1-x].",
        f"Only [{h('pmid:99000999/abstract.1')}].",
    ]
    return [AuditInput(f"a{i}.md", parse_answer(texts[i % 3])) for i in range(n)]


def test_one_batch_per_chunk_not_per_citation() -> None:
    corpus = CountingCorpus(make_corpus())
    reports = list(audit_many(answers(9), corpus, KEYRING, chunk_answers=4))
    assert len(reports) == 9
    # 4 + 4 + 1 answers; per chunk the distinct records, then the paths of the known ones
    assert corpus.calls == [
        ("records", 4),
        ("passage_versions", 3),
        ("records", 4),
        ("passage_versions", 3),
        ("records", 1),  # only pmid:99000999, unknown: no passage look-up at all
    ]


def test_chunking_does_not_change_any_report() -> None:
    now = datetime(2025, 6, 2, tzinfo=UTC)
    corpus = make_corpus()
    one_by_one = [
        audit_answer(item.parsed, corpus, KEYRING, source_label=item.label, now=now)
        for item in answers(7)
    ]
    chunked = list(audit_many(answers(7), corpus, KEYRING, now=now, chunk_answers=3))
    by_citations = list(audit_many(answers(7), corpus, KEYRING, now=now, chunk_citations=2))
    assert chunked == one_by_one == by_citations
    assert [r.source for r in chunked] == [f"a{i}.md" for i in range(7)]


def test_inputs_are_consumed_a_chunk_at_a_time() -> None:
    consumed: list[int] = []

    def lazy() -> Iterator[AuditInput]:
        for i, item in enumerate(answers(1000)):
            consumed.append(i)
            yield item

    stream = audit_many(lazy(), make_corpus(), KEYRING, chunk_answers=10)
    first = next(stream)
    assert first.source == "a0.md"
    assert 10 <= len(consumed) <= 20  # the current chunk, and perhaps the next being looked up
    stream.close()


def test_a_corpus_error_reaches_the_caller() -> None:
    class Broken(CountingCorpus):
        def records(self, ids: Collection[str]) -> dict[str, StoredRecord]:
            raise CorpusError("cannot read snapshot x.duckdb: IO Error")

    with pytest.raises(CorpusError) as raised:
        list(audit_many(answers(3), Broken(make_corpus()), KEYRING))
    assert raised.value.message == "cannot read snapshot x.duckdb: IO Error"


def test_created_at_is_injectable() -> None:
    report = audit_answer(
        parse_answer("A."), make_corpus(), KEYRING, now=datetime(2025, 6, 2, 12, 30, tzinfo=UTC)
    )
    assert report.created_at == "2025-06-02T12:30:00Z"
    assert iso_utc(datetime(2025, 1, 1, tzinfo=UTC)) == "2025-01-01T00:00:00Z"


def test_reaudit_decides_afresh_against_another_corpus() -> None:
    parsed = parse_answer(f'A [{OLD_TRIAL} "20 mg daily"]. B [{GOOD}].')
    report = audit_answer(parsed, make_corpus(), KEYRING, fail_on=["uncited"])
    assert report.verdict == "pass"
    later = stale_corpus({"nct:NCT99000001": "planted-0"}, clinicaltrials="failed")
    again = reaudit(report, later, KEYRING)
    assert [(c.verdict, [f.name for f in c.flags]) for c in again.citations()] == [
        ("ok", ["version_changed", "not_refreshed"]),
        ("ok", []),
    ]
    assert (again.verdict, again.fail_on, again.source) == (
        "warn",
        ["malformed", "forged", "uncited"],
        report.source,
    )
    assert [s.text for s in again.sentences] == [s.text for s in report.sentences]


def test_an_unpinned_trial_handle_with_a_genuine_check_code_is_malformed() -> None:
    """The grammar decides at every door: a trial handle without ``@version`` signed with the
    right key (as a tool that skipped the grammar could mint it) is still malformed."""
    locator = "nct:NCT99000001/trial.brief_summary.1"
    handle = f"{locator}~{KEYRING.check_code(locator)}"
    report = audit_answer(parse_answer(f"The trial [{handle}]."), make_corpus(), KEYRING)
    (citation,) = report.citations()
    assert (citation.verdict, citation.handle) == ("malformed", handle)
    assert citation.detail == (
        "nct handles pin the record version: expected '@' and a version after the id, got '/'"
    )
    assert report.verdict == "fail"


def test_a_single_chunk_is_looked_up_without_a_worker_thread(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """One answer (the per-call path of a server or ``citeseal audit``) starts no thread: a
    worker per call cost more than the whole audit of one answer."""
    from audit import engine

    def no_thread(*args: object, **kwargs: object) -> None:
        raise AssertionError("a worker thread was started for a single chunk")

    corpus = CountingCorpus(make_corpus())
    monkeypatch.setattr(engine, "ThreadPoolExecutor", no_thread)
    report = audit_answer(answers(1)[0].parsed, corpus, KEYRING)
    assert [c.verdict for s in report.sentences for c in s.citations] == ["ok", "ok"]
    assert corpus.calls == [("records", 2), ("passage_versions", 2)]
    assert len(list(audit_many(answers(4), corpus, KEYRING, chunk_answers=4))) == 4
