"""Comparing what a document says about a work with the registry record of it (pure).

Each rule is a small function that returns a :class:`FieldCheck`: the field, what the document
gave (``seen``), what the record holds (``expected``) and an outcome:

- ``match``: the same value, allowing for how references are really written;
- ``differs``: a real disagreement (a near-miss title, a shifted year, another first author);
- ``other``: clearly another work (a title with little in common: the identifier points to a
  different paper);
- ``absent``: one side has nothing to compare, which is never evidence either way.

Rules:

- **Titles**: both sides are folded (:func:`fold_title`: NFKD, accents and punctuation dropped,
  case folded, whitespace runs to one space). ``match`` when ``rapidfuzz.fuzz.ratio`` on the
  folded text is at least :data:`TITLE_MATCH`, or when one folded title is the other's leading
  part up to any subtitle mark (``:``, `` - ``, ``.``, ``?``, ``(``), of at least three words
  (a cited main title without its subtitle, or a record's trailing note); two different
  subtitles of one main title are not a match. ``other`` below
  :data:`TITLE_OTHER`, else ``differs``. A plain ratio, not a token set: word order counts.
- **Authors**: each name is reduced to its surname key (:func:`surname_key`): ``Surname, G.``,
  ``Surname GH`` (PubMed), ``G. H. Surname`` and ``Given Surname`` all give the surname; accents
  are folded; particles (van, von, de, la, der, …) are dropped so ``van der Berg K`` and
  ``Berg K van der`` agree; a group author (``… Trial Group``, ``… Consortium``) is its whole
  name, parenthesised notes dropped; ``et al.`` is not an author. ``match`` when the first authors
  agree; ``differs`` when they do not but some author is shared (swapped or misspelt order);
  ``other`` when no author is shared.
- **Year**: equal or one apart (online-first versus issue year) is ``match``; else ``differs``.
- **Venue**: ``match`` when, after folding and dropping stop words (of, the, and, for, …),
  the two have the same number of words and each word of one is a prefix of the other's word
  at that place (ISO 4 / NLM abbreviations: ``N Engl J Med`` for ``The New England Journal of
  Medicine``), or when their ratio is at least :data:`TITLE_MATCH`; else ``differs`` (a venue
  never proves another work: preprint servers and proceedings are named loosely).
"""

from __future__ import annotations

import re
import unicodedata
from dataclasses import dataclass
from typing import Literal, NewType

from rapidfuzz import fuzz

FoldedTitle = NewType("FoldedTitle", str)
Outcome = Literal["match", "differs", "other", "absent"]
Field = Literal["title", "authors", "year", "venue"]

TITLE_MATCH = 90.0
"""Least ratio (0-100) of two folded titles that are the same title."""
TITLE_OTHER = 60.0
"""Below this ratio two titles are different works."""
SUBTITLE_MIN_WORDS = 3

_PARTICLE_WORDS = "van von der den de del della di da dos das du la le ten ter vom zu zur al el bin"
PARTICLES = frozenset(_PARTICLE_WORDS.split(" "))
_STOP_WORDS = "of the and for in on a an to und et de la le les des der die &"
STOP_WORDS = frozenset(_STOP_WORDS.split(" "))
_SUBTITLE_MARK = re.compile(r"\s*(?::|\s-\s|\s–\s|\s—\s|\.\s|\?\s|\()")
_NON_WORD = re.compile(r"[^\w]+")
_INITIALS = re.compile(r"^(?:[A-Z]{1,3}\.?|(?:[A-Z]\.-?){1,3})$")
_PARENS = re.compile(r"\([^)]*\)")
_GROUP = re.compile(
    r"\b(?:group|consortium|collaborat\w*|committee|investigators|society|association|"
    r"organi[sz]ation|network|council|team)\b",
    re.IGNORECASE,
)
_ET_AL = re.compile(r"^(?:et\.?\s*al\.?|and others|others)$", re.IGNORECASE)


@dataclass(frozen=True)
class FieldCheck:
    """One compared field: what the document gave, what the record holds, and the outcome."""

    field: Field
    outcome: Outcome
    seen: str | None
    expected: str | None
    score: float | None = None


def _fold(text: str) -> str:
    decomposed = unicodedata.normalize("NFKD", text)
    plain = "".join(c for c in decomposed if not unicodedata.combining(c))
    return " ".join(_NON_WORD.sub(" ", plain.casefold().replace("_", " ")).split())


def fold_title(text: str) -> FoldedTitle:
    """A title for comparison: accents, punctuation and case folded, whitespace collapsed."""
    return FoldedTitle(_fold(text))


def leading_parts(text: str) -> list[FoldedTitle]:
    """The folded leading parts of a title, cut at each subtitle mark, of enough words."""
    parts = []
    for mark in _SUBTITLE_MARK.finditer(text):
        head = fold_title(text[: mark.start()])
        if len(head.split()) >= SUBTITLE_MIN_WORDS:
            parts.append(head)
    return parts


def compare_titles(seen: str | None, expected: str | None) -> FieldCheck:
    """Title rule (module docstring)."""
    a = fold_title(seen) if seen else None
    b = fold_title(expected) if expected else None
    if not a or not b:
        return FieldCheck("title", "absent", seen, expected)
    score = fuzz.ratio(a, b)
    if score >= TITLE_MATCH:
        return FieldCheck("title", "match", seen, expected, score)
    if a in leading_parts(expected or "") or b in leading_parts(seen or ""):
        return FieldCheck("title", "match", seen, expected, score)  # a subtitle left out
    outcome: Outcome = "other" if score < TITLE_OTHER else "differs"
    return FieldCheck("title", outcome, seen, expected, score)


def surname_key(name: str) -> str | None:
    """The folded surname of one written name, particles dropped (None for ``et al.``)."""
    text = " ".join(name.replace("\u00a0", " ").split()).strip(" ,;")
    if not text or _ET_AL.match(text):
        return None
    text = _PARENS.sub(" ", text).strip()
    if _GROUP.search(text):
        return _fold(text).replace(" ", "") or None  # a group author is its whole name
    words = text.split()
    while len(words) > 1 and words[-1].casefold() in PARTICLES:  # Berg K van der
        words.pop()
    text = " ".join(words)
    if "," in text:
        surname = text.split(",", 1)[0]
    else:
        words = text.split()
        if len(words) > 1 and _INITIALS.match(words[-1]):
            while len(words) > 1 and _INITIALS.match(words[-1]):
                words.pop()
            surname = " ".join(words)  # PubMed: Surname GH; Vancouver: Surname G. H.
        elif len(words) > 1:
            cut = len(words) - 1
            while cut > 0 and words[cut - 1].casefold() in PARTICLES:
                cut -= 1
            surname = " ".join(words[cut:])  # Given [particles] Surname
        else:
            surname = text
    parts = [w for w in _fold(surname).split() if w not in PARTICLES]
    return "".join(parts) or None


def _keys(names: tuple[str, ...] | list[str]) -> list[str]:
    return [k for k in (surname_key(n) for n in names) if k]


def compare_authors(seen: tuple[str, ...], expected: tuple[str, ...]) -> FieldCheck:
    """Author rule (module docstring)."""
    mine, theirs = _keys(seen), _keys(expected)
    shown_seen = "; ".join(seen) if seen else None
    shown_expected = "; ".join(expected) if expected else None
    if not mine or not theirs:
        return FieldCheck("authors", "absent", shown_seen, shown_expected)
    if mine[0] == theirs[0] or fuzz.ratio(mine[0], theirs[0]) >= TITLE_MATCH:
        return FieldCheck("authors", "match", shown_seen, shown_expected)
    shared = set(mine) & set(theirs)
    outcome: Outcome = "differs" if shared else "other"
    return FieldCheck("authors", outcome, shown_seen, shown_expected)


def compare_years(seen: int | None, expected: int | None) -> FieldCheck:
    """Year rule: equal or one apart (online-first) matches."""
    if seen is None or expected is None:
        return FieldCheck("year", "absent", _str(seen), _str(expected))
    outcome: Outcome = "match" if abs(seen - expected) <= 1 else "differs"
    return FieldCheck("year", outcome, str(seen), str(expected))


def _str(value: int | None) -> str | None:
    return None if value is None else str(value)


def _venue_words(text: str) -> list[str]:
    return [w for w in _fold(text.replace("&", " and ")).split() if w not in STOP_WORDS]


def abbreviates(short: str, full: str) -> bool:
    """Whether ``short`` is ``full`` abbreviated word by word (each word a prefix)."""
    a, b = _venue_words(short), _venue_words(full)
    return bool(a) and len(a) == len(b) and all(y.startswith(x) for x, y in zip(a, b, strict=True))


def compare_venues(seen: str | None, expected: str | None) -> FieldCheck:
    """Venue rule (module docstring)."""
    if not seen or not expected or not _venue_words(seen) or not _venue_words(expected):
        return FieldCheck("venue", "absent", seen, expected)
    if abbreviates(seen, expected) or abbreviates(expected, seen):
        return FieldCheck("venue", "match", seen, expected)
    score = fuzz.ratio(" ".join(_venue_words(seen)), " ".join(_venue_words(expected)))
    outcome: Outcome = "match" if score >= TITLE_MATCH else "differs"
    return FieldCheck("venue", outcome, seen, expected, score)
