"""The oracle's reading of reference checks: the tier and flags a planted reference must get.

Written from docs/references.md ("Checking references": the metadata comparison, the tiers,
the flags) for offline checks, sharing no code with :mod:`audit.references` (a test holds it to
that): its own identifier grammar, its own title folding (``difflib``, not rapidfuzz: a
second reading, so a title is decided only far from the 60/90 boundaries and is otherwise
``None``, which the planter drops), its own surname and year rules. It reads the world's facts
(:class:`~audit.evaluation.world.Bib`) as plain values.
"""

from __future__ import annotations

import difflib
import re
import unicodedata
from dataclasses import dataclass

from audit.evaluation.world import Rec, World

_VALID = {
    "doi": re.compile(r"10\.[0-9]{4,9}/\S+"),
    "pmid": re.compile(r"[1-9][0-9]{0,7}"),
    "pmcid": re.compile(r"PMC[1-9][0-9]{0,9}"),
    "nct": re.compile(r"NCT[0-9]{8}"),
}
_WRITTEN = {"doi": "doi:{}", "pmid": "PMID: {}", "pmcid": "PMCID: {}", "nct": "{}"}


@dataclass(frozen=True)
class Entry:
    """A reference-list entry as planted: identifiers (scheme, value) and the metadata cited."""

    ids: tuple[tuple[str, str], ...]
    title: str
    authors: tuple[str, ...]
    year: int | None
    venue: str | None = None  # None: written as "J Eval Med" (for a work that names none)

    def text(self) -> str:
        """Vancouver style: ``Surname G, Surname G. Title. J Eval Med. 2025. doi:…``."""
        venue = self.venue or "J Eval Med"
        parts = [p for p in (", ".join(self.authors), self.title.rstrip("."), venue) if p]
        if self.year is not None:
            parts.append(str(self.year))
        written = " ".join(_WRITTEN[s].format(v) for s, v in self.ids)
        return ". ".join(parts) + (f". {written}" if written else ".")


@dataclass(frozen=True)
class RefExpected:
    """The planted outcome of one reference: its tier and its three tri-state flags."""

    tier: str
    flags: tuple[bool | None, bool | None, bool | None] = (None, None, None)


def _fold(title: str) -> str:
    text = unicodedata.normalize("NFKD", title)
    text = "".join(c for c in text if not unicodedata.combining(c)).casefold()
    return " ".join("".join(c if c.isalnum() else " " for c in text).split())


def _ratio(seen: str, held: str) -> float:
    return difflib.SequenceMatcher(None, _fold(seen), _fold(held)).ratio()


def title_outcome(seen: str | None, held: str | None) -> str | None:
    """match / differs / other / absent; None where this reading cannot be sure."""
    if not seen or not held:
        return "absent"
    ratio = _ratio(seen, held)
    if ratio >= 0.97:
        return "match"
    if ratio < 0.45:
        return "other"
    return None


def _surname(author: str) -> str:
    return _fold(author).split(" ")[0] if _fold(author) else ""


def author_outcome(seen: tuple[str, ...], held: tuple[str, ...]) -> str:
    if not seen or not held:
        return "absent"
    if _surname(seen[0]) == _surname(held[0]):
        return "match"
    return "differs" if {_surname(a) for a in seen} & {_surname(a) for a in held} else "other"


def venue_outcome(seen: str | None, held: str | None) -> str | None:
    """The entry names its work's own venue (or the work names none); None: unsure (a venue
    with a comma, a full stop or a digit may be cut where the entry is read)."""
    if seen is None or held is None:
        return "absent"
    if seen == held and not re.search(r"[,.0-9]", held):
        return "match"
    return None


def year_outcome(seen: int | None, held: int | None) -> str:
    if seen is None or held is None:
        return "absent"
    return "match" if abs(seen - held) <= 1 else "differs"


def _flags(rec: Rec | None) -> tuple[bool | None, bool | None, bool | None]:
    if rec is None:
        return (None, None, None)
    return (rec.retracted, rec.expression_of_concern, rec.preprint)


def _value(rec: Rec, scheme: str) -> str | None:
    """The record's identifier of ``scheme``: its DOI, PMID or PMCID field, else its id."""
    held = getattr(rec.bib, scheme, None) if scheme in ("doi", "pmid", "pmcid") else None
    if held is None and rec.scheme == scheme:
        held = rec.record_id.partition(":")[2]
    return held


def _holds(rec: Rec, scheme: str, value: str) -> bool:
    if scheme == "doi":
        held = _value(rec, "doi")
        return held is not None and held.lower() == value.lower()
    return rec.record_id == f"{scheme}:{value}" or _value(rec, scheme) == value


def _same_work(entry: Entry, rec: Rec) -> str | None:
    """same / differs / other (clearly another work), or None when unsure."""
    bib = rec.bib
    assert bib is not None  # only works with metadata are looked up
    title = title_outcome(entry.title, bib.title)
    if title is None:
        return None
    authors = author_outcome(entry.authors, bib.authors)
    year = year_outcome(entry.year, bib.year)
    venue = venue_outcome(entry.venue, bib.venue)
    if venue is None:
        return None
    if title == "other" and authors != "match":
        return "other"
    if title == "absent" and authors == "other" and year != "match":
        return "other"
    return "differs" if {title, authors, year} & {"differs", "other"} else "same"


def tier(entry: Entry, world: World, reachable: bool = True) -> RefExpected | None:
    """The tier the check must give ``entry`` offline (None: this reading cannot be sure)."""
    valid = [(s, v) for s, v in entry.ids if _VALID[s].fullmatch(v)]
    invalid = len(valid) < len(entry.ids)
    if not reachable:  # every look-up fails, the title search too: nothing is evidence
        return RefExpected("unresolved")
    works = [r for r in world.records.values() if r.bib is not None]
    holding = {key: [r for r in works if _holds(r, *key)] for key in valid}
    if any(len(held) > 1 for held in holding.values()):
        return None  # one work held by two sources: which record is checked is the check's
    judged = []
    for key in valid:
        for rec in holding[key]:
            outcome = _same_work(entry, rec)
            if outcome is None:
                return None
            judged.append((rec, outcome))

    def conflicts(rec: Rec) -> bool:
        return invalid or any(
            rec not in holding[key] and (_value(rec, key[0]) is not None or holding[key])
            for key in valid
        )

    real = [(r, o) for r, o in judged if o != "other"]
    if real:
        rec, outcome = min(real, key=lambda j: j[1] != "same")
        clean = outcome == "same" and not conflicts(rec)
        return RefExpected("verified" if clean else "mismatch", _flags(rec))
    found = []
    for rec in works:
        assert rec.bib is not None
        title = title_outcome(entry.title, rec.bib.title)
        if title is None and _ratio(entry.title, rec.bib.title) >= 0.75:
            return None  # the title search might find it: unsure
        if title == "match" and author_outcome(entry.authors, rec.bib.authors) != "other":
            found.append(rec)
    if len(found) > 1:
        return None
    titled = found[0] if found else None
    if judged or invalid:
        if titled is not None:
            return RefExpected("mismatch", _flags(titled))
        return RefExpected("hallucinated")
    if titled is not None:
        if _same_work(entry, titled) != "same" or conflicts(titled):
            return RefExpected("mismatch", _flags(titled))
        return RefExpected("verified" if not entry.ids else "unresolved", _flags(titled))
    return RefExpected("unresolved" if entry.ids else "needs_review")
