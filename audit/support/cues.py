"""Words and their cues for the rules judge: tokens with offsets, stems, and the cue lexicon.

Pure functions over text; every token keeps its offsets into the text it came from, so a span
the judge reports can always be cut from the original passage.

Cues (all matched on lower-cased tokens):

* **direction** — ``up`` (increase, raise, higher, elevated, worsen, risk factor …) or ``down``
  (decrease, reduce, lower, fewer, protective, prevent …);
* **negation** — ``not``, ``no``, ``never``, ``without``, ``n't`` forms, ``neither``/``nor``,
  ``cannot``; a negation covers the next :data:`NEGATION_SCOPE` tokens and stops at a
  clause break (``but``, ``however``, ``although``, ``whereas``, ``;``, ``:``); a negated
  adverb ("not sufficiently treated") denies the manner, not the word it comes from;
* **null finding** — phrases that report no effect: "no association", "not associated",
  "did not differ", "no significant", "no difference", "no effect", "no evidence",
  "not significantly", "similar between", "has not been linked", "no strong (scientific)
  evidence" …; each is *about* some words (:func:`null_argument`): a phrase opening with "no"
  is about the words after it in its clause, any other about its subject, the words before;
* **significance** — "significant(ly)" within two words of a direction word;
* **no known therapy** — "no specific treatment", "no vaccine", "not proven effective",
  which denies a claim that something cures, treats, prevents or protects;
* **hedging** — may, might, could, possibly, suggest, unclear, unknown, further studies …
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from functools import lru_cache

TOKEN = re.compile(r"[A-Za-z0-9\u00c0-\u024f]+(?:['\u2019][A-Za-z]+)?")
CLAUSE_BREAK = re.compile(r"[;:]|\b(?:but|however|although|whereas|while|yet)\b", re.IGNORECASE)
NEGATION_SCOPE = 4
"""How many tokens after a negation cue it reaches (within the clause)."""


def _words(text: str) -> frozenset[str]:
    return frozenset(text.split())


STOPWORDS = _words(
    """a an the of in on at to for from by with and or as is are was were be been being it its
    this that these those there their they them we our us you your he she his her which who
    whom what when where how than then so such can will would shall should do does did done
    has have had having also into onto over under about after before between among per via
    both each any all some most more less very much many other others same own only just
    yes i me my mine one two vs versus et al s t"""
)

UP = _words(
    """increase increases increased increasing raise raises raised raising higher rise
    rises rising elevated elevate elevates greater worsen worsens worsened worse
    aggravate aggravates aggravated exacerbate exacerbates exacerbated promote promotes
    promoted enhance enhances enhanced boost boosts boosted amplify amplifies"""
)
DOWN = _words(
    """decrease decreases decreased decreasing reduce reduces reduced reducing reduction
    lower lowers lowered lowering fewer lessen lessens decline declines declined
    drop drops dropped diminish diminishes diminished protective protect protects protected
    protection prevent prevents prevented prevention inhibit inhibits inhibited suppress
    suppresses suppressed mitigate mitigates mitigated attenuate attenuates attenuated
    alleviate alleviates alleviated"""
)
NEGATIONS = _words(
    """not no never without neither nor cannot none nothing lack lacks lacked absence
    don't doesn't didn't isn't aren't wasn't weren't won't can't couldn't shouldn't wouldn't
    hasn't haven't hadn't"""
)
HEDGES = _words(
    """may might could possibly possible potentially potential perhaps suggest suggests
    suggested suggesting suggestive unclear unknown uncertain speculate speculative
    hypothesize hypothesized hypothesis likely unlikely appear appears seem seems
    putative presumably"""
)
HEDGE_PHRASES = (
    "further studies",
    "further research",
    "more research",
    "remains to be",
    "remain to be",
    "needs to be confirmed",
    "not yet known",
    "is not known",
)
NULL_PHRASES = (
    "no association",
    "not associated",
    "was not associated",
    "were not associated",
    "no significant",
    "not significantly",
    "not significant",
    "non-significant",
    "nonsignificant",
    "did not differ",
    "do not differ",
    "does not differ",
    "no difference",
    "no differences",
    "no effect",
    "no effects",
    "no evidence",
    "no benefit",
    "no impact",
    "no change",
    "no correlation",
    "not correlated",
    "no relationship",
    "no link",
    "not linked",
    "similar between",
    "did not reduce",
    "did not improve",
    "did not increase",
    "did not affect",
    "does not increase",
    "does not reduce",
    "does not affect",
    "has no",
    "had no",
    "have no",
)
NULL_PATTERN = re.compile(
    r"\b(?:" + "|".join(re.escape(p) for p in NULL_PHRASES) + r")\b"
    r"|\bnot\s+(?:been\s+|be\s+)(?:associated|linked|correlated)\b"
    r"|\bno\s+(?:clear|strong|good|direct|robust|convincing|conclusive|consistent|reliable|"
    r"scientific|clinical|supporting|published|high[- ]quality|credible)\s+"
    r"(?:(?:scientific|clinical|direct|high[- ]quality)\s+)?evidence\b",
    re.IGNORECASE,
)
HEDGE_PATTERN = re.compile(
    r"\b(?:" + "|".join(re.escape(p) for p in HEDGE_PHRASES) + r")\b", re.IGNORECASE
)


@dataclass(frozen=True, slots=True)
class Token:
    """One word: ``text[start:end]`` is ``raw``; ``low`` is lower-cased, ``stem`` stemmed."""

    start: int
    end: int
    raw: str
    low: str
    stem: str


@lru_cache(maxsize=65_536)
def stem(word: str) -> str:
    """A crude suffix stripper: enough that 'increases', 'increased' and 'increase' meet."""
    word = word.replace("\u2019", "'")
    if word.endswith("'s"):
        word = word[:-2]
    for suffix in ("ations", "ation", "ities", "ity", "ness", "ments", "ment"):
        if word.endswith(suffix) and len(word) - len(suffix) >= 4:
            return word[: -len(suffix)]
    for suffix in ("ing", "ed", "es", "ly", "s", "e"):
        if word.endswith(suffix) and len(word) - len(suffix) >= 3:
            return word[: -len(suffix)]
    return word


def tokens(text: str, start: int = 0, end: int | None = None) -> list[Token]:
    """The words of ``text[start:end]`` with offsets into ``text``."""
    found: list[Token] = []
    for match in TOKEN.finditer(text, start, len(text) if end is None else end):
        raw = match.group()
        low = raw.lower().replace("\u2019", "'")
        found.append(Token(match.start(), match.end(), raw, low, stem(low)))
    return found


def content(words: list[Token]) -> list[Token]:
    """The words that carry meaning (no stopwords, no cue-only words, no bare numbers)."""
    return [
        w
        for w in words
        if w.low not in STOPWORDS
        and w.low not in NEGATIONS
        and w.low not in HEDGES
        and not w.low.isdigit()
        and len(w.low) > 1
    ]


def direction(word: Token) -> str | None:
    """``"up"``, ``"down"`` or None for one word."""
    if word.low in UP:
        return "up"
    if word.low in DOWN:
        return "down"
    return None


def adverb(word: Token) -> bool:
    """Whether a word is an adverb of manner or degree ("sufficiently", "fully"): negated, it
    denies how something is done ("not sufficiently treated"), not the word it comes from."""
    return word.low.endswith("ly") and len(word.low) > 4 and word.low not in _NOT_ADVERBS


_NOT_ADVERBS = _words("""family supply apply reply rely italy july anomaly assembly""")


def negated(text: str, words: list[Token], index: int) -> bool:
    """Whether ``words[index]`` is within the scope of a negation cue (same clause)."""
    for back in range(max(0, index - NEGATION_SCOPE), index):
        if words[back].low in NEGATIONS:
            between = text[words[back].end : words[index].start]
            if not CLAUSE_BREAK.search(between):
                return True
    return False


def hedged(text: str, words: list[Token]) -> bool:
    """Whether a text (its ``words``) hedges (may, suggest, further studies …)."""
    if any(w.low in HEDGES for w in words):
        return True
    return bool(words) and bool(HEDGE_PATTERN.search(text, words[0].start, words[-1].end))


_DIRECTION_ALT = "|".join(sorted(UP | DOWN, key=len, reverse=True))
SIGNIFICANT = re.compile(
    r"\bsignificant(?:ly)?\s+(?:\w+\s+)?(?:" + _DIRECTION_ALT + r")\b"
    r"|\b(?:" + _DIRECTION_ALT + r")\s+(?:\w+\s+)?significant(?:ly)?\b",
    re.IGNORECASE,
)


THERAPY_CLAIM = _words(
    """cure cures cured treat treats treated treatment kill kills killed
    prevent prevents prevented protect protects protected remedy"""
)
NO_THERAPY = re.compile(
    r"\bno\s+(?:(?:known|specific|effective|proven|approved|definite|definitive|licensed|"
    r"targeted|specific\s+antiviral|antiviral|curative)\s+)?"
    r"(?:treatments?|therap(?:y|ies)|cures?|vaccines?|drugs?|medications?|antivirals?)\b"
    r"|\bnot\s+(?:been\s+)?(?:proven|shown)\s+(?:to\s+be\s+)?(?:effective|to\s+work)\b",
    re.IGNORECASE,
)


def no_therapy(text: str, start: int, end: int) -> str | None:
    """The phrase by which ``text[start:end]`` says no treatment is known, or None."""
    found = NO_THERAPY.search(text, start, end)
    return found.group() if found else None


def significant(text: str, start: int, end: int) -> bool:
    """Whether ``text[start:end]`` reports a significant change ("significantly reduced")."""
    return bool(SIGNIFICANT.search(text, start, end))


def null_findings(text: str, start: int, end: int) -> list[tuple[int, int]]:
    """The spans of null-finding phrases in ``text[start:end]``."""
    return [m.span() for m in NULL_PATTERN.finditer(text, start, end)]


ARGUMENT_BREAK = re.compile(r",\s|[;:()\[\]]|\b(?:but|however|although|whereas|while|yet)\b", re.I)
"""Where the words a null finding is about stop: a clause break, or a comma and a space (a
comma inside a number, "408,748", is not one)."""
ACRONYM = re.compile(r"[A-Z][A-Z0-9]*[A-Z]s?")


@dataclass(frozen=True, slots=True)
class NullFinding:
    """A null-finding phrase and what it is about: ``about`` the stems, ``names`` the acronyms
    ("ACEI") of the words it bears on (both empty when no word is found)."""

    phrase: str
    about: frozenset[str]
    names: frozenset[str]
    words: str
    """The words it is about, as written ("ACEI ARB use")."""


def null_argument(text: str, found: tuple[int, int], start: int, end: int) -> list[Token]:
    """The content words a null finding at ``text[found[0]:found[1]]`` is about, within its
    clause of ``text[start:end]``. A phrase that opens with "no" ("no association between X and
    Y", "no strong evidence that X …") is about the words after it; any other ("X was not
    associated with Y", "X did not reduce Y") is about its subject, the words before it.
    Adverbs ("currently") are left out."""
    if text[found[0] : found[1]].split()[0].lower() == "no":
        stop = ARGUMENT_BREAK.search(text, found[1], end)
        words = tokens(text, found[1], stop.start() if stop else end)
    else:
        breaks = list(ARGUMENT_BREAK.finditer(text, start, found[0]))
        words = tokens(text, breaks[-1].end() if breaks else start, found[0])
    return [w for w in content(words) if not adverb(w)]


def null_finding(text: str, found: tuple[int, int], start: int, end: int) -> NullFinding:
    """The :class:`NullFinding` of one phrase (see :func:`null_argument`)."""
    words = null_argument(text, found, start, end)
    names = {w.raw.rstrip("s") for w in words if ACRONYM.fullmatch(w.raw)}
    return NullFinding(
        text[found[0] : found[1]],
        frozenset(w.stem for w in words),
        frozenset(names),
        " ".join(w.raw for w in words),
    )


def initialisms(words: list[Token]) -> frozenset[str]:
    """The acronyms runs of two to five content words spell: each word gives its initial, or
    itself when it is an acronym ("angiotensin receptor blockers" → ARB, "ACE inhibitors" →
    ACEI)."""
    parts = [w.raw.rstrip("s") if ACRONYM.fullmatch(w.raw) else w.raw[0] for w in content(words)]
    found: set[str] = set()
    for first in range(len(parts)):
        for last in range(first + 2, min(len(parts), first + 5) + 1):
            found.add("".join(parts[first:last]).upper())
    return frozenset(found)
