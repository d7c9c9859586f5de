"""Claim support on audited citations: the evidence each judge gets (the passage as issued and
its annotations, in memory and from a snapshot file), only ok citations judged, the overall
verdict decided again, ``--fail-on contradicted`` failing closed, and ``check_support``."""

from __future__ import annotations

from datetime import UTC, datetime
from pathlib import Path

import pytest

from audit.citations import parse_answer
from audit.corpus import InMemoryCorpus, PassageKey, StoredAnnotation
from audit.duckdb_corpus import DuckDBCorpus
from audit.engine import audit_answer
from audit.errors import InputError, LimitExceeded
from audit.report import PassageView, Report
from audit.support.model import Entity, SupportResult
from audit.support.run import (
    MAX_CLAIM_CHARS,
    MAX_SUPPORT_HANDLE_CHARS,
    MAX_SUPPORT_HANDLES,
    check_claim,
    check_support,
    evidence_of,
    with_support,
)
from tests.audit.planted import CONCLUSIONS, KEYRING, OTHER, h, make_corpus, write_snapshot
from tests.audit.support.fakes import FakeJudge

NOW = datetime(2025, 6, 2, tzinfo=UTC)
CONCLUSION = "pmid:99000001/abstract.4"
KEY4 = PassageKey("pmid:99000001", "1", "abstract.4")
ZENTRAVIR = StoredAnnotation(0, 9, "Zentravir", "Chemical", "MESH:D999999")
BROKEN = StoredAnnotation(60, 999, "out of range", "Disease", "MESH:D000000")


def annotated() -> InMemoryCorpus:
    corpus = make_corpus()
    corpus.add_annotations(KEY4, [ZENTRAVIR, BROKEN])
    return corpus


def audited(answer: str, corpus: InMemoryCorpus, **kwargs: object) -> Report:
    return audit_answer(parse_answer(answer), corpus, KEYRING, now=NOW, **kwargs)  # type: ignore[arg-type]


PLANTED = f"Zentravir raises the risk of Farrow syndrome [{h(CONCLUSION)}]."


def test_the_planted_contradiction_is_recorded_with_judge_and_span() -> None:
    judge = FakeJudge()
    report = with_support(audited(PLANTED, annotated()), annotated(), judge)
    (citation,) = report.citations()
    support = citation.support
    assert support is not None
    assert (support.label, support.judge, support.judge_version) == ("contradicted", "fake", "0")
    assert support.evidence is not None
    assert CONCLUSIONS[support.evidence.start : support.evidence.end] == "does not increase"
    claim, evidence = judge.calls[0]
    assert claim == report.sentences[0].text
    assert (evidence.text, evidence.record_id, evidence.path) == (
        CONCLUSIONS,
        "pmid:99000001",
        "abstract.4",
    )
    # the span outside the passage text is left out, the other arrives as an Entity
    assert evidence.entities == (Entity(0, 9, "Chemical", "MESH:D999999", "Zentravir"),)


def test_a_report_without_support_has_no_support_key() -> None:
    report = audited(PLANTED, make_corpus())
    assert '"support"' not in report.model_dump_json()
    assert all("support" not in c.model_fields_set for c in report.citations())


def test_only_ok_citations_are_judged() -> None:
    forged = h(CONCLUSION, OTHER)
    answer = (
        f"Zentravir raises the risk [{forged}]. Zentravir exposure was studied [{h(CONCLUSION)}]."
    )
    judge = FakeJudge()
    report = with_support(audited(answer, make_corpus()), make_corpus(), judge)
    first, second = report.citations()
    assert (first.verdict, first.support) == ("forged", None)
    assert "support" not in first.model_fields_set  # left as audited: no support key, not null
    assert second.support is not None and second.support.label == "supported"
    assert len(judge.calls) == 1


def test_an_ok_citation_without_its_passage_as_issued_abstains_unjudged() -> None:
    report = audited(PLANTED, make_corpus())
    bare = report.model_copy(
        update={
            "sentences": [
                s.model_copy(
                    update={
                        "citations": [c.model_copy(update={"passage": None}) for c in s.citations]
                    }
                )
                for s in report.sentences
            ]
        }
    )
    judge = FakeJudge()
    (citation,) = with_support(bare, annotated(), judge).citations()
    assert citation.support == SupportResult(
        label="abstain",
        reason="The snapshot holds no passage as issued for this citation.",
        judge="fake",
        judge_version="0",
    )
    assert judge.calls == []


def test_fail_on_contradicted_fails_and_otherwise_it_warns() -> None:
    corpus = make_corpus()
    failing = with_support(audited(PLANTED, corpus, fail_on=["contradicted"]), corpus, FakeJudge())
    assert (failing.verdict, failing.verdict_reasons) == (
        "fail",
        ["fail: 1 citation whose passage contradicts its sentence"],
    )
    warning = with_support(audited(PLANTED, corpus), corpus, FakeJudge())
    assert (warning.verdict, warning.verdict_reasons) == (
        "warn",
        ["warn: 1 citation whose passage contradicts its sentence"],
    )


def test_abstain_never_fails_on_its_own() -> None:
    corpus = make_corpus()
    answer = f"I am unsure about Farrow syndrome [{h(CONCLUSION)}]."
    report = with_support(audited(answer, corpus, fail_on=["contradicted"]), corpus, FakeJudge())
    assert report.citations()[0].support is not None
    assert report.citations()[0].support.label == "abstain"  # type: ignore[union-attr]
    assert (report.verdict, report.verdict_reasons) == ("pass", [])


def test_fail_on_contradicted_without_support_fails_closed() -> None:
    report = audited(PLANTED, make_corpus(), fail_on=["contradicted"])
    assert (report.verdict, report.verdict_reasons) == (
        "fail",
        ["fail: 1 ok citation not judged for claim support"],
    )


def test_annotations_are_read_from_a_snapshot_file(tmp_path: Path) -> None:
    path = write_snapshot(annotated(), tmp_path / "s.duckdb")
    with DuckDBCorpus(path) as corpus:
        found = corpus.annotations([KEY4, PassageKey("pmid:99000001", "1", "abstract.3")])
        assert found == annotated().annotations([KEY4])
        assert found == {KEY4: (ZENTRAVIR, BROKEN)}
        judge = FakeJudge()
        check = check_support(
            "Zentravir raises the risk of Farrow syndrome.", [h(CONCLUSION)], corpus, KEYRING, judge
        )
    assert check.results[0].support is not None
    assert check.results[0].support.reason == "The fake saw 1 entities."


def test_check_support_reports_a_forged_or_unavailable_handle_unjudged() -> None:
    judge = FakeJudge()
    handles = [h(CONCLUSION), h(CONCLUSION, OTHER), h("pmid:99000999/abstract.1"), "pmid:1-x"]
    check = check_support(PLANTED, handles, make_corpus(), KEYRING, judge)
    assert [r.verdict for r in check.results] == ["ok", "forged", "unavailable", "malformed"]
    assert [r.support is None for r in check.results] == [False, True, True, True]
    assert (check.contradicted, check.not_judged, check.failed) == (1, 3, True)
    assert len(judge.calls) == 1
    assert (check.judge, check.judge_version) == ("fake", "0")
    ok, forged = check.results[0], check.results[1]
    assert (ok.record_id, ok.passage) == (
        "pmid:99000001",
        PassageView(
            record_id="pmid:99000001",
            version="1",
            path="abstract.4",
            section="abstract",
            text=CONCLUSIONS,
        ),
    )
    assert (forged.record_id, forged.passage) == ("pmid:99000001", None)


def test_a_supported_claim_does_not_fail() -> None:
    check = check_support(
        "Zentravir exposure was studied.", [h(CONCLUSION)], make_corpus(), KEYRING, FakeJudge()
    )
    assert check.results[0].support is not None
    assert (check.results[0].support.label, check.failed) == ("supported", False)


@pytest.mark.parametrize(
    ("claim", "handles", "error", "message"),
    [
        ("  ", ["x"], InputError, "the claim is empty; give the sentence to check"),
        ("A claim.", [], InputError, "no handle given; give at least one"),
        (
            "x" * (MAX_CLAIM_CHARS + 1),
            ["x"],
            LimitExceeded,
            f"the claim is {MAX_CLAIM_CHARS + 1:,} characters long (limit {MAX_CLAIM_CHARS:,})",
        ),
        (
            "A claim.",
            ["x"] * (MAX_SUPPORT_HANDLES + 1),
            LimitExceeded,
            f"{MAX_SUPPORT_HANDLES + 1} handles given (limit {MAX_SUPPORT_HANDLES})",
        ),
        ("A claim.", ["x" * 401], LimitExceeded, "a handle is 401 characters long (limit 400)"),
    ],
    ids=["empty-claim", "no-handle", "long-claim", "many-handles", "long-handle"],
)
def test_bad_claims_and_handles_are_one_exact_error(
    claim: str, handles: list[str], error: type[Exception], message: str
) -> None:
    with pytest.raises(error) as caught:
        check_support(claim, handles, make_corpus(), KEYRING, FakeJudge())
    assert str(caught.value) == message


@pytest.mark.parametrize(
    ("start", "end", "kept"),
    [(0, 3, True), (1, 2, True), (3, 3, True), (-1, 2, False), (2, 4, False), (2, 1, False)],
)
def test_evidence_of_keeps_only_entities_inside_the_text(start: int, end: int, kept: bool) -> None:
    passage = PassageView(record_id="r", version="1", path="p", text="abc")
    evidence = evidence_of(passage, [StoredAnnotation(start, end, "b", "T", "I")])
    assert evidence.entities == ((Entity(start, end, "T", "I", "b"),) if kept else ())


def test_a_claim_and_handles_at_the_limits_are_accepted() -> None:
    claim, handle = "x" * MAX_CLAIM_CHARS, "h" * MAX_SUPPORT_HANDLE_CHARS
    assert check_claim(f" {claim} ", [handle] * MAX_SUPPORT_HANDLES) == (
        claim,
        [handle] * MAX_SUPPORT_HANDLES,
    )
