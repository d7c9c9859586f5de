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

Per sentence, the metrics and the overall verdict: :mod:`audit.overall`.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass

from audit.corpus import StoredPassage, StoredRecord
from audit.folding import fold
from audit.handles import Handle
from audit.quotes import ClosestMatch, closest_in_folded
from audit.report import (
    CheckedAgainst,
    Flag,
    FlagName,
    Verdict,
    assemble,
    is_partial,
)

SCHEME_SOURCE: Mapping[str, str] = {
    "pmid": "pubmed",
    "pmcid": "europepmc",
    "ppr": "europepmc",
    "nct": "clinicaltrials",
    "setid": "openfda",
    "local": "local",
}
"""Which source holds a scheme's records, for records the snapshot does not know."""


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
