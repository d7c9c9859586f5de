"""Per sentence, the metrics and the overall verdict: pure functions over the citations' verdicts
(DESIGN.md §3; the per-citation ladder is :mod:`audit.verdicts`).

Per sentence: ``cited`` (≥ 1 ok citation), ``invalid_only`` (citations, none ok), ``uncited``.
Headings, bold lead-ins and the entries of a reference section (kind ``reference_entry``)
without citations are not claims: they are listed as ``uncited`` but neither counted nor warned
about.

Overall (:func:`overall`), first that applies: ``fail`` when a citation is malformed or
forged, or anything named by ``fail_on`` occurs; ``incomplete`` when a citation is unavailable
(this snapshot could not check it, whatever the reason its ``detail`` gives: the source failed
or was not harvested, or the record is not in the lineage; every one of them is a citation
nobody has checked, so none is a mere warning); ``warn`` when a citation is withdrawn or a
quote_mismatch, a sentence is invalid_only or uncited, a retracted paper is cited, a cited
record was not refreshed, or (with claim support) an ok citation's passage contradicts its
sentence; ``pass`` otherwise. ``fail_on`` may name ``incomplete``: it then fails on what would
make the answer incomplete. An ``abstain`` of the support judge never fails or warns on its
own. A policy that fails on ``contradicted`` fails closed: an ok citation the support judge
did not judge (an audit without claim support, a re-audit) fails it as "not judged", never
passes silently.

Ordinary references of the answer (the ``references`` section; their tiers are
:mod:`audit.references.check`'s) feed the same verdict: a ``hallucinated`` reference always
fails, like a forged handle; an ``unresolved`` one makes the answer ``incomplete``, like an
unavailable citation (nobody could check it); a ``mismatch`` warns; a reference to a retracted
record warns, as a citation of one does; ``needs_review`` never fails or warns (a book, an
unindexed kind: the snapshot cannot say, and the report lists it). ``fail_on`` may name
``mismatch`` and ``unresolved``, and the flags (``retracted``, ``expression_of_concern``,
``preprint``) count references as well as citations. Reasons name references apart:
"1 hallucinated reference".
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from typing import TYPE_CHECKING

from audit.report import (
    DEFAULT_FAIL_ON,
    FAIL_ON_ITEMS,
    SENTENCE_STATUSES,
    VERDICTS,
    ByStatus,
    ByVerdict,
    FailOnItem,
    Metrics,
    Overall,
    SentenceResult,
    SentenceStatus,
    Verdict,
    assemble,
)

if TYPE_CHECKING:
    from audit.references.check import ReferenceCheck

CLAIM_KINDS = frozenset({"sentence", "list_item"})


def is_claim(kind: str, citations: int) -> bool:
    """Sentences and list items are claims; a heading, lead-in or reference entry only when it
    cites."""
    return kind in CLAIM_KINDS or citations > 0


def sentence_status(verdicts: Sequence[Verdict]) -> SentenceStatus:
    """cited: at least one ok citation; invalid_only: citations, none ok; uncited: none."""
    if not verdicts:
        return "uncited"
    return "cited" if "ok" in verdicts else "invalid_only"


def metrics_of(sentences: Sequence[SentenceResult]) -> Metrics:
    """The report's metrics (claims only for the sentence counts)."""
    by_verdict = dict.fromkeys(VERDICTS, 0)
    by_status = dict.fromkeys(SENTENCE_STATUSES, 0)
    quotes = verbatim = retracted = 0
    for sentence in sentences:
        if is_claim(sentence.kind, len(sentence.citations)):
            by_status[sentence.status] += 1
        for citation in sentence.citations:
            by_verdict[citation.verdict] += 1
            if citation.quote is not None:
                quotes += 1
                verbatim += citation.checked_against is not None
            retracted += citation.verdict == "ok" and any(
                flag.name == "retracted" for flag in citation.flags
            )
    total = sum(by_verdict.values())
    checkable = total - by_verdict["unavailable"]  # an outage does not lower validity
    return assemble(
        Metrics,
        fabricated=by_verdict["malformed"] + by_verdict["forged"],
        retracted_cited=retracted,
        sentences=sum(by_status.values()),
        cited_sentences=by_status["cited"],
        quotes=quotes,
        verbatim_quotes=verbatim,
        citations=total,
        checkable_citations=checkable,
        valid_citations=by_verdict["ok"],
        citation_validity=round(by_verdict["ok"] / checkable, 4) if checkable else None,
        by_verdict=assemble(ByVerdict, **by_verdict),
        by_status=assemble(ByStatus, **by_status),
    )


def fail_on_policy(extra: Iterable[FailOnItem] = ()) -> list[FailOnItem]:
    """The default (malformed, forged) plus what the user adds, in a stable order."""
    chosen = set(DEFAULT_FAIL_ON) | set(extra)
    return [item for item in FAIL_ON_ITEMS if item in chosen]


INCOMPLETE_ITEMS: tuple[FailOnItem, ...] = ("unavailable", "unresolved")
"""What makes an answer ``incomplete``: citations and references this snapshot could not
check."""
ALWAYS_FAIL: tuple[FailOnItem, ...] = ("hallucinated",)
"""Fails whatever the policy, as malformed and forged do (those are in every policy)."""


def _failing(policy: Sequence[FailOnItem]) -> list[FailOnItem]:
    """The items a policy fails on: ``incomplete`` stands for :data:`INCOMPLETE_ITEMS`."""
    named = set(policy) | (set(INCOMPLETE_ITEMS) if "incomplete" in policy else set())
    return [item for item in FAIL_ON_ITEMS if item in named and item != "incomplete"]


UNJUDGED = "support_unjudged"
"""Not a fail-on item: the ok citations without a support result (see :func:`overall`)."""


def _occurrences(sentences: Sequence[SentenceResult]) -> dict[str, int]:
    """How often each fail-on item occurs: verdicts, claim statuses, flags of ok citations,
    contradicted support labels (and :data:`UNJUDGED`)."""
    seen: dict[str, int] = dict.fromkeys((*FAIL_ON_ITEMS, UNJUDGED), 0)
    for sentence in sentences:
        if is_claim(sentence.kind, len(sentence.citations)) and sentence.status != "cited":
            seen[sentence.status] += 1
        for citation in sentence.citations:
            if citation.verdict != "ok":
                seen[citation.verdict] += 1
                continue
            for flag in citation.flags:
                seen[flag.name] += 1
            support = citation.support
            if support is None:
                seen[UNJUDGED] += 1
            elif support.label == "contradicted":
                seen["contradicted"] += 1
    return seen


_WORDING: Mapping[str, tuple[str, str]] = {
    "uncited": ("uncited sentence", "uncited sentences"),
    "invalid_only": (
        "sentence with only invalid citations",
        "sentences with only invalid citations",
    ),
    "retracted": ("citation of a retracted record", "citations of retracted records"),
    "expression_of_concern": (
        "citation of a record with an expression of concern",
        "citations of records with an expression of concern",
    ),
    "preprint": ("citation of a preprint", "citations of preprints"),
    "version_changed": (
        "citation of a version that is no longer current",
        "citations of versions that are no longer current",
    ),
    "not_refreshed": (
        "citation of a record this snapshot did not refresh",
        "citations of records this snapshot did not refresh",
    ),
    "contradicted": (
        "citation whose passage contradicts its sentence",
        "citations whose passages contradict their sentences",
    ),
    UNJUDGED: (
        "ok citation not judged for claim support",
        "ok citations not judged for claim support",
    ),
}


def describe(item: str, n: int) -> str:
    """``n`` occurrences of a fail-on item in words: "2 forged citations"."""
    one, many = _WORDING.get(item, (f"{item} citation", f"{item} citations"))
    return f"{n} {one if n == 1 else many}"


REFERENCE_FLAGS = ("retracted", "expression_of_concern", "preprint")
_REFERENCE_WORDING: Mapping[str, tuple[str, str]] = {
    "hallucinated": ("hallucinated reference", "hallucinated references"),
    "mismatch": (
        "reference that disagrees with its record",
        "references that disagree with their records",
    ),
    "unresolved": ("unresolved reference", "unresolved references"),
    "retracted": ("reference to a retracted record", "references to retracted records"),
    "expression_of_concern": (
        "reference to a record with an expression of concern",
        "references to records with an expression of concern",
    ),
    "preprint": ("reference to a preprint", "references to preprints"),
}


def describe_references(item: str, n: int) -> str:
    """``n`` references of a fail-on item in words: "1 hallucinated reference"."""
    one, many = _REFERENCE_WORDING[item]
    return f"{n} {one if n == 1 else many}"


def _reference_occurrences(references: Sequence[ReferenceCheck]) -> dict[str, int]:
    """How often each fail-on item occurs among ordinary references: tiers, true flags
    (``needs_review`` is none: it never fails or warns)."""
    seen: dict[str, int] = dict.fromkeys(_REFERENCE_WORDING, 0)
    for check in references:
        if check.tier in seen:
            seen[check.tier] += 1
        for flag in REFERENCE_FLAGS:
            if getattr(check.flags, flag) is True:
                seen[flag] += 1
    return seen


WARN_ITEMS: tuple[FailOnItem, ...] = (
    "withdrawn",
    "quote_mismatch",
    "mismatch",
    "invalid_only",
    "retracted",
    "uncited",
    "not_refreshed",
    "contradicted",
)
"""What makes an answer warn (when the fail-on policy does not already make it fail)."""


def overall(
    sentences: Sequence[SentenceResult],
    fail_on: Sequence[FailOnItem] = DEFAULT_FAIL_ON,
    references: Sequence[ReferenceCheck] = (),
) -> tuple[Overall, list[str]]:
    """The overall verdict and the reasons for it, the gravest first.

    fail: any item of ``fail_on`` occurs (always including malformed and forged) or any of
    :data:`ALWAYS_FAIL` (a hallucinated reference); incomplete: any of
    :data:`INCOMPLETE_ITEMS` occurs; warn: any of :data:`WARN_ITEMS` occurs; pass otherwise.
    ``references``: the checks of the answer's ordinary references (module docstring).
    """
    seen = _occurrences(sentences)
    cited = _reference_occurrences(references)
    policy = _failing(fail_on_policy(fail_on))
    policy += [i for i in ALWAYS_FAIL if i not in policy]

    def found(word: str, items: Iterable[str]) -> list[str]:
        out = []
        for i in items:
            if seen.get(i):
                out.append(f"{word}: {describe(i, seen[i])}")
            if cited.get(i):
                out.append(f"{word}: {describe_references(i, cited[i])}")
        return out

    fails = found("fail", policy)
    if "contradicted" in policy and seen[UNJUDGED]:  # fail closed: it cannot know
        fails.append(f"fail: {describe(UNJUDGED, seen[UNJUDGED])}")
    unchecked = found("incomplete", (i for i in INCOMPLETE_ITEMS if i not in policy))
    warns = found("warn", (i for i in WARN_ITEMS if i not in policy))
    if fails:
        return "fail", fails + unchecked + warns
    if unchecked:
        return "incomplete", unchecked + warns
    if warns:
        return "warn", warns
    return "pass", []
