"""HTML rendering of audit reports: typed view models and the Jinja environment.

The report page is one template (``site/templates/report.html.j2``, found through
:mod:`audit.resources` in a checkout or the installed wheel) used twice: by
``citeseal audit --format html`` through :func:`render_report_html` (one standalone file, the
stylesheet inlined and allowed by its hash in the Content Security Policy) and by the static
site (``pipeline.site``), which links ``static/site.css`` and adds navigation.

What a page shows of each cited passage follows the publishing policy (:mod:`audit.publish`):
in full, or an excerpt of at most 300 characters around the marked span with a link to the
source, by the mode the page is built with and the cited record's licence.

Every piece of text that comes from an answer or a record reaches the templates as a plain
``str`` and is escaped by Jinja's autoescape; only our own stylesheet is marked safe.
Templates never receive a report model directly: :func:`report_view` turns it into the frozen
dataclasses below, so a template can only use what a view names (``StrictUndefined`` turns a
typo into an error instead of an empty string).
"""

from __future__ import annotations

import base64
import hashlib
from dataclasses import dataclass, field
from functools import cache
from pathlib import Path
from typing import TYPE_CHECKING

import jinja2
from markupsafe import Markup

import audit
from audit.errors import CorpusError
from audit.licences import UNKNOWN
from audit.overall import is_claim
from audit.publish import (
    DEFAULT_MODE,
    EXCERPT_CHARS,
    PUBLISH_NOTES,
    PublishMode,
    bounded,
    excerpt_bounds,
    excerpt_reason,
    focus,
    shows_full,
    source_url,
)
from audit.report import (
    CitationResult,
    PassageView,
    Report,
    SentenceResult,
    partial_note,
    support_not_checked,
)
from audit.resources import resources
from audit.segments import Segment, highlight, marked_span, window, word_diff
from audit.support.model import SupportResult
from audit.terminal import page_text

if TYPE_CHECKING:
    from audit.references.render_html import ReferencesView

TEMPLATES_DIR = resources().templates
STATIC_DIR = resources().static
STYLESHEET = "site.css"
MISSING_ADVICE = "reinstall citeseal (its wheel carries site/) or run it from a source checkout"

CSP_TAIL = "img-src 'self'; base-uri 'none'; form-action 'none'"
SITE_CSP = f"default-src 'none'; style-src 'self'; {CSP_TAIL}"
"""The policy of every site page: no scripts at all, styles and images from the site only."""

VERDICT_LABELS = {
    "malformed": "malformed: not a handle",
    "forged": "forged: check code does not verify",
    "unavailable": "unavailable: this snapshot cannot answer",
    "withdrawn": "withdrawn: record or passage gone",
    "quote_mismatch": "quote mismatch: not verbatim",
    "ok": "ok",
}
FLAG_LABELS = {
    "retracted": "retracted",
    "expression_of_concern": "expression of concern",
    "preprint": "preprint",
    "version_changed": "version changed",
    "not_refreshed": "not refreshed",
}
SUPPORT_LABELS = {
    "supported": "supported: the passage says so",
    "contradicted": "contradicted: the passage says otherwise",
    "not_mentioned": "not mentioned: the passage does not say",
    "abstain": "abstained: the judge is not sure",
}
SUPPORT_BADGES = {
    "supported": "pass",
    "contradicted": "fail",
    "not_mentioned": "warn",
    "abstain": "warn",
}
"""The badge style of each label (the stylesheet's pass/fail/warn colours)."""
STATUS_LABELS = {"cited": "cited", "uncited": "uncited", "invalid_only": "invalid citations only"}
KIND_LABELS = {"heading": "heading", "lead_in": "lead-in", "reference_entry": "reference entry"}
"""Shown instead of the status for a sentence that is not a claim (not counted)."""


class TemplatesMissingError(CorpusError):
    """The site templates or assets are not where :mod:`audit.resources` says (a broken install)."""


# --- view models -------------------------------------------------------------------------------


@dataclass(frozen=True)
class PassageBlock:
    """One passage shown on a page: where it is and its text as segments."""

    heading: str
    locator: str
    section: str | None
    segments: tuple[Segment, ...]
    note: str | None = None  # what the <mark> shows, when something is marked
    excerpt: str | None = None  # an excerpt: which characters it shows and why (else None)
    source_href: str | None = None  # an excerpt: the record at its source (None: no page)
    cut_before: bool = False  # an excerpt that starts after the passage's beginning
    cut_after: bool = False  # an excerpt that ends before the passage's end


@dataclass(frozen=True)
class FlagView:
    name: str
    label: str
    detail: str | None


@dataclass(frozen=True)
class RecordLine:
    """What the snapshot says about a cited record, ready to print."""

    record_id: str
    title: str | None
    details: tuple[str, ...]


@dataclass(frozen=True)
class SupportView:
    """The claim-support judgment of one ok citation: its label, reason, the evidence span
    highlighted in the passage as issued (by its offsets), and the judge that gave it."""

    label: str
    label_text: str
    badge: str  # pass | fail | warn: the stylesheet's colours
    reason: str
    judge: str
    judge_version: str
    span: str | None  # "12–40", the evidence's character offsets
    evidence: tuple[Segment, ...]  # the passage with the span marked; empty without a span
    evidence_cut_before: bool = False  # an excerpt page cut the passage before what it shows
    evidence_cut_after: bool = False


@dataclass(frozen=True)
class CitationView:
    anchor: str  # "s3c1"
    number: int
    raw: str
    handle: str
    quote: str | None
    verdict: str
    verdict_label: str
    detail: str | None
    flags: tuple[FlagView, ...]
    checked_against: str | None
    closest_match: str | None
    similarity: str | None
    record: RecordLine | None
    issued: PassageBlock | None
    current: PassageBlock | None
    changes: tuple[Segment, ...]  # word diff issued → now; empty when the text is unchanged
    support: SupportView | None = None  # only when the audit judged claim support
    support_not_checked: bool = False  # an ok citation nobody judged for claim support
    changes_withheld: bool = False  # an excerpt page leaves out the word diff issued → now


@dataclass(frozen=True)
class SentenceView:
    index: int
    anchor: str  # "s3"
    text: str
    kind: str
    status: str
    status_label: str
    citations: tuple[CitationView, ...]


@dataclass(frozen=True)
class MetricRow:
    label: str
    value: str


@dataclass(frozen=True)
class ReportView:
    """Everything the report template shows about one report."""

    title: str
    source: str
    verdict: str
    verdict_reasons: tuple[str, ...]
    fail_on: tuple[str, ...]
    created_at: str
    contract_version: str
    tool_version: str
    snapshot_name: str
    snapshot_sha256: str
    snapshot_id: str | None
    snapshot_href: str | None
    snapshot_partial: str | None  # the partial-snapshot sentence, or None
    key_fingerprint: str
    demo_key: bool
    summary: str
    metrics: tuple[MetricRow, ...]
    by_verdict: tuple[MetricRow, ...]
    sentences: tuple[SentenceView, ...]
    publish_note: str = ""  # what the page shows of the cited passages (audit.publish)
    references: ReferencesView | None = None
    """The answer's ordinary references (the references partial), None without any."""


@dataclass(frozen=True)
class NavLink:
    href: str
    label: str
    current: bool = False


@dataclass(frozen=True)
class Chrome:
    """The frame of every page: title, where the site root is, styles, navigation."""

    title: str
    root: str = ""  # relative prefix to the site root ("" or "../")
    csp: str = SITE_CSP
    stylesheet: str | None = None  # href of the site stylesheet
    inline_css: Markup | None = None  # the standalone report's stylesheet (allowed by hash)
    nav: tuple[NavLink, ...] = ()
    build_date: str | None = None
    generator: str = field(default_factory=lambda: f"citeseal {audit.__version__}")


def summary_line(report: Report) -> str:
    """``6 citations: 1 malformed, 1 forged, 4 ok`` (counts in ladder order)."""
    counts = report.metrics.by_verdict.model_dump()
    parts = [f"{n} {verdict}" for verdict, n in counts.items() if n]
    total = report.metrics.citations
    noun = "citation" if total == 1 else "citations"
    return f"{total} {noun}" + (f": {', '.join(parts)}" if parts else "")


def report_view(
    report: Report, *, snapshot_href: str | None = None, publish: PublishMode = DEFAULT_MODE
) -> ReportView:
    """The view of ``report`` for the report template; ``publish`` decides how much of each
    cited passage it shows (:mod:`audit.publish`)."""
    m = report.metrics
    validity = "n/a" if m.citation_validity is None else f"{m.citation_validity:.0%}"
    metrics = (
        MetricRow("fabricated citations", str(m.fabricated)),
        MetricRow("retracted papers cited", str(m.retracted_cited)),
        MetricRow("cited sentences", f"{m.cited_sentences}/{m.sentences}"),
        MetricRow("verbatim quotes", f"{m.verbatim_quotes}/{m.quotes}"),
        MetricRow("valid citations", f"{m.valid_citations}/{m.citations} ({validity})"),
    )
    by_verdict = tuple(MetricRow(k, str(v)) for k, v in m.by_verdict.model_dump().items())
    return ReportView(
        title=f"Audit of {report.source}",
        source=report.source,
        verdict=report.verdict,
        verdict_reasons=tuple(report.verdict_reasons),
        fail_on=tuple(report.fail_on),
        created_at=report.created_at,
        contract_version=report.contract_version,
        tool_version=report.tool_version,
        snapshot_name=report.snapshot.name,
        snapshot_sha256=report.snapshot.sha256,
        snapshot_id=report.snapshot.snapshot_id,
        snapshot_href=snapshot_href,
        snapshot_partial=partial_note(report.snapshot),
        key_fingerprint=report.key.fingerprint,
        demo_key=report.key.demo,
        summary=summary_line(report),
        metrics=metrics,
        by_verdict=by_verdict,
        sentences=tuple(_sentence_view(s, publish) for s in report.sentences),
        publish_note=PUBLISH_NOTES[publish],
        references=_references_view(report),
    )


def _references_view(report: Report) -> ReferencesView | None:
    if report.references is None:
        return None
    from audit.references.render_html import references_view  # it imports this module

    return references_view(report.references.checks(), report.references.counts)


def _sentence_view(sentence: SentenceResult, publish: PublishMode) -> SentenceView:
    anchor = f"s{sentence.index}"
    return SentenceView(
        index=sentence.index,
        anchor=anchor,
        text=sentence.text,
        kind=sentence.kind,
        status=sentence.status,
        status_label=(
            STATUS_LABELS.get(sentence.status, sentence.status)
            if is_claim(sentence.kind, len(sentence.citations))
            else KIND_LABELS.get(sentence.kind, sentence.kind)
        ),
        citations=tuple(
            _citation_view(c, f"{anchor}c{n}", n, publish)
            for n, c in enumerate(sentence.citations, 1)
        ),
    )


def _citation_view(
    citation: CitationResult, anchor: str, number: int, publish: PublishMode
) -> CitationView:
    issued = citation.passage
    current = citation.current_passage
    if issued is not None and current is not None and current.text == issued.text:
        current = None  # same words: nothing to compare
    licence = citation.record.licence if citation.record is not None else UNKNOWN
    cut = None if shows_full(publish, licence) else excerpt_reason(publish, licence)
    changes: tuple[Segment, ...] = ()
    withheld = False
    if issued is not None and current is not None:
        # an excerpt page shows the word diff only of texts its excerpts show whole
        if cut is None or max(len(issued.text), len(current.text)) <= EXCERPT_CHARS:
            changes = word_diff(issued.text, current.text)
        else:
            withheld = True
    mark, note = None, ""
    if citation.verdict == "quote_mismatch" and citation.closest_match:
        mark, note = citation.closest_match, "closest match to the quote highlighted"
    elif citation.verdict == "ok" and citation.quote:
        mark, note = citation.quote, "the quote highlighted"
    in_issued = bool(issued and any(x.kind == "mark" for x in highlight(issued.text, mark)))
    in_current = citation.checked_against == "current" or not in_issued
    similarity = None if citation.similarity is None else f"{citation.similarity:.4f}"
    return CitationView(
        anchor=anchor,
        number=number,
        raw=citation.raw,
        handle=citation.handle,
        quote=citation.quote,
        verdict=citation.verdict,
        verdict_label=VERDICT_LABELS.get(citation.verdict, citation.verdict),
        detail=citation.detail,
        flags=tuple(
            FlagView(f.name, FLAG_LABELS.get(f.name, f.name), f.detail) for f in citation.flags
        ),
        checked_against=citation.checked_against,
        closest_match=bounded(citation.closest_match) if cut else citation.closest_match,
        similarity=similarity,
        record=_record_line(citation),
        issued=_block("As issued", issued, None if in_current else mark, note, cut),
        current=_block("As it is now", current, mark if in_current else None, note, cut),
        changes=changes,
        support=_support_view(citation.support, issued, cut is not None),
        support_not_checked=support_not_checked(citation),
        changes_withheld=withheld,
    )


def _support_view(
    support: SupportResult | None, passage: PassageView | None, excerpt: bool = False
) -> SupportView | None:
    if support is None:
        return None
    span = support.evidence
    text = passage.text if passage is not None else ""
    evidence: tuple[Segment, ...] = ()
    low = high = length = 0
    if span is not None and text and text[span.start : span.end] == span.text:
        evidence = marked_span(text, span.start, span.end)
        high = length = len(text)
        if excerpt:  # only the excerpt around the evidence
            evidence, low, high = _excerpt(text, evidence)
    return SupportView(
        label=support.label,
        label_text=SUPPORT_LABELS.get(support.label, support.label),
        badge=SUPPORT_BADGES.get(support.label, "warn"),
        reason=support.reason,
        judge=support.judge,
        judge_version=support.judge_version,
        span=f"{span.start}–{span.end}" if span is not None else None,
        evidence=evidence,
        evidence_cut_before=low > 0,
        evidence_cut_after=high < length,
    )


def _excerpt(text: str, segments: tuple[Segment, ...]) -> tuple[tuple[Segment, ...], int, int]:
    """The part of ``segments`` (which spell ``text``) an excerpt page shows around the first
    marked span, with its ``start`` and ``end`` in ``text``."""
    start, end = excerpt_bounds(len(text), focus(segments), text)
    return window(segments, start, end), start, end


def _block(
    heading: str, passage: PassageView | None, mark: str | None, note: str, cut: str | None
) -> PassageBlock | None:
    """A passage shown whole, or (``cut`` says why) as its excerpt around the marked span."""
    if passage is None:
        return None
    segments = highlight(passage.text, mark)
    marked = any(s.kind == "mark" for s in segments)
    locator = f"{passage.record_id}@{passage.version}/{passage.path}"
    if cut is None:
        return PassageBlock(heading, locator, passage.section, segments, note if marked else None)
    text = passage.text
    shown, start, end = _excerpt(text, segments)
    whole = start == 0 and end == len(text)
    what = "the whole passage" if whole else f"characters {start + 1}–{end} of {len(text):,}"
    return PassageBlock(
        heading=heading,
        locator=locator,
        section=passage.section,
        segments=shown,
        note=note if any(s.kind == "mark" for s in shown) else None,
        excerpt=f"excerpt: {what} ({cut})",
        source_href=source_url(passage.record_id),
        cut_before=start > 0,
        cut_after=end < len(text),
    )


def _record_line(citation: CitationResult) -> RecordLine | None:
    record = citation.record
    if record is None:
        return None
    details: list[str] = [f"source {record.source}", f"current version {record.current_version}"]
    for label, value in (
        ("journal", record.journal),
        ("year", record.year),
        ("status", record.status),
        ("doi", record.doi),
    ):
        if value is not None and value != "":
            details.append(f"{label} {value}")
    details.append(f"licence {record.licence}")
    if record.withdrawn:
        details.append("withdrawn upstream")
    for label, value in (
        ("retracted", record.retracted),
        ("expression of concern", record.expression_of_concern),
        ("preprint", record.preprint),
    ):
        details.append(f"{label}: {'unknown' if value is None else 'yes' if value else 'no'}")
    return RecordLine(record_id=record.record_id, title=record.title, details=tuple(details))


# --- environment and standalone rendering ------------------------------------------------------


def _visible(value: object) -> object:
    """What a template prints of a value: untrusted text with its unsafe characters shown
    (:func:`audit.terminal.page_text`); our own markup (the inlined stylesheet) unchanged."""
    if isinstance(value, str) and not isinstance(value, Markup):
        return page_text(value)
    return value


def make_environment(templates: Path | None = None) -> jinja2.Environment:
    """The Jinja environment every page is rendered with (autoescape, StrictUndefined, and
    every printed value's bidi controls and invisible characters shown as escapes)."""
    folder = templates or TEMPLATES_DIR
    if not (folder / "base.html.j2").is_file():
        raise TemplatesMissingError(
            f"site templates not found in {folder}",
            advice=MISSING_ADVICE,
        )
    return jinja2.Environment(
        loader=jinja2.FileSystemLoader(str(folder)),
        autoescape=True,
        finalize=_visible,
        undefined=jinja2.StrictUndefined,
        trim_blocks=True,
        lstrip_blocks=True,
        keep_trailing_newline=True,
    )


@cache
def _default_environment() -> jinja2.Environment:
    return make_environment()


def stylesheet_text(static: Path | None = None) -> str:
    """The site stylesheet (our own file, inlined into standalone reports)."""
    path = (static or STATIC_DIR) / STYLESHEET
    try:
        return path.read_text(encoding="utf-8")
    except FileNotFoundError:
        raise TemplatesMissingError(
            f"site stylesheet not found: {path}",
            advice=MISSING_ADVICE,
        ) from None


def inline_style_csp(css: str) -> str:
    """A policy that allows exactly this inline stylesheet (by its sha256) and nothing else."""
    digest = base64.b64encode(hashlib.sha256(css.encode("utf-8")).digest()).decode("ascii")
    return f"default-src 'none'; style-src 'sha256-{digest}'; {CSP_TAIL}"


def render_report_page(
    env: jinja2.Environment, report: ReportView, chrome: Chrome, **extra: object
) -> str:
    """Render the report template with a given frame (used by the site and standalone)."""
    return env.get_template("report.html.j2").render(page=chrome, report=report, **extra)


def render_report_html(report: Report, *, publish: PublishMode = DEFAULT_MODE) -> str:
    """A standalone HTML page for one report: one file, no external requests, strict CSP;
    its passages as the publishing policy ``publish`` allows (:mod:`audit.publish`)."""
    css = stylesheet_text()
    if "</" in css:
        raise TemplatesMissingError(f"{STATIC_DIR / STYLESHEET} cannot be inlined (contains '</')")
    view = report_view(report, publish=publish)
    chrome = Chrome(title=view.title, csp=inline_style_csp(css), inline_css=Markup(css))  # noqa: S704 - our own stylesheet
    return render_report_page(_default_environment(), view, chrome, reaudit=None, json_href=None)
