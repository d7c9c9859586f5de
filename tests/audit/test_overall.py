"""Sentence statuses, metrics and the overall verdict (audit/overall.py), through whole planted
answers on an in-memory corpus (DESIGN.md §3)."""

from __future__ import annotations

from dataclasses import dataclass

import pytest

from audit.corpus import InMemoryCorpus
from audit.engine import AnswerInput, CitationInput, SentenceInput, audit_answer
from audit.overall import overall
from audit.references.check import Flags, ReferenceCheck
from audit.report import FailOnItem, Report
from audit.support.model import SupportResult
from tests.audit.planted import KEYRING, h, make_corpus, stale_corpus

CORPUS = make_corpus()


@dataclass(frozen=True)
class S:
    """A sentence of a planted answer: its kind and its citations (handle, quote)."""

    text: str
    cites: tuple[tuple[str, str | None], ...] = ()
    kind: str = "sentence"


GOOD = h("pmid:99000001/abstract.3")
FORGED = GOOD[:-1] + ("0" if GOOD[-1] != "0" else "1")
MALFORMED = "pmid:99000001-abstract"
RETRACTED = h("pmid:99000002/abstract.1")
WITHDRAWN = h("pmid:99000001/abstract.9")
UNAVAILABLE = h("pmid:99000999/abstract.1")
OLD_TRIAL = h("nct:NCT99000001@2025-01-15/trial.brief_summary.1")
STALE = h("pmid:99000004/abstract.1")  # in STALE_CORPUS: its crossref enrichment failed
STALE_CORPUS = stale_corpus({"pmid:99000004": "planted-0"}, crossref="partial")


def _handles(sentences: tuple[S, ...]) -> set[str]:
    return {handle for s in sentences for handle, _ in s.cites}


def audit(
    *sentences: S, fail_on: tuple[FailOnItem, ...] = (), corpus: InMemoryCorpus = CORPUS
) -> Report:
    answer = AnswerInput(
        tuple(
            SentenceInput(
                index=i,
                text=s.text,
                kind=s.kind,
                citations=tuple(CitationInput.from_text(c, q) for c, q in s.cites),
            )
            for i, s in enumerate(sentences, start=1)
        )
    )
    return audit_answer(answer, corpus, KEYRING, fail_on=fail_on, source_label="planted.md")


def test_sentence_statuses() -> None:
    report = audit(
        S("Cited beside a forged one.", ((GOOD, None), (FORGED, None))),
        S("Only invalid.", ((FORGED, None), (WITHDRAWN, None))),
        S("No citation."),
    )
    assert [s.status for s in report.sentences] == ["cited", "invalid_only", "uncited"]


def test_a_heading_or_lead_in_without_citation_is_not_a_claim() -> None:
    report = audit(
        S("Results", kind="heading"),
        S("Safety:", kind="lead_in"),
        S("Cited.", ((GOOD, None),)),
        S("Cited heading", ((GOOD, None),), kind="heading"),
    )
    assert [s.status for s in report.sentences] == ["uncited", "uncited", "cited", "cited"]
    assert (report.metrics.sentences, report.metrics.cited_sentences) == (2, 2)
    assert (report.verdict, report.verdict_reasons) == ("pass", [])


def test_metrics() -> None:
    report = audit(
        S("One.", ((GOOD, "312 children were diagnosed"),)),
        S("Two.", ((GOOD, "313 children"),)),
        S("Three.", ((FORGED, "a quote on a forged handle"),)),
        S("Four.", ((MALFORMED, None),)),
        S("Five.", ((RETRACTED, None), (OLD_TRIAL, "20 mg daily"))),
        S("Six."),
    )
    m = report.metrics
    assert (m.fabricated, m.retracted_cited) == (2, 1)
    assert (m.sentences, m.cited_sentences) == (6, 2)
    assert (m.quotes, m.verbatim_quotes) == (4, 2)
    assert (m.citations, m.checkable_citations, m.valid_citations) == (6, 6, 3)
    assert m.citation_validity == 0.5
    assert m.by_verdict.model_dump() == {
        "malformed": 1,
        "forged": 1,
        "unavailable": 0,
        "withdrawn": 0,
        "quote_mismatch": 1,
        "ok": 3,
    }
    assert m.by_status.model_dump() == {"cited": 2, "uncited": 1, "invalid_only": 3}


@pytest.mark.parametrize(
    ("sources", "handle"),
    [
        (
            {"openfda": "failed"},
            "setid:5eed0001-0000-4000-8000-000000000999@4/label.boxed_warning.1",
        ),
        ({"clinicaltrials": "not_harvested"}, "nct:NCT99000999@2025-06-02/trial.conditions.1"),
        ({}, "pmid:99000999/abstract.1"),
    ],
    ids=["source-failed", "not-harvested", "never-seen"],
)
def test_validity_counts_only_checkable_citations_so_an_outage_does_not_lower_it(
    sources: dict[str, str], handle: str
) -> None:
    report = audit(
        S("One.", ((GOOD, None), (h(handle), None))),
        S("Two.", ((FORGED, None),)),
        corpus=make_corpus(**sources),
    )
    m = report.metrics
    assert (m.citations, m.checkable_citations, m.valid_citations) == (3, 2, 1)
    assert m.citation_validity == 0.5  # 1 ok of the 2 checked, not 1 of 3
    assert report.verdict == "fail"
    assert report.verdict_reasons[:2] == [
        "fail: 1 forged citation",
        "incomplete: 1 unavailable citation",
    ]


def test_validity_is_null_when_no_citation_could_be_checked() -> None:
    report = audit(S("One.", ((UNAVAILABLE, None),)))
    m = report.metrics
    assert (m.citations, m.checkable_citations, m.citation_validity) == (1, 0, None)
    assert report.verdict == "incomplete"


def test_no_citations_has_no_validity() -> None:
    report = audit(S("Nothing cited."))
    assert (report.metrics.citations, report.metrics.citation_validity) == (0, None)


@pytest.mark.parametrize(
    ("sentences", "verdict", "reasons"),
    [
        ((S("A.", ((GOOD, None),)),), "pass", []),
        (
            (S("A.", ((GOOD, None), (MALFORMED, None))),),
            "fail",
            ["fail: 1 malformed citation"],
        ),
        ((S("A.", ((GOOD, None), (FORGED, None))),), "fail", ["fail: 1 forged citation"]),
        (
            (S("A.", ((GOOD, None), (WITHDRAWN, None))),),
            "warn",
            ["warn: 1 withdrawn citation"],
        ),
        (
            (S("A.", ((GOOD, None), (UNAVAILABLE, None))),),
            "incomplete",
            ["incomplete: 1 unavailable citation"],
        ),
        (
            (S("A.", ((UNAVAILABLE, None),)), S("B.")),
            "incomplete",
            [
                "incomplete: 1 unavailable citation",
                "warn: 1 sentence with only invalid citations",
                "warn: 1 uncited sentence",
            ],
        ),
        (
            (S("A.", ((FORGED, None), (UNAVAILABLE, None))),),
            "fail",
            [
                "fail: 1 forged citation",
                "incomplete: 1 unavailable citation",
                "warn: 1 sentence with only invalid citations",
            ],
        ),
        (
            (S("A.", ((GOOD, None), (GOOD, "no such words"))),),
            "warn",
            ["warn: 1 quote_mismatch citation"],
        ),
        (
            (S("A.", ((GOOD, None),)), S("B.", ((WITHDRAWN, None),))),
            "warn",
            ["warn: 1 withdrawn citation", "warn: 1 sentence with only invalid citations"],
        ),
        (
            (S("A.", ((RETRACTED, None),)),),
            "warn",
            ["warn: 1 citation of a retracted record"],
        ),
        ((S("A.", ((GOOD, None),)), S("B.")), "warn", ["warn: 1 uncited sentence"]),
        (
            (S("A.", ((FORGED, None),)), S("B."), S("C.")),
            "fail",
            [
                "fail: 1 forged citation",
                "warn: 1 sentence with only invalid citations",
                "warn: 2 uncited sentences",
            ],
        ),
        ((S("A.", ((OLD_TRIAL, None),)),), "pass", []),
        (
            (S("A.", ((STALE, None),)),),
            "warn",
            ["warn: 1 citation of a record this snapshot did not refresh"],
        ),
    ],
    ids=[
        "pass",
        "fail-malformed",
        "fail-forged",
        "warn-withdrawn",
        "incomplete-unavailable",
        "incomplete-beats-warn",
        "fail-beats-incomplete",
        "warn-quote-mismatch",
        "warn-invalid-only",
        "warn-retracted",
        "warn-uncited",
        "fail-with-warnings",
        "version-changed-passes",
        "warn-not-refreshed",
    ],
)
def test_overall_rules(sentences: tuple[S, ...], verdict: str, reasons: list[str]) -> None:
    report = audit(*sentences, corpus=STALE_CORPUS if STALE in _handles(sentences) else CORPUS)
    assert (report.verdict, report.verdict_reasons) == (verdict, reasons)
    assert report.fail_on == ["malformed", "forged"]


@pytest.mark.parametrize(
    ("fail_on", "sentences", "reasons"),
    [
        (("uncited",), (S("A.", ((GOOD, None),)), S("B.")), ["fail: 1 uncited sentence"]),
        (
            ("retracted",),
            (S("A.", ((RETRACTED, None),)),),
            ["fail: 1 citation of a retracted record"],
        ),
        (
            ("quote_mismatch",),
            (S("A.", ((GOOD, "no such words"),)),),
            ["fail: 1 quote_mismatch citation", "warn: 1 sentence with only invalid citations"],
        ),
        (
            ("version_changed",),
            (S("A.", ((OLD_TRIAL, None),)),),
            ["fail: 1 citation of a version that is no longer current"],
        ),
        (
            ("invalid_only",),
            (S("A.", ((WITHDRAWN, None),)),),
            ["fail: 1 sentence with only invalid citations", "warn: 1 withdrawn citation"],
        ),
        (
            ("not_refreshed",),
            (S("A.", ((STALE, None),)),),
            ["fail: 1 citation of a record this snapshot did not refresh"],
        ),
        (
            ("incomplete",),
            (S("A.", ((GOOD, None), (UNAVAILABLE, None))),),
            ["fail: 1 unavailable citation"],
        ),
        (
            ("unavailable",),
            (S("A.", ((GOOD, None), (UNAVAILABLE, None))),),
            ["fail: 1 unavailable citation"],
        ),
    ],
    ids=[
        "uncited",
        "retracted",
        "quote-mismatch",
        "version-changed",
        "invalid-only",
        "stale",
        "incomplete",
        "unavailable",
    ],
)
def test_fail_on_adds_to_the_default_policy(
    fail_on: tuple[FailOnItem, ...], sentences: tuple[S, ...], reasons: list[str]
) -> None:
    corpus = STALE_CORPUS if STALE in _handles(sentences) else CORPUS
    report = audit(*sentences, fail_on=fail_on, corpus=corpus)
    assert (report.verdict, report.verdict_reasons) == ("fail", reasons)
    assert report.fail_on[:2] == ["malformed", "forged"] and fail_on[0] in report.fail_on
    assert audit(*sentences, corpus=corpus).verdict != "fail"


def test_report_identity_fields() -> None:
    report = audit(S("A.", ((GOOD, None),)))
    assert report.source == "planted.md"
    assert (report.key.demo, report.key.fingerprint) == (True, KEYRING.fingerprint)
    assert report.snapshot.name == "memory"
    assert "NOT SECRET" not in report.model_dump_json()


# ---------------------------------------------------------------------------------------------
# Counts above one, and metrics whose two readings differ (killing audit/overall.py's mutants)

EOC = h("pmid:99000004/abstract.1")


def test_metrics_count_verbatim_quotes_and_retracted_citations_apart() -> None:
    report = audit(
        S("One.", ((GOOD, "312 children were diagnosed"),)),
        S("Two.", ((GOOD, "313 children"),)),
        S("Three.", ((GOOD, "314 children"),)),
        S("Four.", ((RETRACTED, None), (OLD_TRIAL, None), (EOC, None))),
    )
    m = report.metrics
    assert (m.quotes, m.verbatim_quotes) == (3, 1)
    assert m.retracted_cited == 1  # the version_changed and EoC citations are not retracted
    assert m.citation_validity == 0.6667  # 4 ok of 6: four decimals


def test_every_occurrence_is_counted_in_the_reasons() -> None:
    report = audit(
        S("A.", ((FORGED, None), (FORGED, None), (WITHDRAWN, None))),
        S("B.", ((EOC, None), (EOC, None), (OLD_TRIAL, None), (OLD_TRIAL, None))),
        fail_on=("expression_of_concern", "contradicted"),
    )
    assert report.verdict_reasons[:4] == [
        "fail: 2 forged citations",
        "fail: 2 citations of records with an expression of concern",
        "fail: 4 ok citations not judged for claim support",
        "warn: 1 withdrawn citation",
    ]


def test_contradicted_citations_and_flagged_references_are_counted() -> None:
    report = audit(S("A.", ((GOOD, None), (GOOD, None))))
    against = SupportResult(
        label="contradicted", reason="the passage says otherwise", judge="t", judge_version="1"
    )
    (sentence,) = report.sentences
    judged = sentence.model_copy(
        update={
            "citations": tuple(
                c.model_copy(update={"support": against}) for c in sentence.citations
            )
        }
    )
    retracted = ReferenceCheck.model_construct(tier="verified", flags=Flags(retracted=True))
    verdict, reasons = overall([judged], references=[retracted, retracted])
    assert (verdict, reasons) == (
        "warn",
        [
            "warn: 2 references to retracted records",
            "warn: 2 citations whose passages contradict their sentences",
        ],
    )
