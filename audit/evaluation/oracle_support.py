"""The oracle's reading of claim support: the label the default judge must give a planted
claim against the passage it cites, on clear signals only.

Written from docs/support.md ("The default judge") and sharing no code with
:mod:`audit.support` (a test holds it to that). It decides only where the spec leaves no room
for tuning — a sentence holding at least 60 % and 3 of the claim's words, or a claim of 8 or
more words none of which the passage holds — and says None elsewhere (the planter drops the
candidate), so the cases hold under any sane thresholds:

- ``contradicted``: an unhedged sentence that denies what the claim asserts (a null finding
  or a negated verb), states the opposite direction, or gives a figure of the same unit for
  the same quantity that rules the claim's out (another figure; a figure outside the claim's
  bound, "12 %" against "more than 31 %"; a bound the claim's figure is outside of);
- ``abstain``: a hedged denial (``may not`` …); a figure the sentence neither implies nor
  rules out ("30 %" against "more than 20 %");
- ``supported``: the same direction and the same figures, nothing negated or hedged;
- ``not_mentioned``: a claim of at least 8 words, none of them in the passage.
"""

from __future__ import annotations

import re


def _listed(words: str) -> frozenset[str]:
    return frozenset(words.split())


_STOP = _listed(
    "a an the of in on at to for by with and or is are was were be been from as that this "
    "these those it its than"
)
_UP = _listed("increase increased increases raise raised raises higher elevated worsened")
_DOWN = _listed("decrease decreased decreases reduce reduced reduces lower lowered")
_NEGATIONS = _listed("not no never without")
_HEDGES = _listed("may might could suggest suggests unclear likely possibly")
_FIGURE = re.compile(
    r"(?:\b(more than|over|less than) )?([0-9]+(?:\.[0-9]+)?)\s*-?(%|mg|days|weeks|fold)"
)
_BOUND_SIGN = {"more than": ">", "over": ">", "less than": "<"}
# the bounds the oracle does not read ("at least", "≤", "p < 0.05" …): such a sentence is unsure
_OTHER_SIGN = re.compile(r"(?:[<>\u2264\u2265]|\b(?:at least|at most|up to|under|about)\s)\s*[0-9]")


def _words(text: str) -> list[str]:
    return re.findall(r"[a-z0-9]+", text.casefold().replace("n't", " not"))


def _terms(text: str) -> set[str]:
    return {w.removesuffix("s") for w in _words(text) if w not in _STOP and w not in _NEGATIONS}


def _direction(words: list[str]) -> str | None:
    ups, downs = bool(set(words) & _UP), bool(set(words) & _DOWN)
    return "up" if ups and not downs else "down" if downs and not ups else None


Figure = tuple[str | None, float]  # (">" | "<" | None for an exact figure, value)


def _figures(text: str) -> dict[str, set[Figure]]:
    out: dict[str, set[Figure]] = {}
    for sign, value, unit in _FIGURE.findall(text):
        out.setdefault(unit, set()).add((_BOUND_SIGN.get(sign), float(value)))
    return out


def _relation(claim: Figure, passage: Figure) -> str:
    """``"implied"`` (every value the passage allows, the claim allows), ``"excluded"`` (no
    value both allow) or ``"open"`` (some, not all), by docs/support.md's figure rules."""
    (c_sign, c), (p_sign, v) = claim, passage
    if c_sign is None and p_sign is None:
        return "implied" if c == v else "excluded"
    if c_sign == p_sign:  # two bounds one way: "> 30" implies "> 20", not the reverse
        return "implied" if (v >= c if c_sign == ">" else v <= c) else "open"
    if c_sign is None:  # an exact claim figure against a passage's bound
        inside = c > v if p_sign == ">" else c < v
        return "open" if inside else "excluded"
    if p_sign is None:  # a claim's bound against an exact passage figure
        return "implied" if (v > c if c_sign == ">" else v < c) else "excluded"
    low, high = (c, v) if c_sign == ">" else (v, c)  # bounds facing each other: "> low", "< high"
    return "open" if low < high else "excluded"


def label(claim: str, passage: str) -> str | None:
    """The label (module docstring), or None when the spec does not settle it clearly."""
    want = _terms(claim)
    sentences = [s for s in re.split(r"(?<=[.!?])\s+", passage) if s]
    if not want or not sentences:
        return None
    shared = [(len(want & _terms(s)), s) for s in sentences]
    best, sentence = max(shared)
    if best == 0:
        return "not_mentioned" if len(want) >= 8 else None
    if best < 3 or best / len(want) < 0.6:
        return None
    c_words, s_words = _words(claim), _words(sentence)
    if set(c_words) & (_NEGATIONS | _HEDGES) or claim.rstrip().endswith("?"):
        return None  # the planter writes plain assertions only
    if _OTHER_SIGN.search(claim) or _OTHER_SIGN.search(sentence):
        return None  # a bound the oracle does not read
    denied = bool(set(s_words) & _NEGATIONS)
    numbered = any(c.isdigit() for c in claim)  # a denial beside an agreeing figure abstains
    if set(s_words) & _HEDGES:
        return "abstain" if denied and not numbered else None
    if denied:
        return "contradicted" if not numbered else None  # a denial beside a figure: unsure
    c_dir, s_dir = _direction(c_words), _direction(s_words)
    if c_dir is None or s_dir is None:
        return None
    c_fig, s_fig = _figures(claim), _figures(sentence)
    if set(c_fig) != set(s_fig):
        return None  # a figure the other does not state (or in another unit): unsure
    if any(len(f) != 1 for f in (*c_fig.values(), *s_fig.values())):
        return None  # two figures of one unit: which is the same quantity is unsure
    relations = {_relation(next(iter(c_fig[u])), next(iter(s_fig[u]))) for u in c_fig}
    if "excluded" in relations:
        return "contradicted" if c_dir == s_dir else None
    if c_dir != s_dir:
        return "contradicted" if not numbered else None
    return "abstain" if "open" in relations else "supported"
