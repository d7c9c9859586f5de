"""Plain-text and Markdown renderings of a :class:`~audit.report.Report`.

The text format is compact, one line per sentence and per citation::

    verdict: FAIL  (5 citations: 1 malformed, 1 forged, 1 quote_mismatch, 2 ok)
    fabricated: 2  retracted cited: 1  cited sentences: 2/6  verbatim quotes: 1/2
    snapshot: demo (sha256 5d41402abc4b)  key: 0c8f27aa13d2 (DEMO KEY: public, not a seal)
    warning: partial snapshot (crossref partial): …     (only when the snapshot is partial)
    [1] cited: Zentravir exposure does not increase the risk of Farrow syndrome.
        ok             pmid:99000001/abstract.4~x3k9q "does not increase the risk"
                       support: supported (rules 1): … one sentence …   (with --support)
                       evidence [12:38]: "does not increase the risk"
                       support: not_checked                              (without --support)
    [2] invalid_only: …
        quote_mismatch pmid:…~… "…"
                       closest: "…" (0.8491)

Answer and record text is untrusted: every field goes through the one terminal sanitiser
(:func:`audit.terminal.one_line`: line breaks become spaces; controls, bidi overrides and
isolates, invisible format characters become ``\\x1b``/``\\u202e``-style escapes), and
Markdown metacharacters are escaped (handles go in code spans), so neither a terminal nor a
Markdown renderer can be steered by an answer.
"""

from __future__ import annotations

import re
from typing import TYPE_CHECKING

from audit.overall import describe, describe_references, is_claim
from audit.report import (
    NOT_CHECKED,
    CitationResult,
    Report,
    SentenceResult,
    partial_note,
    support_not_checked,
)
from audit.support.model import SupportResult
from audit.terminal import one_line

if TYPE_CHECKING:
    from audit.support.run import SupportCheck

VERDICT_WIDTH = 15  # "quote_mismatch" and one space
_INDENT = "    "
_UNDER = _INDENT + " " * VERDICT_WIDTH


def clean_text(text: str) -> str:
    """One line of untrusted text, safe to print (:func:`audit.terminal.one_line`)."""
    return one_line(text)


def counts_line(report: Report) -> str:
    """``5 citations: 1 malformed, 1 forged, 1 quote_mismatch, 2 ok`` (ladder order), then,
    when the answer has ordinary references, ``; 3 references: 1 hallucinated, 2 verified``."""
    total = report.metrics.citations
    parts = [f"{n} {verdict}" for verdict, n in report.metrics.by_verdict.model_dump().items() if n]
    noun = "citation" if total == 1 else "citations"
    line = f"{total} {noun}" + (f": {', '.join(parts)}" if parts else "")
    return line + references_count(report)


def references_count(report: Report) -> str:
    """``; 3 references: 1 hallucinated, 2 verified`` (gravest first), or "" without any."""
    if report.references is None:
        return ""
    from audit.references.render_md import summary

    n = len(report.references.references)
    return f"; {n} {'reference' if n == 1 else 'references'}: {summary(report.references.counts)}"


def verdict_line(report: Report) -> str:
    """``verdict: FAIL  (counts)``, naming what failed it when that is a ``--fail-on`` item
    beyond malformed and forged (which the counts already show)."""
    line = f"verdict: {report.verdict.upper()}  ({counts_line(report)})"
    by_verdict = report.metrics.by_verdict
    shown = {
        f"fail: {describe('malformed', by_verdict.malformed)}",
        f"fail: {describe('forged', by_verdict.forged)}",
    }
    if report.references is not None:  # always fails, and the counts show it
        hallucinated = report.references.counts.get("hallucinated", 0)
        shown.add(f"fail: {describe_references('hallucinated', hallucinated)}")
    policy = [
        reason.removeprefix("fail: ")
        for reason in report.verdict_reasons
        if reason.startswith("fail: ") and reason not in shown
    ]
    return line + (f"  --fail-on: {'; '.join(policy)}" if policy else "")


def metrics_line(report: Report) -> str:
    m = report.metrics
    return (
        f"fabricated: {m.fabricated}  retracted cited: {m.retracted_cited}  "
        f"cited sentences: {m.cited_sentences}/{m.sentences}  "
        f"verbatim quotes: {m.verbatim_quotes}/{m.quotes}"
    )


def identity_line(report: Report) -> str:
    key = report.key
    demo = " (DEMO KEY: public, anyone can mint these handles)" if key.demo else ""
    return (
        f"snapshot: {clean_text(report.snapshot.name)} (sha256 {report.snapshot.sha256[:12]})  "
        f"key: {key.fingerprint}{demo}"
    )


def summary_line(report: Report, label: str | None = None) -> str:
    """One line per audited input: ``answer.md: FAIL (5 citations: …)``; ``label`` names the
    input as the user gave it (the report's ``source`` is its public name)."""
    shown = report.source if label is None else label
    return f"{clean_text(shown)}: {report.verdict.upper()}  ({counts_line(report)})"


def _citation_lines(citation: CitationResult) -> list[str]:
    line = f"{_INDENT}{citation.verdict:<{VERDICT_WIDTH - 1}} {clean_text(citation.handle)}"
    if citation.quote is not None:
        line += f' "{clean_text(citation.quote)}"'
    if citation.flags:
        line += f" [{', '.join(flag.name for flag in citation.flags)}]"
    lines = [line]
    if citation.verdict == "quote_mismatch" and citation.closest_match is not None:
        lines.append(
            f'{_UNDER}closest: "{clean_text(citation.closest_match)}" ({citation.similarity:.4f})'
        )
    elif citation.verdict in ("unavailable", "withdrawn") and citation.detail:
        lines.append(_UNDER + clean_text(citation.detail))
    elif citation.checked_against == "current":
        lines.append(_UNDER + "quote found in the current version only, not as issued")
    for flag in citation.flags:
        if flag.name == "not_refreshed" and flag.detail:  # the one flag that warns on its own
            lines.append(f"{_UNDER}not refreshed: {clean_text(flag.detail)}")
    standing = record_standing(citation)
    if standing:
        lines.append(f"{_UNDER}record: {clean_text(standing)}")
    if citation.support is not None:
        lines.extend(_UNDER + line for line in support_lines(citation.support))
    elif support_not_checked(citation):
        lines.append(f"{_UNDER}support: {NOT_CHECKED}")
    return lines


def support_lines(support: SupportResult) -> list[str]:
    """``support: LABEL (judge version): reason`` and, when there is one, the evidence span
    with its character offsets into the passage as issued."""
    lines = [
        f"support: {support.label} ({clean_text(support.judge)} "
        f"{clean_text(support.judge_version)}): {clean_text(support.reason)}"
    ]
    span = support.evidence
    if span is not None:
        lines.append(f'evidence [{span.start}:{span.end}]: "{clean_text(span.text)}"')
    return lines


_RECORD_FLAGS = (
    ("retracted", "retracted"),
    ("expression_of_concern", "expression of concern"),
    ("preprint", "preprint"),
)


def record_standing(citation: CitationResult) -> str:
    """What the snapshot says about the cited record's standing, as the JSON and HTML show it:
    its status (``status WITHDRAWN``), ``withdrawn upstream``, and a retraction, expression of
    concern or preprint the citation carries no flag for; ``""`` when there is nothing to say."""
    record = citation.record
    if record is None:
        return ""
    parts = [f"status {record.status}"] if record.status else []
    if record.withdrawn:
        parts.append("withdrawn upstream")
    flagged = {flag.name for flag in citation.flags}
    parts += [
        label
        for name, label in _RECORD_FLAGS
        if getattr(record, name) is True and name not in flagged
    ]
    return "; ".join(parts)


def sentence_label(sentence: SentenceResult) -> str:
    """The status, or the kind for a heading, lead-in or reference entry that is not a claim
    (not counted)."""
    return sentence.status if is_claim(sentence.kind, len(sentence.citations)) else sentence.kind


def render_text(report: Report) -> str:
    """The compact text report (ends with a newline)."""
    lines = [verdict_line(report), metrics_line(report), identity_line(report)]
    note = partial_note(report.snapshot)
    if note is not None:
        lines.append(f"warning: {clean_text(note)}")
    for sentence in report.sentences:
        lines.append(f"[{sentence.index}] {sentence_label(sentence)}: {clean_text(sentence.text)}")
        for citation in sentence.citations:
            lines.extend(_citation_lines(citation))
    lines.extend(_reference_lines(report))
    return "\n".join(lines) + "\n"


def _references_summary(report: Report) -> str:
    """``11: 2 hallucinated, 1 mismatch, …`` (the references section must exist)."""
    return (
        references_count(report)
        .removeprefix("; ")
        .replace(" references:", ":", 1)
        .replace(" reference:", ":", 1)
    )


def _reference_lines(report: Report) -> list[str]:
    """The references section: a heading line, then each reference as ``citeseal check``
    prints it (where, label, tier, flags, reason; each field seen vs expected)."""
    if report.references is None:
        return []
    from audit.references.check import reference_lines

    lines = [f"references ({_references_summary(report)}):"]
    for item in report.references.references:
        lines.extend(reference_lines(item.check, indent="    "))
    return lines


# ---------------------------------------------------------------------------------------------
# Markdown

_MD_SPECIAL = re.compile(r"([\\`*_{}\[\]<>()#+!|~&$])")


def md_text(text: str) -> str:
    """Untrusted text as inert Markdown: metacharacters backslash-escaped, one line."""
    return _MD_SPECIAL.sub(r"\\\1", clean_text(text))


def md_code(text: str) -> str:
    """Untrusted text in a code span whose fence is longer than any backtick run inside."""
    text = clean_text(text)
    longest = max((len(run) for run in re.findall(r"`+", text)), default=0)
    fence = "`" * (longest + 1)
    pad = " " if text.startswith("`") or text.endswith("`") or not text.strip() else ""
    return f"{fence}{pad}{text}{pad}{fence}"


def _md_citation(citation: CitationResult, indent: str) -> list[str]:
    """The citation as an item of its sentence's list item; ``indent``: the width of that
    item's marker (``1. ``, ``10. ``), the column CommonMark nests a sub-list at."""
    line = f"{indent}- **{citation.verdict}** {md_code(citation.handle)}"
    if citation.quote is not None:
        line += f" “{md_text(citation.quote)}”"
    under = indent + "  "  # under the citation's "- "
    lines = [line]
    for flag in citation.flags:
        detail = f": {md_text(flag.detail)}" if flag.detail else ""
        lines.append(f"{under}- flag **{flag.name}**{detail}")
    if citation.detail and citation.verdict != "ok":
        lines.append(f"{under}- {md_text(citation.detail)}")
    if citation.checked_against is not None:
        lines.append(
            f"{under}- quote checked against the text {_AGAINST[citation.checked_against]}"
        )
    if citation.closest_match is not None:
        lines.append(
            f"{under}- closest: “{md_text(citation.closest_match)}” ({citation.similarity:.4f})"
        )
    standing = record_standing(citation)
    if standing:
        lines.append(f"{under}- record: {md_text(standing)}")
    support = citation.support
    if support is not None:
        line = (
            f"{under}- support **{support.label}** (judge {md_code(support.judge)} "
            f"{md_code(support.judge_version)}): {md_text(support.reason)}"
        )
        if support.evidence is not None:
            span = support.evidence
            line += f" Evidence \\[{span.start}:{span.end}\\]: “{md_text(span.text)}”"
        lines.append(line)
    elif support_not_checked(citation):
        lines.append(f"{under}- support **{md_text(NOT_CHECKED)}**: claim support was not judged")
    return lines


_AGAINST = {"issued": "as issued", "current": "as it is now (not as issued)"}


def render_markdown(report: Report) -> str:
    """The report as a Markdown document (ends with a newline)."""
    m = report.metrics
    key = report.key
    demo = " — **demo key**: public, anyone can mint these handles" if key.demo else ""
    lines = [
        f"# Audit of {md_text(report.source)}: {report.verdict.upper()}",
        "",
        f"{md_text(counts_line(report))}.",
        "",
        "| fabricated | retracted cited | cited sentences | verbatim quotes |",
        "| --- | --- | --- | --- |",
        f"| {m.fabricated} | {m.retracted_cited} | {m.cited_sentences}/{m.sentences} "
        f"| {m.verbatim_quotes}/{m.quotes} |",
        "",
        f"Snapshot {md_code(report.snapshot.name)} (sha256 {md_code(report.snapshot.sha256)}), "
        f"key {md_code(key.fingerprint)}{demo}. "
        f"citeseal {md_text(report.tool_version)}, contract {md_text(report.contract_version)}, "
        f"{md_text(report.created_at)}.",
    ]
    note = partial_note(report.snapshot)
    if note is not None:
        lines += ["", f"**Warning:** {md_text(note)}."]
    if report.verdict_reasons:
        lines += ["", "Why:", ""]
        lines += [f"- {md_text(reason)}" for reason in report.verdict_reasons]
    lines += ["", "## Sentences", ""]
    for sentence in report.sentences:
        label = sentence_label(sentence)
        lines.append(f"{sentence.index}. **{label}**: {md_text(sentence.text)}")
        for citation in sentence.citations:
            lines.extend(_md_citation(citation, " " * len(f"{sentence.index}. ")))
    if report.references is not None:
        from audit.references.render_md import references_markdown

        lines += ["", f"## References ({md_text(_references_summary(report))})"]
        lines += references_markdown(report.references.checks())
    return "\n".join(lines) + "\n"


# ---------------------------------------------------------------------------------------------
# One claim against handles (citeseal support)


def render_support_check(check: SupportCheck) -> str:
    """The text of ``citeseal support``: the claim, the judge, then per handle its verdict and
    the judge's support (ends with a newline)::

        claim: Zentravir raises the risk of Farrow syndrome.
        judge: rules 1
        ok             pmid:99000001/abstract.4~x3k9q
                       support: contradicted (rules 1): …
                       evidence [0:62]: "…"
        forged         pmid:99000001/abstract.4~x3k9r
                       not judged: the check code does not verify
    """
    lines = [
        f"claim: {clean_text(check.claim)}",
        f"judge: {clean_text(check.judge)} {clean_text(check.judge_version)}",
    ]
    for result in check.results:
        lines.append(f"{result.verdict:<{VERDICT_WIDTH - 1}} {clean_text(result.handle)}")
        if result.support is not None:
            lines.extend(
                _UNDER.removeprefix(_INDENT) + line for line in support_lines(result.support)
            )
        else:
            why = f": {clean_text(result.detail)}" if result.detail else ""
            lines.append(f"{' ' * VERDICT_WIDTH}not judged{why}")
    return "\n".join(lines) + "\n"
