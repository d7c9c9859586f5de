"""Claim support on audited citations: gather the :class:`Evidence`, ask the judge, record it.

Only an ``ok`` citation is judged, and only against the passage as issued (the version the
handle pins or holds: ``CitationResult.passage``) with the PubTator3 annotations the snapshot
holds for that passage (:meth:`SupportCorpus.annotations`, one batch per report). A citation
that is not ok (malformed, forged, unavailable, withdrawn, quote_mismatch) is never judged: its
verdict already says why there is nothing to judge.

    with_support(report, corpus, judge)          a report with ``support`` on every ok citation
    check_support(claim, handles, corpus, …)     one claim against handles (``citeseal support``,
                                                 the MCP tool ``check_support``)

Adding support decides the overall verdict again (:func:`audit.overall.overall`), so
``--fail-on contradicted`` fails an answer; an ``abstain`` never fails it on its own.
"""

from __future__ import annotations

from collections.abc import Collection, Iterable, Iterator, Sequence
from typing import Protocol

from pydantic import BaseModel, ConfigDict, Field

from audit.corpus import Corpus, PassageKey, StoredAnnotation
from audit.engine import CitationInput, judge_citations
from audit.errors import InputError, LimitExceeded
from audit.keys import Keyring
from audit.overall import overall
from audit.report import CitationResult, PassageView, Report, SentenceResult, Verdict
from audit.support.model import Entity, Evidence, Judge, SupportResult

MAX_CLAIM_CHARS = 4_000
"""A claim is one sentence; longer text is refused unread."""
MAX_SUPPORT_HANDLES = 20
"""At most this many handles per claim (each is one judgment, an LLM request for LLM judges)."""
MAX_SUPPORT_HANDLE_CHARS = 400


class SupportCorpus(Corpus, Protocol):
    """A corpus that also holds PubTator3 annotations (both corpora of :mod:`audit`)."""

    def annotations(
        self, keys: Collection[PassageKey]
    ) -> dict[PassageKey, tuple[StoredAnnotation, ...]]: ...


def _key(passage: PassageView) -> PassageKey:
    return PassageKey(passage.record_id, passage.version, passage.path)


def evidence_of(passage: PassageView, annotations: Iterable[StoredAnnotation] = ()) -> Evidence:
    """The passage as a judge reads it; annotations whose span is not inside the text (a
    damaged snapshot) are left out, so every entity's ``start:end`` indexes the text."""
    size = len(passage.text)
    return Evidence(
        text=passage.text,
        record_id=passage.record_id,
        path=passage.path,
        entities=tuple(
            Entity(a.start, a.end, a.type, a.identifier, a.text)
            for a in annotations
            if 0 <= a.start <= a.end <= size
        ),
    )


def _judged(
    claim: str,
    citation: CitationResult,
    found: dict[PassageKey, tuple[StoredAnnotation, ...]],
    judge: Judge,
) -> SupportResult | None:
    """The support of one citation (None unless it is ok); an ok citation without a passage
    as issued cannot be judged: ``abstain``, saying so."""
    if citation.verdict != "ok":
        return None
    passage = citation.passage
    if passage is None:
        return SupportResult(
            label="abstain",
            reason="The snapshot holds no passage as issued for this citation.",
            judge=judge.name,
            judge_version=judge.version,
        )
    return judge.judge(claim, evidence_of(passage, found.get(_key(passage), ())))


def _annotations_for(
    citations: Iterable[CitationResult], corpus: SupportCorpus
) -> dict[PassageKey, tuple[StoredAnnotation, ...]]:
    keys = {_key(c.passage) for c in citations if c.verdict == "ok" and c.passage is not None}
    return corpus.annotations(keys) if keys else {}


def with_support(report: Report, corpus: SupportCorpus, judge: Judge) -> Report:
    """``report`` with the judge's ``support`` on every ok citation (the claim is the citing
    sentence), and its overall verdict decided again under its own fail-on policy."""
    found = _annotations_for(report.citations(), corpus)
    sentences: list[SentenceResult] = []
    for sentence in report.sentences:
        citations = [
            c.model_copy(update={"support": _judged(sentence.text, c, found, judge)})
            if c.verdict == "ok"
            else c
            for c in sentence.citations
        ]
        sentences.append(sentence.model_copy(update={"citations": citations}))
    verdict, reasons = overall(sentences, report.fail_on, report.reference_checks())
    return report.model_copy(
        update={
            "sentences": sentences,
            "verdict": verdict,
            "verdict_reasons": reasons,
            "support_checked": True,
        }
    )


def support_many(
    reports: Iterable[Report], corpus: SupportCorpus, judge: Judge
) -> Iterator[Report]:
    """:func:`with_support` on each report, lazily."""
    for report in reports:
        yield with_support(report, corpus, judge)


# -- one claim against handles ------------------------------------------------------------------


class _Model(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)


class HandleSupport(_Model):
    """One handle: the audit's verdict on it and, when it is ok, the judge's support."""

    handle: str
    record_id: str | None = None
    verdict: Verdict = Field(description="The audit engine's verdict on the handle.")
    detail: str | None = Field(default=None, description="What the verdict rule saw.")
    passage: PassageView | None = Field(
        default=None, description="The passage as issued, which the judge read."
    )
    support: SupportResult | None = Field(
        default=None, description="The judge's answer; None when the handle is not ok."
    )


class SupportCheck(_Model):
    """One claim judged against the passages of some handles."""

    claim: str
    judge: str
    judge_version: str
    results: list[HandleSupport]
    contradicted: int = Field(description="Handles whose passage contradicts the claim.")
    not_judged: int = Field(
        description="Handles that are not ok (malformed, forged, unavailable, …): not judged."
    )

    @property
    def failed(self) -> bool:
        """A contradiction, or a handle that could not be judged (an abstention is neither)."""
        return bool(self.contradicted or self.not_judged)


def check_claim(claim: str, handles: Sequence[str]) -> tuple[str, list[str]]:
    """The claim and handles as given, checked against the limits (an InputError says which)."""
    text = claim.strip()
    if len(text) > MAX_CLAIM_CHARS:
        raise LimitExceeded(
            f"the claim is {len(text):,} characters long (limit {MAX_CLAIM_CHARS:,})"
        )
    if not text:
        raise InputError("the claim is empty; give the sentence to check")
    if not handles:
        raise InputError("no handle given; give at least one")
    if len(handles) > MAX_SUPPORT_HANDLES:
        raise LimitExceeded(f"{len(handles):,} handles given (limit {MAX_SUPPORT_HANDLES})")
    for handle in handles:
        if len(handle) > MAX_SUPPORT_HANDLE_CHARS:
            raise LimitExceeded(
                f"a handle is {len(handle):,} characters long (limit {MAX_SUPPORT_HANDLE_CHARS})"
            )
    return text, [h.strip() for h in handles]


def check_support(
    claim: str, handles: Sequence[str], corpus: SupportCorpus, keyring: Keyring, judge: Judge
) -> SupportCheck:
    """Audit each handle through the engine (one batch), then judge the claim against the
    passage of each ok one. A forged, unavailable, … handle is reported as such, never judged."""
    text, wanted = check_claim(claim, handles)
    results = judge_citations([CitationInput.from_text(h) for h in wanted], corpus, keyring)
    found = _annotations_for(results, corpus)
    rows = [
        HandleSupport(
            handle=r.handle,
            record_id=r.record_id,
            verdict=r.verdict,
            detail=r.detail,
            passage=r.passage if r.verdict == "ok" else None,
            support=_judged(text, r, found, judge),
        )
        for r in results
    ]
    return SupportCheck(
        claim=text,
        judge=judge.name,
        judge_version=judge.version,
        results=rows,
        contradicted=sum(r.support is not None and r.support.label == "contradicted" for r in rows),
        not_judged=sum(r.verdict != "ok" for r in rows),
    )
