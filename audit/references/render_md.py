"""A reference check as Markdown (pure): one table per tier, gravest tier first.

Rules:

- The document opens with the snapshot (name, sha256, offline), the tool and the totals; then,
  per checked document, a heading with its file and format and a table per tier that occurs
  (``hallucinated``, ``mismatch``, ``unresolved``, ``needs_review``, ``verified``), each row one
  reference: where (line:column), label, identifiers, title, the reason, each field that
  disagrees as ``field: seen … expected …`` and the true flags.
- Every string from a document or a record is untrusted: it goes through
  :func:`audit.render_text.md_text` (one line, Markdown metacharacters, ``|`` included,
  backslash-escaped) or :func:`audit.render_text.md_code` (a code span, its ``|`` escaped in a
  table cell), so no cell can break the table or become a link, an image or HTML.
- :func:`references_markdown` renders the tables alone, for the references section of an audit
  report (``citeseal audit --format md``).
"""

from __future__ import annotations

from collections.abc import Sequence

from audit.references.check import FLAGS, CheckReport, ReferenceCheck, Tier
from audit.render_text import md_code, md_text

DISPLAY_ORDER: tuple[Tier, ...] = (
    "hallucinated",
    "mismatch",
    "unresolved",
    "needs_review",
    "verified",
)
"""The order tiers are shown in by people-facing formats: the gravest first."""


def summary(counts: dict[str, int]) -> str:
    """``2 hallucinated, 1 mismatch, 5 verified`` (gravest first), or ``no references``."""
    parts = [f"{counts[t]} {t}" for t in DISPLAY_ORDER if counts.get(t)]
    return ", ".join(parts) or "no references"


def flag_names(check: ReferenceCheck) -> list[str]:
    """The flags of ``check`` that are true, and the published version of a preprint."""
    names = [f for f in FLAGS if getattr(check.flags, f) is True]
    if check.flags.published_version:
        names.append(f"published as {check.flags.published_version}")
    return names


def diff_text(check: ReferenceCheck) -> list[str]:
    """Each field that disagrees, ``field: seen 'x', expected 'y'`` (None as ``—``)."""
    return [
        f"{d.field}: seen {_quoted(d.seen)}, expected {_quoted(d.expected)}" for d in check.diffs
    ]


def _quoted(value: str | None) -> str:
    return "—" if value is None else f"“{value}”"


def _cell_code(text: str) -> str:
    """A code span inside a table cell: a ``|`` in it escaped, since GFM splits a row at every
    unescaped pipe, inside code spans too (an identifier such as ``doi:10.5555/a|b``)."""
    return md_code(text).replace("|", "\\|")


def _row(check: ReferenceCheck) -> str:
    where = f"{check.span.line}:{check.span.column}"
    cells = [
        where,
        md_text(check.label) if check.label else "",
        "<br>".join(_cell_code(i) for i in check.identifiers) if check.identifiers else "",
        md_text(check.title) if check.title else "",
        md_text(check.reason),
        "; ".join(md_text(d) for d in diff_text(check)),
        ", ".join(md_text(f) for f in flag_names(check)),
    ]
    return "| " + " | ".join(cells) + " |"


def references_markdown(checks: Sequence[ReferenceCheck], level: int = 3) -> list[str]:
    """A table per tier that occurs in ``checks`` (``level``: the headings' ``#`` count)."""
    lines: list[str] = []
    for tier in DISPLAY_ORDER:
        rows = [c for c in checks if c.tier == tier]
        if not rows:
            continue
        lines += [
            "",
            f"{'#' * level} {md_text(tier)} ({len(rows)})",
            "",
            "| where | label | identifiers | title | reason | seen vs expected | flags |",
            "| --- | --- | --- | --- | --- | --- | --- |",
        ]
        lines += [_row(c) for c in rows]
    return lines


def render_markdown(report: CheckReport) -> str:
    """The whole check report as a Markdown document (ends with a newline)."""
    snap = report.snapshot
    ident = f" {md_code(snap.snapshot_id)}" if snap.snapshot_id else ""
    lines = [
        f"# Reference check: {md_text(summary(report.counts))}",
        "",
        f"Snapshot {md_code(snap.name)}{ident} (sha256 {md_code(snap.sha256)}), "
        f"{'online' if report.online else 'offline'}; {md_text(report.tool)}. Offline, an "
        "identifier missing from the snapshot is `unresolved`, never evidence of fabrication.",
    ]
    for doc in report.documents:
        lines += ["", f"## {md_text(doc.file)} ({doc.format}): {md_text(summary(doc.counts))}"]
        lines += references_markdown(doc.references)
    return "\n".join(lines) + "\n"
