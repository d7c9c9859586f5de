"""The audit's rules: pure functions from what the snapshot said to verdicts (DESIGN.md §3).

Per citation, the ladder (first rule that applies decides; each rule returns what it saw)::

    malformed       the handle does not match the grammar
    forged          the check code verifies under no key of the keyring
    unavailable     the snapshot does not hold the record: its source was not harvested or
                    failed, or it was never in this snapshot's lineage (absence from a frozen
                    corpus ≠ absence upstream); a record the snapshot holds is judged on
                    what it holds, whatever the harvest's status
    withdrawn       the record is gone upstream, the pinned version is not retained, or the
                    version holds no such passage
    quote_mismatch  a quote is given and is not verbatim (after folding) in the text as issued
                    nor in the text as it is now
    ok              with flags: retracted, expression_of_concern, preprint, version_changed,
                    not_refreshed (the harvest this snapshot holds did not refresh the
                    record: its source was not harvested, or in a partial snapshot its
                    refresh failed; it is as an earlier snapshot had it)

"As issued" is the pinned version for a handle with ``@version``; for an unpinned handle
(pmid, pmcid) it is any version the snapshot retains, so those never get ``version_changed``.
``checked_against`` is ``issued`` when the quote is in the text as issued, ``current`` when only
the current version has it.

Per sentence: ``cited`` (≥ 1 ok citation), ``invalid_only`` (citations, none ok), ``uncited``.
Headings and bold lead-ins without citations are not claims: they are listed as ``uncited``
but neither counted nor warned about.

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

from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING

from audit.corpus import StoredPassage, StoredRecord
from audit.folding import fold
from audit.handles import Handle
from audit.quotes import ClosestMatch, closest_in_folded
from audit.report import (
    DEFAULT_FAIL_ON,
    FAIL_ON_ITEMS,
    SENTENCE_STATUSES,
    VERDICTS,
    ByStatus,
    ByVerdict,
    CheckedAgainst,
    FailOnItem,
    Flag,
    FlagName,
    Metrics,
    Overall,
    SentenceResult,
    SentenceStatus,
    Verdict,
    assemble,
    is_partial,
)

if TYPE_CHECKING:
    from audit.references.check import ReferenceCheck

SCHEME_SOURCE: Mapping[str, str] = {
    "pmid": "pubmed",
    "pmcid": "europepmc",
    "ppr": "europepmc",
    "nct": "clinicaltrials",
    "setid": "openfda",
    "local": "local",
}
"""Which source holds a scheme's records, for records the snapshot does not know."""

CLAIM_KINDS = frozenset({"sentence", "list_item"})


# ---------------------------------------------------------------------------------------------
# Per citation


# Facts, Texts and Judgement are made once per citation on the audit's hot path: plain slotted
# dataclasses (a frozen one costs three times as much to build). Treat them as immutable.


@dataclass(slots=True)
class Facts:
    """Everything the ladder looks at for one citation."""

    handle: Handle | None
    error: str | None = None  # the grammar's message when malformed
    quote: str | None = None
    verified: bool = False
    source_status: Mapping[str, str] | None = None
    record: StoredRecord | None = None
    held: Mapping[str, StoredPassage] | None = None  # version → passage at the cited path

    @property
    def source(self) -> str:
        if self.record is not None:
            return self.record.source
        assert self.handle is not None  # the ladder stops at malformed before this
        return SCHEME_SOURCE.get(self.handle.locator.scheme, self.handle.locator.scheme)


@dataclass(slots=True)
class Texts:
    """The passage as issued, the passage as it is now, and other retained versions."""

    issued: StoredPassage | None
    current: StoredPassage | None
    others: tuple[StoredPassage, ...] = ()


@dataclass(slots=True)
class Judgement:
    verdict: Verdict
    detail: str | None = None
    flags: tuple[Flag, ...] = ()
    checked_against: CheckedAgainst | None = None
    passage: StoredPassage | None = None
    current_passage: StoredPassage | None = None
    closest: ClosestMatch | None = None


def rule_malformed(f: Facts) -> str | None:
    """The citation does not match the handle grammar."""
    if f.handle is None:
        return f.error or "does not match the handle grammar"
    return None


def rule_forged(f: Facts) -> str | None:
    """The check code verifies under no key of the keyring."""
    if not f.verified:
        assert f.handle is not None
        return f"check code {f.handle.check!r} does not verify under any key of the keyring"
    return None


def rule_unavailable(f: Facts) -> str | None:
    """The snapshot does not hold the record: source not harvested or failed, or record never
    seen. A record it holds (carried from the parent when the harvest failed) is judged on
    what it holds, and flagged ``not_refreshed``."""
    assert f.handle is not None
    if f.record is not None:
        return None
    status = (f.source_status or {}).get(f.source, "not_harvested")
    if status == "failed":
        return f"the {f.source} harvest failed in this snapshot"
    if status == "not_harvested":
        return f"{f.source} was not harvested in this snapshot"
    partial = f" (the {f.source} harvest was partial)" if status == "partial" else ""
    return f"{f.handle.locator.record_id} was never in this snapshot's lineage{partial}"


def rule_withdrawn(f: Facts) -> str | None:
    """The record is gone upstream, or the cited version or passage is not there."""
    assert f.handle is not None and f.record is not None
    record, locator, held = f.record, f.handle.locator, f.held or {}
    if record.withdrawn:
        since = f" since snapshot {record.withdrawn_since}" if record.withdrawn_since else ""
        return f"{record.record_id} was withdrawn upstream{since}"
    if locator.version is not None:
        if locator.version not in record.versions:
            return (
                f"version not retained: {locator.version} "
                f"(current version {record.current_version})"
            )
        if locator.version not in held:
            return f"no passage {locator.path} in version {locator.version}"
        return None
    if not any(v in held for v in record.versions):
        return f"no passage {locator.path} in {record.record_id}"
    return None


def texts_of(f: Facts) -> Texts:
    """Which stored passages are "as issued" and "as now" for this handle."""
    assert f.handle is not None and f.record is not None
    record, locator, held = f.record, f.handle.locator, f.held or {}
    current = held.get(record.current_version)
    if locator.version is not None:
        return Texts(
            issued=held.get(locator.version),
            current=current if record.current_version != locator.version else None,
        )
    newest_first = [held[v] for v in reversed(record.versions) if v in held]
    issued = current if current is not None else newest_first[0]
    return Texts(
        issued=issued, current=None, others=tuple(p for p in newest_first if p is not issued)
    )


def check_quote(quote: str, texts: Texts) -> tuple[CheckedAgainst, StoredPassage] | None:
    """Where the quote is verbatim (after folding): as issued first, then as now."""
    return _check_folded(fold(quote), texts)


def _check_folded(folded: str, texts: Texts) -> tuple[CheckedAgainst, StoredPassage] | None:
    """:func:`check_quote` with the quote folded once (what :func:`quote_in_passage` tests)."""
    if not folded:
        return None
    issued = texts.issued
    if issued is not None and folded in issued.folded:
        return "issued", issued
    for passage in texts.others:
        if folded in passage.folded:
            return "issued", passage
    if texts.current is not None and folded in texts.current.folded:
        return "current", texts.current
    return None


def closest_of(quote: str, texts: Texts) -> ClosestMatch | None:
    """The best closest match over the texts a quote was checked against (diagnostic only)."""
    best: ClosestMatch | None = None
    needle = fold(quote)
    for passage in (texts.issued, texts.current, *texts.others):
        if passage is None:
            continue
        # closest_match(quote, passage.text) with the quote folded once. (passage.folded is
        # fold(passage.text) in a well-formed snapshot, but the closest match does not rely on it.)
        match = closest_in_folded(needle, fold(passage.text))
        if match is not None and (best is None or match.similarity > best.similarity):
            best = match
    return best


def _targets(record: StoredRecord, kinds: Iterable[str]) -> list[str]:
    """The distinct targets of the record's relations of these kinds, sorted (stable text)."""
    if not record.relations:
        return []
    wanted = set(kinds)
    return sorted({r.target for r in record.relations if r.kind in wanted})


def _cited(f: Facts) -> tuple[StoredRecord, Handle]:
    """The record and handle of a citation the ladder let through (both known)."""
    assert f.record is not None and f.handle is not None
    return f.record, f.handle


def flag_retracted(f: Facts, texts: Texts) -> str | None:
    """Retracted: the source says so, or a retraction notice links to the record."""
    del texts
    record, _ = _cited(f)
    notices = _targets(record, ("retraction_in", "retracted_and_republished_in"))
    if record.retracted is not True and not notices:
        return None
    if not notices:
        return "marked retracted by the source"
    return ("retraction notice " if len(notices) == 1 else "retraction notices ") + ", ".join(
        notices
    )


def flag_expression_of_concern(f: Facts, texts: Texts) -> str | None:
    """An expression of concern was issued about the record."""
    del texts
    record, _ = _cited(f)
    notices = _targets(record, ("expression_of_concern_in",))
    if record.expression_of_concern is not True and not notices:
        return None
    if not notices:
        return "marked with an expression of concern by the source"
    return "expression of concern " + ", ".join(notices)


def flag_preprint(f: Facts, texts: Texts) -> str | None:
    """The record is a preprint (not peer reviewed): flagged by the source, or a ppr handle."""
    del texts
    record, handle = _cited(f)
    if record.preprint is not True and handle.locator.scheme != "ppr":
        return None
    published = _targets(record, ("preprint_of",))
    return ("published as " + ", ".join(published)) if published else "no published version known"


def flag_version_changed(f: Facts, texts: Texts) -> str | None:
    """The handle pins a version that is no longer the current one."""
    record, handle = _cited(f)
    pinned = handle.locator.version
    if pinned is None or pinned == record.current_version:
        return None
    if texts.current is None:
        change = "this passage is gone from it"
    elif texts.issued is not None and texts.current.folded == texts.issued.folded:
        change = "this passage is unchanged"
    else:
        change = "this passage changed"
    return f"current version {record.current_version} ({change})"


def flag_not_refreshed(f: Facts, texts: Texts) -> str | None:
    """The harvest this snapshot holds did not refresh the record: its source was not
    harvested, or the snapshot is partial and the record's refresh failed (it kept the state
    an earlier snapshot gave it). Absence of a refresh is not staleness, but citeseal cannot
    tell the two apart, so it says so."""
    del texts
    record, _ = _cited(f)
    statuses = f.source_status or {}
    status = statuses.get(record.source, "not_harvested")
    if status == "not_harvested":
        why = f"{record.source} was not harvested in this snapshot"
    elif not record.refreshed and is_partial(statuses):
        why = "this snapshot's harvest could not refresh the record"
    else:
        return None
    earlier = f"snapshot {record.last_seen}" if record.last_seen else "an earlier snapshot"
    return f"{why}; it is as {earlier} had it"


FlagRule = Callable[[Facts, Texts], "str | None"]
FLAG_RULES: tuple[tuple[FlagName, FlagRule], ...] = (
    ("retracted", flag_retracted),
    ("expression_of_concern", flag_expression_of_concern),
    ("preprint", flag_preprint),
    ("version_changed", flag_version_changed),
    ("not_refreshed", flag_not_refreshed),
)
"""Flag rules in report order; each returns the flag's detail when it applies."""


def flags_of(f: Facts, texts: Texts) -> tuple[Flag, ...]:
    """The flags of an ``ok`` citation."""
    found = []
    for name, rule in FLAG_RULES:
        detail = rule(f, texts)
        if detail is not None:
            found.append(assemble(Flag, name=name, detail=detail))
    return tuple(found)


LadderRule = Callable[[Facts], "str | None"]
LADDER: tuple[tuple[Verdict, LadderRule], ...] = (
    ("malformed", rule_malformed),
    ("forged", rule_forged),
    ("unavailable", rule_unavailable),
    ("withdrawn", rule_withdrawn),
)
"""The rules before the quote check, in ladder order."""


def _current_beside(f: Facts, passage: StoredPassage | None) -> StoredPassage | None:
    """The current version's passage at the cited path, when it is not ``passage`` itself."""
    assert f.record is not None
    current = (f.held or {}).get(f.record.current_version)
    if current is None or (passage is not None and passage.version == current.version):
        return None
    return current


def judge(f: Facts) -> Judgement:
    """Walk the ladder for one citation."""
    for verdict, rule in LADDER:
        detail = rule(f)
        if detail is not None:
            return Judgement(verdict=verdict, detail=detail)
    texts = texts_of(f)
    if f.quote is None:
        return Judgement(
            "ok",
            flags=flags_of(f, texts),
            passage=texts.issued,
            current_passage=_current_beside(f, texts.issued),
        )
    folded = fold(f.quote)
    found = _check_folded(folded, texts)
    if found is None:
        empty = not folded
        return Judgement(
            "quote_mismatch",
            detail="the quote is empty"
            if empty
            else "the quote is not verbatim in the text as issued nor as it is now",
            passage=texts.issued,
            current_passage=_current_beside(f, texts.issued),
            closest=None if empty else closest_of(f.quote, texts),
        )
    where, matched = found
    passage = matched if where == "issued" else texts.issued
    return Judgement(
        "ok",
        flags=flags_of(f, texts),
        checked_against=where,
        passage=passage,
        current_passage=_current_beside(f, passage),
    )


# ---------------------------------------------------------------------------------------------
# Per sentence, metrics, overall


def is_claim(kind: str, citations: int) -> bool:
    """Sentences and list items are claims; a heading or lead-in only when it cites."""
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
