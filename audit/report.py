"""The audit report: pydantic models, and the JSON Schema published from them.

A report is a value: the engine (:mod:`audit.engine`) builds it, renderers
(:mod:`audit.render_text`, the site's HTML) read it, ``--format json`` prints it. The keys below
are a contract (``contract_version``); add keys freely, never rename or remove one without
raising the contract version.

    Report
    ├── contract_version, tool_version, created_at, source
    ├── verdict (pass | warn | incomplete | fail), verdict_reasons, fail_on, support_checked
    ├── snapshot {name, path, sha256, snapshot_id, created_at, partial, incomplete_sources}
    ├── key {fingerprint, demo}                      never the key itself
    ├── metrics {fabricated, retracted_cited, sentences, cited_sentences, quotes,
    │            verbatim_quotes, citations, checkable_citations, valid_citations,
    │            citation_validity,
    │            by_verdict {malformed, forged, …, ok}, by_status {cited, uncited, invalid_only}}
    ├── sentences [{index, text, kind, status,
    │               citations [{raw, handle, record_id, quote, verdict, detail,
    │                           flags [{name, detail}], checked_against, closest_match,
    │                           similarity, passage, current_passage, record,
    │                           support {label, reason, evidence {start, end, text},
    │                                    judge, judge_version}}]}]
    └── references {counts {verified, mismatch, hallucinated, needs_review, unresolved},
                    references [{reference {kind, label, identifiers, title, authors, year,
                                            venue, raw, span},
                                 check {label, kind, span, location, identifiers, title,
                                        tier, reason, record, diffs, flags, trace}}]}

``references`` (contract 0.3.0) is there only when the answer holds ordinary references —
DOIs, PMIDs, PMCIDs, arXiv ids, NCT numbers, ISBNs outside its handles, and reference-list
entries that are not handles (:mod:`audit.references.answer`) — checked against the same
snapshot as ``citeseal check`` checks a document; the key is left out otherwise, so a
handle-only answer's report is as before. Each item keeps the reference as read (what a
re-audit checks again) and its check; docs/audit.md says how the tiers feed the verdict.

``support`` is there only when the audit ran with claim support (``--support``): the key is
left out, not null, otherwise. ``support_checked`` says which: false (the default) means no
citation of the report was judged for claim support, so an ``ok`` citation there means "the
handle, passage and quote hold", never "the passage supports the sentence" (the text, Markdown
and HTML reports say ``support: not_checked`` under each such citation).
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Mapping
from functools import cache
from typing import Any, Literal, TypeVar, get_args

from pydantic import BaseModel, ConfigDict, Field

from audit import CONTRACT_VERSION
from audit.errors import InputError
from audit.references.check import ReferenceCheck
from audit.references.model import Reference
from audit.support.model import SupportResult

Verdict = Literal["malformed", "forged", "unavailable", "withdrawn", "quote_mismatch", "ok"]
"""Per-citation verdict, in ladder order: the first that applies wins."""
VERDICTS: tuple[Verdict, ...] = get_args(Verdict)

FlagName = Literal[
    "retracted", "expression_of_concern", "preprint", "version_changed", "not_refreshed"
]
"""Flags an ``ok`` citation can carry."""
FLAG_NAMES: tuple[FlagName, ...] = get_args(FlagName)

SentenceStatus = Literal["cited", "uncited", "invalid_only"]
SENTENCE_STATUSES: tuple[SentenceStatus, ...] = get_args(SentenceStatus)

SentenceKind = Literal["sentence", "heading", "list_item", "lead_in", "reference_entry"]
"""What a sentence is in the answer's layout; ``reference_entry`` is a block of a reference
section (``## References`` and its list): like a heading, a claim only when it cites."""

Overall = Literal["pass", "warn", "incomplete", "fail"]
"""The answer's verdict, mildest first: ``incomplete`` (between warn and fail) says the snapshot
could not check some citation (an ``unavailable`` one), which no uncited sentence can mimic."""
OVERALLS: tuple[Overall, ...] = get_args(Overall)

CheckedAgainst = Literal["issued", "current"]
"""Which text a quote was found in: the version the handle was issued from, or the current one."""

FailOnItem = Literal[
    "malformed",
    "forged",
    "unavailable",
    "withdrawn",
    "quote_mismatch",
    "uncited",
    "invalid_only",
    "retracted",
    "expression_of_concern",
    "preprint",
    "version_changed",
    "not_refreshed",
    "contradicted",
    "hallucinated",
    "mismatch",
    "unresolved",
    "incomplete",
]
"""What ``--fail-on`` accepts: any non-ok verdict, a sentence status, a flag (of a citation or
of an ordinary reference), a claim-support label (``contradicted``: an ok citation whose
passage the support judge found contradicting the sentence; only with claim support, see
:func:`audit.overall.overall`), a reference tier (``hallucinated`` always fails; ``mismatch``,
``unresolved``; ``needs_review`` never fails, so it is not an item), or ``incomplete``
(whatever makes the answer incomplete: an ``unavailable`` citation, an ``unresolved``
reference)."""
FAIL_ON_ITEMS: tuple[FailOnItem, ...] = get_args(FailOnItem)


def fail_on_items(values: Iterable[str], *, option: str = "fail_on") -> list[FailOnItem]:
    """``values`` checked against :data:`FAIL_ON_ITEMS`; an unknown one is an InputError
    naming ``option`` (``--fail-on`` on the command line, ``fail_on`` over MCP)."""
    items: list[FailOnItem] = []
    for value in values:
        if value not in FAIL_ON_ITEMS:
            raise InputError(
                f"unknown {option} value {value!r} (expected one of {', '.join(FAIL_ON_ITEMS)})"
            )
        items.extend(item for item in FAIL_ON_ITEMS if item == value)
    return items


DEFAULT_FAIL_ON: tuple[FailOnItem, ...] = ("malformed", "forged")


class _Model(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)


_M = TypeVar("_M", bound=_Model)
_set = object.__setattr__


@cache
def _omitted_when_none(cls: type[BaseModel]) -> tuple[str, ...]:
    """The fields of ``cls`` its dump leaves out when None (``exclude_if``: ``support``)."""
    return tuple(name for name, info in cls.model_fields.items() if info.exclude_if is not None)


def assemble(cls: type[_M], /, **values: Any) -> _M:
    """A report model from values the audit engine built itself, without validating them.

    For the engine's hot path only (validation costs ~10 µs per citation, this ~1 µs): the
    caller passes EVERY field, in declaration order, with values of the declared types. The
    result is the same object ``cls(**values)`` makes (same ``__dict__``, same fields set),
    which ``tests/audit/test_engine_assemble.py`` checks on real reports.
    """
    model = cls.__new__(cls)
    _set(model, "__dict__", values)
    fields = set(values)
    for name in _omitted_when_none(cls):  # left out of the dump when None: not "set" then
        if values.get(name) is None:
            fields.discard(name)
    _set(model, "__pydantic_fields_set__", fields)
    _set(model, "__pydantic_extra__", None)
    _set(model, "__pydantic_private__", None)
    return model


class Flag(_Model):
    """A flag on an ``ok`` citation, with what it is about (the notice, the current version)."""

    name: FlagName
    detail: str | None = None


class PassageView(_Model):
    """One passage of one record version, as stored in the snapshot."""

    record_id: str
    version: str
    path: str
    section: str | None = None
    text: str


class RecordView(_Model):
    """What the snapshot says about the cited record (its current version)."""

    record_id: str
    source: str
    current_version: str
    title: str | None = None
    status: str | None = None
    doi: str | None = None
    pmid: str | None = None
    pmcid: str | None = None
    year: int | None = None
    journal: str | None = None
    withdrawn: bool = False
    retracted: bool | None = None
    expression_of_concern: bool | None = None
    preprint: bool | None = None
    licence: str = Field(
        default="unknown",
        description="The current version's licence (audit.licences: CC-BY-4.0, public-domain, "
        "other:<url>, unknown); what a published page may show of its passages follows it.",
    )


class CitationResult(_Model):
    """The verdict on one citation and everything it was decided on."""

    raw: str = Field(description="The citation as written in the answer.")
    handle: str = Field(description="The handle part as written (may be malformed).")
    record_id: str | None = Field(
        default=None, description="The cited record, when the handle parses."
    )
    quote: str | None = None
    verdict: Verdict
    detail: str | None = Field(
        default=None, description="What the deciding rule saw, in one line (None for a plain ok)."
    )
    flags: list[Flag] = Field(default_factory=list)
    checked_against: CheckedAgainst | None = Field(
        default=None,
        description="Where the quote was found: the text as issued or the text as it is now.",
    )
    closest_match: str | None = Field(
        default=None, description="For a quote_mismatch: the closest span of the passage."
    )
    similarity: float | None = Field(
        default=None, description="Similarity (0..1) of closest_match; a diagnostic only."
    )
    passage: PassageView | None = Field(
        default=None, description="The passage as issued (the version the handle pins or holds)."
    )
    current_passage: PassageView | None = Field(
        default=None, description="The same path in the current version, when that differs."
    )
    record: RecordView | None = None
    support: SupportResult | None = Field(
        default=None,
        exclude_if=lambda value: value is None,
        description="Claim support (audits with --support, ok citations only): does the passage "
        "as issued support the sentence? Absent when the audit did not judge it.",
    )


NOT_CHECKED = "not_checked"
"""What every format says of an ``ok`` citation whose claim support was not judged."""


def support_not_checked(citation: CitationResult) -> bool:
    """True for an ``ok`` citation without a support result: its handle, passage and quote
    hold, but nobody judged whether the passage supports the sentence (every renderer says
    ``support: not_checked`` under it, so ``ok`` is never read as "supports the claim")."""
    return citation.verdict == "ok" and citation.support is None


class SentenceResult(_Model):
    index: int = Field(description="1-based position in the answer.")
    text: str
    kind: SentenceKind = "sentence"
    status: SentenceStatus
    citations: list[CitationResult] = Field(default_factory=list)


class ByVerdict(_Model):
    malformed: int = 0
    forged: int = 0
    unavailable: int = 0
    withdrawn: int = 0
    quote_mismatch: int = 0
    ok: int = 0


class ByStatus(_Model):
    cited: int = 0
    uncited: int = 0
    invalid_only: int = 0


class Metrics(_Model):
    fabricated: int = Field(description="malformed + forged citations.")
    retracted_cited: int = Field(description="ok citations of retracted records.")
    sentences: int
    cited_sentences: int
    quotes: int = Field(description="Citations that carry a quote.")
    verbatim_quotes: int = Field(description="Quotes found verbatim (after folding).")
    citations: int
    checkable_citations: int | None = Field(
        default=None,
        description="Citations the snapshot could check: all but the unavailable ones (absent "
        "from reports made before contract 0.2.0).",
    )
    valid_citations: int = Field(description="ok citations.")
    citation_validity: float | None = Field(
        description="valid_citations / checkable_citations (an outage or an unharvested source "
        "does not lower it), None when no citation could be checked."
    )
    by_verdict: ByVerdict
    by_status: ByStatus


class SnapshotInfo(_Model):
    name: str
    path: str
    sha256: str
    snapshot_id: str | None = None
    created_at: str | None = None
    partial: bool = Field(
        default=False,
        description="True when requests of the snapshot's harvest failed: the records they "
        "concerned are as an earlier snapshot of the lineage had them, or unavailable.",
    )
    incomplete_sources: dict[str, str] = Field(
        default_factory=dict,
        description="The sources whose harvest was 'partial' or 'failed' in the snapshot.",
    )


INCOMPLETE_STATUSES = ("partial", "failed")
"""Harvest statuses of a source some of whose requests failed."""


def incomplete_sources(statuses: Mapping[str, str]) -> dict[str, str]:
    """The sources whose harvest status is incomplete (:data:`INCOMPLETE_STATUSES`), by name.

    The one definition of a partial harvest by its statuses: a snapshot with any such source
    is partial (the audit, ``snapshot verify`` and the site all ask this function)."""
    return {s: st for s, st in sorted(statuses.items()) if st in INCOMPLETE_STATUSES}


def is_partial(statuses: Mapping[str, str]) -> bool:
    """True when some source's harvest is incomplete (:func:`incomplete_sources`)."""
    return any(st in INCOMPLETE_STATUSES for st in statuses.values())


def snapshot_info(
    name: str,
    path: str,
    sha256: str,
    statuses: Mapping[str, str],
    *,
    snapshot_id: str | None = None,
    created_at: str | None = None,
) -> SnapshotInfo:
    """The snapshot part of a report, ``partial`` decided from the sources' harvest statuses."""
    incomplete = incomplete_sources(statuses)
    return SnapshotInfo(
        name=name,
        path=path,
        sha256=sha256,
        snapshot_id=snapshot_id,
        created_at=created_at,
        partial=bool(incomplete),
        incomplete_sources=incomplete,
    )


def partial_note(snapshot: SnapshotInfo) -> str | None:
    """One sentence for people when the snapshot is partial (None when it is complete)."""
    if not snapshot.partial:
        return None
    which = ", ".join(f"{s} {st}" for s, st in snapshot.incomplete_sources.items())
    return (
        f"partial snapshot ({which or 'requests failed'}): records whose refresh failed are "
        "as an earlier snapshot of the lineage had them"
    )


class KeyInfo(_Model):
    fingerprint: str = Field(description="A short fingerprint of the signing key, never the key.")
    demo: bool = Field(description="True when the fixed, public demo key was used.")


class AuditedReference(_Model):
    """One ordinary reference of an answer: as read, and its check against the snapshot."""

    reference: Reference = Field(
        description="The reference as read from the answer (what a re-audit checks again)."
    )
    check: ReferenceCheck = Field(
        description="Its check, as `citeseal check --format json` reports it."
    )


class ReferencesSection(_Model):
    """The ordinary references of an answer (DOIs, PMIDs, NCT numbers… outside its handles)."""

    counts: dict[str, int] = Field(description="References per tier (every tier listed).")
    references: list[AuditedReference]

    def checks(self) -> list[ReferenceCheck]:
        return [item.check for item in self.references]


class Report(_Model):
    """One audit of one answer against one snapshot."""

    contract_version: str = Field(description="Version of the citation contract and these keys.")
    tool_version: str = Field(description="citeseal version that made the report.")
    created_at: str = Field(description="ISO 8601, UTC.")
    source: str = Field(description="The audited input: a file name or a label such as '-'.")
    verdict: Overall
    verdict_reasons: list[str] = Field(default_factory=list)
    fail_on: list[FailOnItem] = Field(default_factory=lambda: list(DEFAULT_FAIL_ON))
    support_checked: bool = Field(
        default=False,
        description="True when the audit judged claim support (--support): every ok citation "
        "then has a support result. False: no citation was judged, so an ok citation's support "
        "is not_checked (ok never means the passage supports the sentence).",
    )
    snapshot: SnapshotInfo
    key: KeyInfo
    metrics: Metrics
    sentences: list[SentenceResult]
    references: ReferencesSection | None = Field(
        default=None,
        exclude_if=lambda value: value is None,
        description="The answer's ordinary references checked against the snapshot (contract "
        "0.3.0). Absent when the answer holds none (or the caller did not check them).",
    )

    def citations(self) -> list[CitationResult]:
        """Every citation of the report, in answer order."""
        return [c for s in self.sentences for c in s.citations]

    def reference_checks(self) -> list[ReferenceCheck]:
        """The checks of the answer's ordinary references (none without the section): what
        every decision of the overall verdict takes with the sentences
        (:func:`audit.overall.overall`)."""
        return self.references.checks() if self.references is not None else []


def report_json_schema() -> dict[str, object]:
    """The JSON Schema of :class:`Report` (what ``citeseal schema report`` prints)."""
    schema = Report.model_json_schema(mode="serialization")
    schema["$schema"] = "https://json-schema.org/draft/2020-12/schema"
    schema["$comment"] = f"citeseal report, contract {CONTRACT_VERSION}"
    return schema


def report_json_schema_text() -> str:
    """The schema as stable, indented JSON text ending in a newline."""
    return json.dumps(report_json_schema(), indent=2, sort_keys=True, ensure_ascii=False) + "\n"
