"""The audit engine: parsed answers in, reports out, against one corpus and one keyring.

    audit_answer(parsed, corpus, keyring)        one answer → one Report
    audit_many(inputs, corpus, keyring)          many answers → a stream of Reports

Answers are taken in chunks (a few hundred answers, a few thousand citations): for each chunk
the engine verifies every distinct handle once, then asks the corpus for every record and every
cited path in one batch each (:meth:`~audit.corpus.Corpus.records`,
:meth:`~audit.corpus.Corpus.passage_versions`), then judges each citation with the pure rules
of :mod:`audit.verdicts`. Only one chunk is held at a time, so a directory of 10,000 answers
streams. The corpus connection is the caller's and is shared by the whole run.
"""

from __future__ import annotations

import itertools
from collections.abc import Generator, Iterable, Iterator, Mapping, Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import Protocol

from audit import CONTRACT_VERSION, __version__
from audit.corpus import Corpus, PathRef, StoredPassage, StoredRecord
from audit.errors import CitationSyntaxError, InputError
from audit.handles import Handle, parse_handle, verify
from audit.keys import Keyring
from audit.overall import fail_on_policy, metrics_of, overall
from audit.overall import sentence_status as status_of
from audit.paths import public_path
from audit.references.resolve import Resolver
from audit.report import (
    DEFAULT_FAIL_ON,
    CitationResult,
    FailOnItem,
    KeyInfo,
    PassageView,
    RecordView,
    ReferencesSection,
    Report,
    SentenceResult,
    SnapshotInfo,
    assemble,
    snapshot_info,
)
from audit.verdicts import Facts, Judgement, judge


class CitationLike(Protocol):
    """What the engine reads of a citation (:class:`audit.citations.Citation` has it)."""

    @property
    def raw(self) -> str: ...
    @property
    def handle_text(self) -> str: ...
    @property
    def handle(self) -> Handle | None: ...
    @property
    def quote(self) -> str | None: ...
    @property
    def error(self) -> str | None: ...


class SentenceLike(Protocol):
    """What the engine reads of a sentence (:class:`audit.citations.Sentence` has it)."""

    @property
    def index(self) -> int: ...
    @property
    def text(self) -> str: ...
    @property
    def kind(self) -> str: ...
    @property
    def citations(self) -> Sequence[CitationLike]: ...


class AnswerLike(Protocol):
    """A parsed answer (:class:`audit.citations.ParsedAnswer` has it)."""

    @property
    def sentences(self) -> Sequence[SentenceLike]: ...


@dataclass(frozen=True)
class CitationInput:
    """A citation built from a handle text and an optional quote (re-audits, tools, tests)."""

    raw: str
    handle_text: str
    handle: Handle | None
    quote: str | None = None
    error: str | None = None

    @classmethod
    def from_text(
        cls, handle_text: str, quote: str | None = None, *, raw: str | None = None
    ) -> CitationInput:
        """Parse ``handle_text``; a grammar error makes a malformed citation, not an exception."""
        if raw is None:
            raw = f"[{handle_text}]" if quote is None else f'[{handle_text} "{quote}"]'
        try:
            handle = parse_handle(handle_text)
        except CitationSyntaxError as error:
            return cls(raw, handle_text, None, quote, error.message)
        return cls(raw, handle_text, handle, quote, None)


@dataclass(frozen=True)
class SentenceInput:
    index: int
    text: str
    kind: str = "sentence"
    citations: tuple[CitationInput, ...] = ()


@dataclass(frozen=True)
class AnswerInput:
    sentences: tuple[SentenceInput, ...] = ()


CHUNK_ANSWERS = 5_000
CHUNK_CITATIONS = 50_000
"""Answers are judged in chunks of at most this many answers or citations: one batch of
look-ups per chunk. Each batch scans the passages table once (about half a second for a
million passages on a small machine), so big chunks keep throughput up; only one chunk of
parsed answers and look-ups is held at a time."""


@dataclass(frozen=True)
class AuditInput:
    """One answer to audit and the label its report carries (a file name, ``-``).

    ``text``: the answer as written, when there is one (not for claims JSON), where its
    ordinary references are read (:mod:`audit.references.answer`)."""

    label: str
    parsed: AnswerLike
    text: str | None = None


@dataclass
class _Lookup:
    """What the corpus said about every citation of one chunk of answers.

    Report views of passages and records are built once per chunk and shared (they are frozen).
    """

    verified: dict[str, bool] = field(default_factory=dict)
    records: dict[str, StoredRecord] = field(default_factory=dict)
    held: dict[PathRef, dict[str, StoredPassage]] = field(default_factory=dict)
    passage_views: dict[tuple[str, str, str], PassageView] = field(default_factory=dict)
    record_views: dict[str, RecordView] = field(default_factory=dict)

    def passage_view(self, passage: StoredPassage | None) -> PassageView | None:
        if passage is None:
            return None
        key = (passage.record_id, passage.version, passage.path)
        view = self.passage_views.get(key)
        if view is None:
            view = self.passage_views[key] = assemble(
                PassageView,
                record_id=passage.record_id,
                version=passage.version,
                path=passage.path,
                section=passage.section,
                text=passage.text,
            )
        return view

    def record_view(self, record: StoredRecord) -> RecordView:
        view = self.record_views.get(record.record_id)
        if view is None:
            view = self.record_views[record.record_id] = assemble(
                RecordView,
                record_id=record.record_id,
                source=record.source,
                current_version=record.current_version,
                title=record.title,
                status=record.status,
                doi=record.doi,
                pmid=record.pmid,
                pmcid=record.pmcid,
                year=record.year,
                journal=record.journal,
                withdrawn=record.withdrawn,
                retracted=record.retracted,
                expression_of_concern=record.expression_of_concern,
                preprint=record.preprint,
                licence=record.licence,
            )
        return view


def _fetch(chunk: Sequence[AuditInput], corpus: Corpus, keyring: Keyring) -> _Lookup:
    """Verify every distinct handle of the chunk once; look records and paths up in batches."""
    lookup = _Lookup()
    ids: set[str] = set()
    refs: set[PathRef] = set()
    for item in chunk:
        for sentence in item.parsed.sentences:
            for citation in sentence.citations:
                handle = citation.handle
                if handle is None:
                    continue
                text = handle.text
                ok = lookup.verified.get(text)
                if ok is None:
                    ok = lookup.verified[text] = verify(keyring, handle)
                if ok:
                    locator = handle.locator
                    ids.add(locator.record_id)
                    refs.add(PathRef(locator.record_id, locator.path))
    if ids:
        lookup.records = corpus.records(ids)
        wanted = {ref for ref in refs if ref.record_id in lookup.records}
        found = corpus.passage_versions(wanted) if wanted else {}
        for ref, passages in found.items():
            lookup.held[ref] = {p.version: p for p in passages}
    return lookup


def _facts(citation: CitationLike, lookup: _Lookup, statuses: Mapping[str, str]) -> Facts:
    handle = citation.handle
    if handle is None:
        return Facts(handle=None, error=citation.error, quote=citation.quote)
    locator = handle.locator
    return Facts(
        handle=handle,
        quote=citation.quote,
        verified=lookup.verified[handle.text],
        source_status=statuses,
        record=lookup.records.get(locator.record_id),
        held=lookup.held.get(PathRef(locator.record_id, locator.path), {}),
    )


def _citation_result(
    citation: CitationLike, facts: Facts, verdict: Judgement, lookup: _Lookup
) -> CitationResult:
    record = facts.record
    shows_record = record is not None and verdict.verdict not in ("malformed", "forged")
    closest = verdict.closest
    return assemble(
        CitationResult,
        raw=citation.raw,
        handle=citation.handle_text,
        record_id=citation.handle.locator.record_id if citation.handle else None,
        quote=citation.quote,
        verdict=verdict.verdict,
        detail=verdict.detail,
        flags=list(verdict.flags),
        checked_against=verdict.checked_against,
        closest_match=closest.text if closest else None,
        similarity=closest.similarity if closest else None,
        passage=lookup.passage_view(verdict.passage),
        current_passage=lookup.passage_view(verdict.current_passage),
        record=lookup.record_view(record) if shows_record and record else None,
        support=None,  # claim support is judged afterwards, on request (audit.support.run)
    )


def iso_utc(now: datetime | None = None) -> str:
    """``now`` (default: the current time) as ``YYYY-MM-DDTHH:MM:SSZ``."""
    moment = (now or datetime.now(UTC)).astimezone(UTC)
    return moment.strftime("%Y-%m-%dT%H:%M:%SZ")


@dataclass(frozen=True)
class _Context:
    snapshot: SnapshotInfo
    key: KeyInfo
    statuses: Mapping[str, str]
    fail_on: list[FailOnItem]
    created_at: str
    resolver: Resolver | None = None


def _handle_spans(parsed: AnswerLike) -> list[tuple[int, int]]:
    spans = []
    for sentence in parsed.sentences:
        for citation in sentence.citations:
            span = getattr(citation, "handle_span", None)
            if span is not None:
                spans.append(span)
    return spans


def _references(chunk: Sequence[AuditInput], context: _Context) -> list[ReferencesSection | None]:
    """The references section of each answer of a chunk (look-ups in one batch)."""
    if context.resolver is None:
        return [None] * len(chunk)
    from audit.references.answer import answer_references_of, sections_of

    answers = []
    for item in chunk:
        label = public_path(item.label)
        texts = (s.text for s in item.parsed.sentences)
        spans = _handle_spans(item.parsed)
        answers.append((answer_references_of(item.text, texts, spans, label), label))
    return sections_of(answers, context.resolver)


def _report(
    item: AuditInput,
    lookup: _Lookup,
    context: _Context,
    references: ReferencesSection | None = None,
) -> Report:
    sentences: list[SentenceResult] = []
    for sentence in item.parsed.sentences:
        results = []
        for citation in sentence.citations:
            facts = _facts(citation, lookup, context.statuses)
            results.append(_citation_result(citation, facts, judge(facts), lookup))
        sentences.append(
            assemble(
                SentenceResult,
                index=sentence.index,
                text=sentence.text,
                kind=sentence.kind,
                status=status_of([r.verdict for r in results]),
                citations=results,
            )
        )
    checks = references.checks() if references is not None else ()
    verdict, reasons = overall(sentences, context.fail_on, checks)
    return assemble(
        Report,
        contract_version=CONTRACT_VERSION,
        tool_version=__version__,
        created_at=context.created_at,
        source=public_path(item.label),  # never an absolute local path (audit.paths)
        verdict=verdict,
        verdict_reasons=reasons,
        fail_on=list(context.fail_on),
        support_checked=False,  # audit.support.run.with_support sets it when it judges
        snapshot=context.snapshot,
        key=context.key,
        metrics=metrics_of(sentences),
        sentences=sentences,
        references=references,
    )


def _chunks(
    inputs: Iterable[AuditInput], max_answers: int, max_citations: int
) -> Iterator[list[AuditInput]]:
    chunk: list[AuditInput] = []
    citations = 0
    for item in inputs:
        chunk.append(item)
        citations += sum(len(s.citations) for s in item.parsed.sentences)
        if len(chunk) >= max_answers or citations >= max_citations:
            yield chunk
            chunk, citations = [], 0
    if chunk:
        yield chunk


def audit_many(
    inputs: Iterable[AuditInput],
    corpus: Corpus,
    keyring: Keyring,
    *,
    fail_on: Iterable[FailOnItem] = DEFAULT_FAIL_ON,
    now: datetime | None = None,
    chunk_answers: int = CHUNK_ANSWERS,
    chunk_citations: int = CHUNK_CITATIONS,
    references: Resolver | None = None,
) -> Generator[Report, None, None]:
    """Audit answers lazily, one report per input, in input order.

    ``inputs`` is consumed a chunk at a time; reports are yielded as each chunk is judged, so
    neither all inputs nor all reports are ever held. ``now`` fixes ``created_at`` (for
    reproducible reports); ``fail_on`` adds to the default policy (malformed, forged).
    ``references``: the resolver of the same snapshot, to check each answer's ordinary
    references (:mod:`audit.references.answer`; only on the caller's thread); None: not
    checked, and no report has a references section.
    """
    identity = corpus.identity()
    statuses = dict(corpus.source_status())
    context = _Context(
        snapshot=snapshot_info(
            identity.name,
            public_path(identity.path),
            identity.sha256,
            statuses,
            snapshot_id=identity.snapshot_id,
            created_at=identity.created_at,
        ),
        key=KeyInfo(fingerprint=keyring.fingerprint, demo=keyring.demo),
        statuses=statuses,
        fail_on=fail_on_policy(fail_on),
        created_at=iso_utc(now),
        resolver=references,
    )
    chunks = _chunks(inputs, max(1, chunk_answers), max(1, chunk_citations))
    for chunk, lookup in _looked_up(chunks, corpus, keyring):
        sections = _references(chunk, context)
        for item, section in zip(chunk, sections, strict=True):
            yield _report(item, lookup, context, section)


def _looked_up(
    chunks: Iterator[list[AuditInput]], corpus: Corpus, keyring: Keyring
) -> Iterator[tuple[list[AuditInput], _Lookup]]:
    """Each chunk with its look-ups. From the second chunk on, the next chunk is read and
    looked up in one worker thread while the caller judges the current one (DuckDB runs its
    query without holding the GIL), so at most two chunks are held; once the worker runs, only
    it touches ``chunks`` and ``corpus``. A single chunk (one answer, a small directory) is
    looked up here: a worker thread per call cost more than the whole audit of one answer."""
    first, second = next(chunks, None), next(chunks, None)
    if first is None:
        return
    if second is None:
        yield first, _fetch(first, corpus, keyring)
        return
    chunks = itertools.chain((first, second), chunks)

    def step() -> tuple[list[AuditInput], _Lookup] | None:
        chunk = next(chunks, None)
        return None if chunk is None else (chunk, _fetch(chunk, corpus, keyring))

    with ThreadPoolExecutor(max_workers=1, thread_name_prefix="citeseal-lookup") as pool:
        pending = pool.submit(step)
        while (ready := pending.result()) is not None:
            pending = pool.submit(step)
            yield ready


def audit_answer(
    parsed: AnswerLike,
    corpus: Corpus,
    keyring: Keyring,
    *,
    fail_on: Iterable[FailOnItem] = DEFAULT_FAIL_ON,
    source_label: str = "-",
    now: datetime | None = None,
    text: str | None = None,
    references: Resolver | None = None,
) -> Report:
    """Audit one parsed answer (one batch of look-ups); ``text`` and ``references``: see
    :class:`AuditInput` and :func:`audit_many`."""
    item = AuditInput(source_label, parsed, text)
    return next(
        audit_many([item], corpus, keyring, fail_on=fail_on, now=now, references=references)
    )


def judge_citations(
    citations: Sequence[CitationLike], corpus: Corpus, keyring: Keyring
) -> list[CitationResult]:
    """Judge loose citations (no sentences, no overall verdict) in one batch of look-ups."""
    answer = AnswerInput(
        (SentenceInput(1, "", "sentence", tuple(_as_input(c) for c in citations)),)
    )
    item = AuditInput("-", answer)
    lookup = _fetch([item], corpus, keyring)
    statuses = dict(corpus.source_status())
    results = []
    for citation in citations:
        facts = _facts(citation, lookup, statuses)
        results.append(_citation_result(citation, facts, judge(facts), lookup))
    return results


def _as_input(citation: CitationLike) -> CitationInput:
    return CitationInput(
        citation.raw, citation.handle_text, citation.handle, citation.quote, citation.error
    )


def answer_of_report(report: Report) -> AnswerInput:
    """The citations of a published report, as an answer to audit again."""
    return AnswerInput(
        tuple(
            SentenceInput(
                index=s.index,
                text=s.text,
                kind=s.kind,
                citations=tuple(
                    CitationInput.from_text(c.handle, c.quote, raw=c.raw) for c in s.citations
                ),
            )
            for s in report.sentences
        )
    )


def reaudit(
    report: Report,
    corpus: Corpus,
    keyring: Keyring,
    *,
    now: datetime | None = None,
    references: Resolver | None = None,
) -> Report:
    """Audit a published report's citations again, e.g. against a newer snapshot.

    Sentences, citations and the fail-on policy are kept; every verdict, flag and metric is
    decided afresh. The report's ordinary references (its ``references`` section, as read)
    are checked again with ``references``, the new snapshot's resolver. A report with
    references and no resolver is an :class:`~audit.errors.InputError`: a re-audit that
    silently dropped them, or kept their old tiers, would pass what it never checked.
    """
    fresh = audit_answer(
        answer_of_report(report),
        corpus,
        keyring,
        fail_on=report.fail_on,
        source_label=report.source,
        now=now,
    )
    return with_references_rechecked(report, fresh, references)


def with_references_rechecked(
    published: Report, fresh: Report, references: Resolver | None
) -> Report:
    """``fresh`` (``published``'s citations audited again) with ``published``'s ordinary
    references checked again by ``references`` and the verdict decided again on both.

    Every re-audit goes through here (:func:`reaudit`, the site's batched re-audits): a
    report with references and no resolver is an :class:`~audit.errors.InputError`, never a
    re-audit that dropped them or kept their old tiers."""
    if published.references is None:
        return fresh
    if references is None:
        raise InputError(
            f"{published.source}: the report has ordinary references to check again and no "
            "reference resolver was given"
        )
    from audit.references.answer import recheck

    checked = fresh.model_copy(
        update={"references": recheck(published.references, published.source, references)}
    )
    verdict, reasons = overall(checked.sentences, published.fail_on, checked.reference_checks())
    return checked.model_copy(update={"verdict": verdict, "verdict_reasons": reasons})
