"""A reference check as HTML (pure apart from reading our templates): view models, the
references partial, and the standalone ``citeseal check --format html`` page.

Rules:

- Templates never see a model: :func:`references_view` turns checks into the frozen dataclasses
  below, so the partial ``site/templates/_references.html.j2`` can use only what a view names
  (``StrictUndefined``). The same partial shows the references table of the standalone check
  page (``check.html.j2``) and of an audit report page (the site's and ``audit --format html``).
- Every string from a document or a record (titles, labels, identifiers, reasons, seen and
  expected values, file names) reaches Jinja as a plain ``str`` and is escaped by autoescape.
  Nothing untrusted becomes an attribute value or a link: a ``javascript:`` URL in a document
  is shown as text, never as an ``href``.
- The standalone page is the site's: its stylesheet inlined and allowed by its sha256 in the
  Content Security Policy (:func:`audit.render_html.inline_style_csp`), no script, no request.
- Tiers are shown gravest first (:data:`audit.references.render_md.DISPLAY_ORDER`), each with
  the badge style the site uses for the same severity.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from markupsafe import Markup

from audit.references.check import CheckReport, ReferenceCheck
from audit.references.render_md import DISPLAY_ORDER, diff_text, flag_names, summary
from audit.render_html import (
    STATIC_DIR,
    STYLESHEET,
    Chrome,
    TemplatesMissingError,
    _default_environment,
    inline_style_csp,
    stylesheet_text,
)

TIER_BADGES = {
    "hallucinated": "fail",
    "mismatch": "warn",
    "unresolved": "incomplete",
    "needs_review": "not_checked",
    "verified": "pass",
}
"""The site badge style of each tier (the stylesheet's pass/warn/incomplete/fail colours)."""
TIER_LABELS = {
    "hallucinated": "hallucinated: no such work",
    "mismatch": "mismatch: a field or identifier disagrees",
    "unresolved": "unresolved: this snapshot cannot say",
    "needs_review": "needs review: not indexed",
    "verified": "verified",
}


@dataclass(frozen=True)
class ReferenceRow:
    """One checked reference, as the table shows it."""

    where: str
    label: str | None
    identifiers: tuple[str, ...]
    title: str | None
    reason: str
    diffs: tuple[str, ...]
    flags: tuple[str, ...]
    record: str | None


@dataclass(frozen=True)
class TierGroup:
    tier: str
    badge: str
    label: str
    rows: tuple[ReferenceRow, ...]


@dataclass(frozen=True)
class ReferencesView:
    """The references table of one document (or one answer)."""

    summary: str
    groups: tuple[TierGroup, ...]


@dataclass(frozen=True)
class DocumentView:
    file: str
    format: str
    references: ReferencesView


@dataclass(frozen=True)
class CheckView:
    """Everything the standalone check page shows."""

    title: str
    online: bool
    tool: str
    snapshot_name: str
    snapshot_sha256: str
    snapshot_id: str | None
    documents: tuple[DocumentView, ...]


def _row(check: ReferenceCheck) -> ReferenceRow:
    return ReferenceRow(
        where=f"{check.span.line}:{check.span.column}",
        label=check.label,
        identifiers=check.identifiers,
        title=check.title,
        reason=check.reason,
        diffs=tuple(diff_text(check)),
        flags=tuple(flag_names(check)),
        record=check.record,
    )


def references_view(checks: Sequence[ReferenceCheck], counts: dict[str, int]) -> ReferencesView:
    """The view of ``checks`` for the references partial, tiers gravest first."""
    groups = []
    for tier in DISPLAY_ORDER:
        rows = tuple(_row(c) for c in checks if c.tier == tier)
        if rows:
            groups.append(TierGroup(tier, TIER_BADGES[tier], TIER_LABELS[tier], rows))
    return ReferencesView(summary=summary(counts), groups=tuple(groups))


def check_view(report: CheckReport) -> CheckView:
    return CheckView(
        title=f"Reference check: {summary(report.counts)}",
        online=report.online,
        tool=report.tool,
        snapshot_name=report.snapshot.name,
        snapshot_sha256=report.snapshot.sha256,
        snapshot_id=report.snapshot.snapshot_id,
        documents=tuple(
            DocumentView(d.file, d.format, references_view(d.references, d.counts))
            for d in report.documents
        ),
    )


def render_check_html(report: CheckReport) -> str:
    """A standalone HTML page for a check report: one file, no script, the site's strict CSP."""
    css = stylesheet_text()
    if "</" in css:
        raise TemplatesMissingError(f"{STATIC_DIR / STYLESHEET} cannot be inlined (contains '</')")
    view = check_view(report)
    chrome = Chrome(title=view.title, csp=inline_style_csp(css), inline_css=Markup(css))  # noqa: S704 - our own stylesheet
    return _default_environment().get_template("check.html.j2").render(page=chrome, check=view)
