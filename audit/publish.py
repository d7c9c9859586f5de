"""The publishing policy: how much of a cited passage a published page may show.

A report page (the site's, ``citeseal audit --format html``'s, the MCP App view's) shows each
cited passage *in full* or as an *excerpt*, decided per citation by the mode of the build and
the licence of the cited record (:mod:`audit.licences`):

========== ===========================================================================
``policy`` the default: in full when the record's licence lets anyone republish it
           (:func:`audit.licences.republishable`: CC0, public domain, CC BY, CC BY-SA),
           else an excerpt. A licence the report does not know (an older report, a
           record not shown for the verdict) is ``unknown``: an excerpt.
``excerpt`` every passage as an excerpt, whatever its licence
``full``    every passage in full: for a site whose publisher holds the rights (their own
           documents) or has checked the terms themselves
========== ===========================================================================

An excerpt is at most :data:`EXCERPT_CHARS` characters of the passage: the span the page
marks (the quote, the closest match of a misquote, the claim-support evidence) with the
context around it that fits, else the passage's beginning; cut at word boundaries where
that keeps the span whole, with a link to the record at its source (:func:`source_url`).
Excerpt pages leave out the word diff between the text as issued and as it is now (it would
show both texts in full) and cut the closest match to the same bound.

A site takes each cited record's licence from the snapshot it re-audits the report against
(:func:`with_licences`), never from the report file; a report it cannot re-audit publishes
every passage as an excerpt (unless the build says ``full``).

A site publishes each report's JSON beside its page: :func:`published_report` leaves out the
passages of the citations its page shows as excerpts.

What the user reads locally — JSON, text and Markdown reports, the CLI, the MCP tools'
results — carries the passages in full: those are the user's own copies, not a publication.
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from typing import Final, Literal, Protocol
from urllib.parse import quote

from audit.licences import UNKNOWN, republishable
from audit.report import CitationResult, Report

PublishMode = Literal["policy", "full", "excerpt"]
PUBLISH_MODES: Final[tuple[PublishMode, ...]] = ("policy", "full", "excerpt")
DEFAULT_MODE: Final[PublishMode] = "policy"
EXCERPT_CHARS: Final = 300
"""The most characters of a passage an excerpt shows (span and context together)."""

SOURCE_URLS: Final = {
    "pmid": "https://pubmed.ncbi.nlm.nih.gov/{}/",
    "pmcid": "https://pmc.ncbi.nlm.nih.gov/articles/{}/",
    "ppr": "https://europepmc.org/article/PPR/{}",
    "nct": "https://clinicaltrials.gov/study/{}",
    "setid": "https://dailymed.nlm.nih.gov/dailymed/lookup.cfm?setid={}",
    "doi": "https://doi.org/{}",
}
"""Where each scheme's records are read upstream (a ``local:`` record has no public page)."""


def shows_full(mode: PublishMode, licence: str | None) -> bool:
    """Whether a page built in ``mode`` shows a passage of a record under ``licence`` in full."""
    if mode == "full":
        return True
    if mode == "excerpt":
        return False
    return republishable(licence or UNKNOWN)


def source_url(record_id: str) -> str | None:
    """The public page of a record (``pmid:99000001`` → its PubMed page); None for a scheme
    with none (``local:``)."""
    scheme, _, ident = record_id.partition(":")
    template = SOURCE_URLS.get(scheme)
    if template is None or not ident:
        return None
    return template.format(quote(ident, safe="/") if scheme == "doi" else quote(ident, safe=""))


def excerpt_bounds(
    length: int, focus: tuple[int, int] | None, text: str = "", limit: int = EXCERPT_CHARS
) -> tuple[int, int]:
    """``(start, end)`` of the excerpt of a passage of ``length`` characters: at most ``limit``
    characters, holding ``focus`` (the marked span) with the context that fits split evenly
    around it (a span longer than ``limit`` is cut to its first ``limit`` characters), else
    the first ``limit``. With ``text``, a cut inside a word moves inward to a space, unless that
    would cut the span.
    """
    if length <= limit:
        return 0, length
    if focus is None or not 0 <= focus[0] < focus[1] <= length:
        start, end = 0, limit
        focus = (0, 0)
    elif focus[1] - focus[0] >= limit:
        start, end = focus[0], focus[0] + limit
        focus = (start, end)
    else:
        spare = limit - (focus[1] - focus[0])
        start = max(0, focus[0] - spare // 2)
        end = min(length, start + limit)
        start = max(0, end - limit)
    if text:
        if start > 0 and not text[start - 1].isspace():
            space = _BLANK.search(text, start, focus[0] if focus != (0, 0) else end)
            if space:
                start = space.end()
        if end < length and not text[end].isspace():
            last = max(
                (m.start() for m in _BLANK.finditer(text, max(start, focus[1]), end)), default=-1
            )
            if last > start:
                end = last
    return start, end


_BLANK = re.compile(r"\s")
"""Where an excerpt may be cut: any whitespace (a space, a line break, a no-break space)."""


PUBLISH_NOTES: Final[dict[str, str]] = {
    "policy": "in full where the cited record's licence allows anyone to republish it (CC0, "
    f"public domain, CC BY, CC BY-SA); otherwise at most {EXCERPT_CHARS} characters around "
    "the quoted span, with a link to the source",
    "excerpt": f"at most {EXCERPT_CHARS} characters of each, around the quoted span, with a "
    "link to the source",
    "full": "in full, whatever their licence (this page was built with --publish full)",
}
"""What a report page says it shows of the cited passages, per mode."""


def excerpt_reason(mode: PublishMode, licence: str) -> str:
    """Why a page shows an excerpt of a passage (said beside it)."""
    if mode == "excerpt":
        return "this page shows excerpts only"
    if licence == UNKNOWN:
        return "the record's licence is unknown"
    return f"the record's licence, {licence}, does not allow republishing it whole"


def bounded(text: str | None) -> str | None:
    """``text`` cut to :data:`EXCERPT_CHARS` characters (an ellipsis marks the cut)."""
    if text is None or len(text) <= EXCERPT_CHARS:
        return text
    return text[: EXCERPT_CHARS - 1] + "…"


class Part(Protocol):
    """A piece of a shown text (``audit.segments.Segment``): its kind and its characters."""

    @property
    def kind(self) -> str: ...
    @property
    def text(self) -> str: ...


def focus(parts: Sequence[Part]) -> tuple[int, int] | None:
    """The character span of the first marked (``mark``) part of a text made of ``parts``."""
    pos = 0
    for part in parts:
        if part.kind == "mark":
            return pos, pos + len(part.text)
        pos += len(part.text)
    return None


def licences_of(report: Report | None) -> dict[str, str]:
    """Each cited record's licence as ``report`` states it (record id → licence)."""
    if report is None:
        return {}
    return {
        c.record.record_id: c.record.licence
        for sentence in report.sentences
        for c in sentence.citations
        if c.record is not None
    }


def with_licences(report: Report, licences: Mapping[str, str]) -> Report:
    """``report`` with each cited record's licence taken from ``licences`` (the snapshot's
    word, e.g. :func:`licences_of` a re-audit against it), ``unknown`` for a record it lacks:
    a site publishes by what the snapshot says, never by what a report file claims (a
    hand-edited report could claim CC BY for any record)."""
    sentences = []
    for sentence in report.sentences:
        citations = []
        for citation in sentence.citations:
            record = citation.record
            if record is not None:
                licence = licences.get(record.record_id, UNKNOWN)
                if licence != record.licence:
                    record = record.model_copy(update={"licence": licence})
                    citation = citation.model_copy(update={"record": record})
            citations.append(citation)
        sentences.append(sentence.model_copy(update={"citations": citations}))
    return report.model_copy(update={"sentences": sentences})


def published_report(report: Report, mode: PublishMode) -> Report:
    """``report`` as a site publishes it beside its page (the JSON a re-audit reads): a
    citation whose passages the page shows only as excerpts carries no ``passage`` nor
    ``current_passage`` (the handle and the snapshot give them back; a re-audit needs only
    the handles and quotes), and its closest match and claim-support evidence are cut to
    :data:`EXCERPT_CHARS` characters. Citations shown in full are left as they are."""
    sentences = []
    for sentence in report.sentences:
        citations = []
        for citation in sentence.citations:
            licence = citation.record.licence if citation.record is not None else UNKNOWN
            if not shows_full(mode, licence):
                citation = _withheld(citation)
            citations.append(citation)
        sentences.append(sentence.model_copy(update={"citations": citations}))
    return report.model_copy(update={"sentences": sentences})


def _withheld(citation: CitationResult) -> CitationResult:
    support = citation.support
    evidence = support.evidence if support is not None else None
    if support is not None and evidence is not None and len(evidence.text) > EXCERPT_CHARS:
        cut = evidence.model_copy(update={"text": bounded(evidence.text)})
        support = support.model_copy(update={"evidence": cut})
    return citation.model_copy(
        update={
            "passage": None,
            "current_passage": None,
            "closest_match": bounded(citation.closest_match),
            "support": support,
        }
    )
