"""The engine's reports carry every field the caller gave or the snapshot holds: the snapshot's
id and date, a record's identifiers, a loose citation's text, the labels and times of a
re-audit; chunks of exactly the sizes asked for; no answers, no reports."""

from __future__ import annotations

import os
import time
from collections.abc import Collection, Iterator, Sequence
from datetime import UTC, datetime

import pytest

from audit.citations import parse_answer
from audit.corpus import StoredRecord
from audit.engine import (
    AnswerInput,
    AuditInput,
    CitationInput,
    SentenceInput,
    audit_answer,
    audit_many,
    iso_utc,
    reaudit,
)
from audit.references.resolve import Key, Lookup
from tests.audit.planted import KEYRING, h, make_corpus

NOW = datetime(2025, 6, 2, 12, 30, tzinfo=UTC)
GOOD = h("pmid:99000001/abstract.3")
CITED = [
    "pmid:99000001/abstract.3",
    "pmid:99000002/abstract.1",
    "pmid:99000004/abstract.1",
    "pmid:99000007/abstract.1",
    "pmid:99000010/abstract.1",
    "pmid:99000020/abstract.1",
]


def test_a_loose_citation_is_written_back_as_cited() -> None:
    assert CitationInput.from_text(GOOD).raw == f"[{GOOD}]"
    assert CitationInput.from_text(GOOD, "312 children").raw == f'[{GOOD} "312 children"]'
    assert CitationInput.from_text(GOOD, "q", raw="(as written)").raw == "(as written)"
    malformed = CitationInput.from_text("pmid:99000001-abstract", "312 children")
    assert (malformed.handle, malformed.quote) == (None, "312 children")
    assert malformed.error is not None
    assert CitationInput.from_text(GOOD).error is None


def test_the_report_names_the_snapshot_by_its_id_and_date() -> None:
    corpus = make_corpus()
    corpus.snapshot_id, corpus.created_at = "planted-2", "2025-06-01T00:00:00Z"
    report = audit_answer(parse_answer(f"Claim [{GOOD}].\n"), corpus, KEYRING, now=NOW)
    assert (report.snapshot.snapshot_id, report.snapshot.created_at) == (
        "planted-2",
        "2025-06-01T00:00:00Z",
    )
    assert (report.source, report.created_at) == ("-", "2025-06-02T12:30:00Z")


def test_a_cited_records_identifiers_are_shown() -> None:
    corpus = make_corpus()
    corpus.add_record(
        "pmid:99000030",
        "pubmed",
        {"1": {"abstract.1": "A record with every identifier."}},
        doi="10.5555/demo.0030",
        pmid="99000030",
        pmcid="PMC99000030",
    )
    report = audit_answer(
        parse_answer(f"Claim [{h('pmid:99000030/abstract.1')}].\n"), corpus, KEYRING, now=NOW
    )
    (citation,) = report.citations()
    assert citation.record is not None
    assert (citation.record.doi, citation.record.pmid, citation.record.pmcid) == (
        "10.5555/demo.0030",
        "99000030",
        "PMC99000030",
    )


@pytest.fixture
def new_delhi() -> Iterator[None]:
    """The process in a time zone 5½ hours ahead of UTC."""
    before = os.environ.get("TZ")
    os.environ["TZ"] = "Asia/Kolkata"
    time.tzset()
    try:
        yield
    finally:
        if before is None:
            del os.environ["TZ"]
        else:
            os.environ["TZ"] = before
        time.tzset()


@pytest.mark.usefixtures("new_delhi")
def test_report_times_are_utc_whatever_the_local_time_zone() -> None:
    assert iso_utc(NOW) == "2025-06-02T12:30:00Z"
    assert iso_utc(datetime(2025, 6, 2, 18, 0, tzinfo=NOW.tzinfo)) == "2025-06-02T18:00:00Z"
    assert (
        abs(
            datetime.strptime(iso_utc(), "%Y-%m-%dT%H:%M:%SZ").replace(tzinfo=UTC)
            - datetime.now(UTC)
        ).total_seconds()
        < 5
    )


def test_no_answers_give_no_reports() -> None:
    assert list(audit_many([], make_corpus(), KEYRING, now=NOW)) == []


def _batches(chunk_answers: int, chunk_citations: int, per_answer: int = 2) -> list[list[str]]:
    """The record ids of each records() look-up when six answers, each citing its own record
    ``per_answer`` times, are audited in chunks of the sizes given."""
    corpus = make_corpus()
    looked: list[list[str]] = []
    records = corpus.records

    def recorded(ids: Collection[str]) -> dict[str, StoredRecord]:
        looked.append(sorted(i[-2:] for i in ids))
        return records(ids)

    corpus.records = recorded  # type: ignore[method-assign]
    inputs = [
        AuditInput(f"a{i}.md", parse_answer(f"Claim {' '.join([f'[{h(c)}]'] * per_answer)}.\n"))
        for i, c in enumerate(CITED)
    ]
    reports = list(
        audit_many(
            inputs,
            corpus,
            KEYRING,
            now=NOW,
            chunk_answers=chunk_answers,
            chunk_citations=chunk_citations,
        )
    )
    assert [r.source for r in reports] == [f"a{i}.md" for i in range(6)]
    return looked


def test_a_chunk_ends_when_it_holds_as_many_citations_as_asked() -> None:
    assert _batches(100, 4) == [["01", "02"], ["04", "07"], ["10", "20"]]
    assert _batches(100, 5) == [["01", "02", "04"], ["07", "10", "20"]]
    assert _batches(100, 1, per_answer=1) == [[c[-13:-11]] for c in CITED]


def test_a_chunk_ends_when_it_holds_as_many_answers_as_asked() -> None:
    assert _batches(1, 1000) == [[c[-13:-11]] for c in CITED]
    assert _batches(4, 1000) == [["01", "02", "04", "07"], ["10", "20"]]


class NoWorks:
    """A reference resolver of a snapshot that holds no work."""

    name = "snapshot"

    def by_identifiers(self, keys: Sequence[Key]) -> dict[Key, Lookup]:
        return {k: Lookup("snapshot", f"{k[0]}:{k[1]}", "unmatched", ()) for k in keys}

    def by_title(self, title: str) -> Lookup:
        return Lookup("snapshot", f"title:{title}", "unmatched", ())


def test_structured_claims_are_audited_with_their_references_checked() -> None:
    """Claims (no handle positions in a text) beside a resolver: each answer still gets its
    references section, empty when it cites no ordinary reference."""
    claims = AnswerInput(
        (SentenceInput(1, "Zentravir was studied.", "sentence", (CitationInput.from_text(GOOD),)),)
    )
    (report,) = audit_many(
        [AuditInput("claims.json", claims)], make_corpus(), KEYRING, now=NOW, references=NoWorks()
    )
    assert [c.verdict for c in report.citations()] == ["ok"]


def test_a_reaudit_keeps_each_sentence_and_citation_as_published() -> None:
    text = (
        f'Quoted [{GOOD} "312 children"].\n\n'
        f"- Listed [{h('pmid:99000002/abstract.1')}]; broken [pmid:99000001-abstract].\n"
    )
    published = audit_answer(
        parse_answer(text), make_corpus(), KEYRING, source_label="answer.md", now=NOW
    )
    later = datetime(2026, 1, 1, tzinfo=UTC)
    again = reaudit(published, make_corpus(), KEYRING, now=later)
    assert (again.source, again.created_at) == ("answer.md", "2026-01-01T00:00:00Z")

    def shape(report: object) -> list[tuple[object, ...]]:
        return [
            (s.index, s.kind, s.text, [(c.raw, c.handle, c.quote, c.verdict) for c in s.citations])
            for s in report.sentences  # type: ignore[attr-defined]
        ]

    assert shape(again) == shape(published)
    assert {s.kind for s in again.sentences} >= {"sentence", "list_item"}
    assert any(c.quote for c in again.citations())
