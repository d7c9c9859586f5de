"""Writing planted cases as answers: answer text in several citation styles, or claims JSON.

Styles of answer text (docs/contract.md, "Citations in answers"):

    bracket    Prose [h "quote"; h2].
    parens     Prose (h; h2).                 unquoted citations only
    bare       Prose, as h reports.           unquoted citations only
    footnote   Prose [1][2].  + [1]: h "quote"   definition lines after the paragraph
    claims     {"sentence": ..., "citations": [{"handle": ..., "quote": ...}]}

Cases about markup carry their own text (``Case.literal``) and are written as they are. A
quote runs to its own closing mark (brackets in it are quote text), so a quote is written
with a delimiter whose marks it does not hold; one holding every kind of quote mark the
grammar delimits with, or a footnote marker (``[1]``, which a reference list would resolve),
is scored as claims only.
"""

from __future__ import annotations

import json
import re
from collections.abc import Sequence
from dataclasses import dataclass

from audit.evaluation.categories import Case, Cite
from audit.evaluation.oracle import Expected, SentencePlan

TEXT_STYLES = ("bracket", "parens", "bare", "footnote")
STYLES = (*TEXT_STYLES, "claims")
PROSE = "Zentravir changed the outcome in cohort {n}"
FOOTNOTE = "\x00FN"  # where a literal case numbers its footnote
DELIMITERS = (  # (opening, closing, what the quote must not hold: its own opening or closing)
    ("\u00ab", "\u00bb", "\u00ab\u00bb"),
    ('"', '"', '"'),
    ("\u201c", "\u201d", "\u201c\u201d"),
    ("\u201e", "\u201c", "\u201e\u201c\u201d"),
)
_MARKER = re.compile(r"\[\^?[0-9A-Za-z_-]{1,20}\]")  # a footnote marker's shape


@dataclass(frozen=True)
class Item:
    """One planted sentence of an answer: a case, an uncited sentence or a heading."""

    case: Case | None
    outcomes: tuple[Expected, ...] = ()
    kind: str = "sentence"  # for items without a case: "sentence" (uncited) or "heading"


def delimit(quote: str) -> str | None:
    """The quote between delimiters it does not hold, or None (see the module docstring)."""
    if _MARKER.search(quote):
        return None
    for left, right, closing in DELIMITERS:
        if not any(mark in quote for mark in closing):
            return f"{left}{quote}{right}"
    return None


def _written(cite: Cite) -> str | None:
    if cite.quote is None:
        return cite.handle
    quoted = delimit(cite.quote)
    return None if quoted is None else f"{cite.handle} {quoted}"


def styles_for(case: Case) -> tuple[str, ...]:
    """The styles a case can be written in."""
    claims = ("claims",) if case.claims else ()
    if case.support:  # the sentence is the claim: no style that adds words to it
        return ("bracket", "parens", "footnote", *claims)
    if case.literal is not None:
        return ("literal", *claims)
    if any(_written(x) is None for x in case.cites):
        return claims
    quoted = any(x.quote is not None for x in case.cites)
    return ("bracket", "footnote", *claims) if quoted else (*TEXT_STYLES, *claims)


def plan_of(items: Sequence[Item]) -> list[SentencePlan]:
    """The sentences the audit must find, as the oracle planted them."""
    out = []
    for item in items:
        if item.case is None:
            out.append(SentencePlan(item.kind, ()))
            continue
        if item.case.lead_in:
            out.append(SentencePlan("lead_in", ()))
        cites = tuple(
            (x.handle, x.quote, e) for x, e in zip(item.case.cites, item.outcomes, strict=True)
        )
        out.append(SentencePlan("sentence", cites))
    return out


def render_text(items: Sequence[Item], style: str) -> str:
    """The answer as Markdown; each case in ``style`` when it can be, else in brackets."""
    blocks = []
    footnotes = 0
    for n, item in enumerate(items, 1):
        case = item.case
        if case is None:
            blocks.append(
                f"## Results of part {n}"
                if item.kind == "heading"
                else f"No citation backs part {n} of this answer."
            )
            continue
        if case.literal is not None:
            footnotes += 1
            blocks.append(case.literal.replace(FOOTNOTE, str(footnotes)))
            continue
        chosen = style if style in styles_for(case) else "bracket"
        prose = case.prose or PROSE.format(n=n)
        lead = f"**{case.lead_in}.** " if case.lead_in else ""
        written = [_written(x) or "" for x in case.cites]
        if chosen == "bracket":
            blocks.append(f"{lead}{prose} [{'; '.join(written)}].")
        elif chosen == "parens":
            blocks.append(f"{lead}{prose} ({'; '.join(written)}).")
        elif chosen == "bare":
            verb = "report" if len(written) > 1 else "reports"
            blocks.append(f"{lead}{prose}, as {' and '.join(written)} {verb}.")
        else:
            numbers = range(footnotes + 1, footnotes + 1 + len(written))
            footnotes += len(written)
            markers = "".join(f"[{k}]" for k in numbers)
            entries = "\n".join(f"[{k}]: {w}" for k, w in zip(numbers, written, strict=True))
            blocks.append(f"{lead}{prose} {markers}.\n\n{entries}")
    return "\n\n".join(blocks) + "\n"


def render_claims(items: Sequence[Item]) -> str:
    """The answer as structured claims JSON."""
    claims: list[dict[str, object]] = []
    for n, item in enumerate(items, 1):
        case = item.case
        if case is None:
            text = (
                f"Results of part {n}" if item.kind == "heading" else f"No citation backs part {n}."
            )
            claims.append({"sentence": text, "kind": item.kind})
            continue
        if case.lead_in:
            claims.append({"sentence": f"{case.lead_in}.", "kind": "lead_in"})
        if case.literal is not None:  # a handle written in the sentence is one of its citations
            claims.append({"sentence": case.literal, "citations": []})
            continue
        cites = [{"handle": x.handle, "quote": x.quote} for x in case.cites]
        prose = case.prose or PROSE.format(n=n)
        claims.append({"sentence": prose + ".", "citations": cites})
    return json.dumps({"claims": claims}, ensure_ascii=False)
