"""Numbers the rules judge reads: quantities with units and signs, and ratios with their CIs.

Grammar (case-insensitive; ``–``, ``—`` and ``to`` join an interval):

    ratio    := KIND [":" | "="]? EST ["(" | "[" | "," | ";"]? ["95% CI" [":" | ","]?] LO SEP HI
    KIND     := HR | aHR | OR | aOR | RR | aRR | IRR | "hazard ratio" | "odds ratio"
              | "relative risk" | "risk ratio"
    quantity := [SIGN]? NUMBER [UNIT]?        SIGN := < | > | ≤ | ≥ | <= | >= | "less than"
                                                      | "more than" | "at least" | "at most"
                                                      | "up to" | "over" | "under"

A ratio whose confidence interval contains 1 reads as *no effect*; an interval wholly above 1
as *up*, wholly below as *down*. A bare estimate without an interval says nothing about
significance and is not read. Numbers inside a ratio (and the "95" of "95% CI") are not
quantities.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

_NUM = r"\d{1,9}(?:[.,]\d{1,6})?"
RATIO = re.compile(
    r"\b(?P<kind>a?HR|a?OR|a?RR|IRR|hazard\s+ratio|odds\s+ratio|relative\s+risk|risk\s+ratio)"
    r"s?\b[^0-9()\[\]]{0,12}?(?P<est>" + _NUM + r")\s*[(\[,;]?\s*"
    r"(?:95\s*%\s*(?:CI|confidence\s+interval)\s*[:,=]?\s*)?"
    r"(?P<lo>" + _NUM + r")\s*(?:[-\u2010-\u2015\u2212]|to)\s*(?P<hi>" + _NUM + r")",
    re.IGNORECASE,
)
SIGNS = {
    "<": "<",
    ">": ">",
    "\u2264": "<=",
    "\u2265": ">=",
    "<=": "<=",
    ">=": ">=",
    "less than": "<",
    "fewer than": "<",
    "under": "<",
    "below": "<",
    "more than": ">",
    "greater than": ">",
    "over": ">",
    "above": ">",
    "at least": ">=",
    "at most": "<=",
    "up to": "<=",
}
UNITS = {
    "%": "%",
    "percent": "%",
    "per cent": "%",
    "fold": "fold",
    "times": "fold",
    "mg": "mg",
    "g": "g",
    "kg": "kg",
    "ml": "ml",
    "mmhg": "mmhg",
    "day": "day",
    "days": "day",
    "week": "week",
    "weeks": "week",
    "month": "month",
    "months": "month",
    "year": "year",
    "years": "year",
    "hours": "hour",
    "hour": "hour",
    "patients": "people",
    "people": "people",
    "participants": "people",
    "cases": "cases",
    "deaths": "deaths",
}
_SIGN_ALT = "|".join(sorted((re.escape(s) for s in SIGNS), key=len, reverse=True))
_UNIT_ALT = "|".join(sorted((re.escape(u) for u in UNITS if u != "%"), key=len, reverse=True))
QUANTITY = re.compile(
    r"(?:(?P<sign>" + _SIGN_ALT + r")\s*)?(?<![\w.,])(?P<num>" + _NUM + r")(?![\w.,]*\d)"
    r"(?:\s*(?P<unit>%|(?a:" + _UNIT_ALT + r")\b))?",  # ASCII case: "ſ" is no "s"
    re.IGNORECASE,
)
_CI_AFTER = re.compile(r"\s*(?:CIs?|confidence)\b", re.IGNORECASE)  # "95 % CI": no figure


@dataclass(frozen=True, slots=True)
class Ratio:
    """A ratio with its interval: ``text[start:end]`` is the whole match."""

    start: int
    end: int
    kind: str
    estimate: float
    low: float
    high: float

    @property
    def effect(self) -> str:
        """``"null"`` when the interval contains 1, else ``"up"`` or ``"down"``."""
        if self.low <= 1.0 <= self.high:
            return "null"
        return "up" if self.low > 1.0 else "down"


@dataclass(frozen=True, slots=True)
class Quantity:
    """A number with its unit and sign: ``text[start:end]`` is the match."""

    start: int
    end: int
    value: float
    unit: str | None
    sign: str | None

    def agrees(self, other: Quantity) -> bool:
        """Whether ``other`` (a passage's figure) is consistent with this claim figure. A
        passage's bound agrees with a claim's bound only when it implies it ("> 30" implies
        "> 24" and "≥ 24" implies "≥ 24", "> 24" implies itself; "< 30" implies no "> 24")."""
        if self.sign is not None and other.sign is not None:
            return self._implied_by(other)
        if self.sign in (">", ">="):
            return other.value >= self.value if self.sign == ">=" else other.value > self.value
        if self.sign in ("<", "<="):
            return other.value <= self.value if self.sign == "<=" else other.value < self.value
        if other.sign is not None:
            return False  # "about 30 %" against "< 40 %" is not a match we can be sure of
        return abs(self.value - other.value) <= max(0.005 * abs(self.value), 1e-9)

    def excludes(self, other: Quantity) -> bool:
        """Whether ``other`` (a passage's figure) rules this claim figure out: no value can be
        both. Two exact figures exclude each other when they do not agree; a bound and a
        figure or another bound, when their ranges are disjoint ("10 %" and "> 20 %",
        "< 10 %" and "> 20 %", "> 24" and "24"). "30 %" against "> 20 %" and "> 30 %" against
        "> 20 %" neither agree nor exclude: the passage does not settle the claim."""
        if self.sign is None and other.sign is None:
            return not self.agrees(other)
        (low, low_open), (high, high_open) = _overlap(_range(self), _range(other))
        return low > high or (low == high and (low_open or high_open))

    def _implied_by(self, bound: Quantity) -> bool:
        """Whether every value within the passage's ``bound`` is within this claim bound."""
        upward = {">", ">="}
        if (self.sign in upward) != (bound.sign in upward):
            return False  # bounds in opposite directions never settle each other
        strict_claim, strict_passage = self.sign in ("<", ">"), bound.sign in ("<", ">")
        if strict_claim and not strict_passage:  # "≥ 24" allows 24 itself, which "> 24" does not
            return bound.value > self.value if self.sign in upward else bound.value < self.value
        return bound.value >= self.value if self.sign in upward else bound.value <= self.value


_End = tuple[float, bool]  # a range's end: its value, and whether the value itself is left out


def _range(q: Quantity) -> tuple[_End, _End]:
    """The values ``q`` allows, as (low end, high end); an exact figure is one value."""
    inf = float("inf")
    if q.sign in (">", ">="):
        return (q.value, q.sign == ">"), (inf, True)
    if q.sign in ("<", "<="):
        return (-inf, True), (q.value, q.sign == "<")
    return (q.value, False), (q.value, False)


def _overlap(a: tuple[_End, _End], b: tuple[_End, _End]) -> tuple[_End, _End]:
    """The low and high ends of what ranges ``a`` and ``b`` share (empty: low above high)."""
    (a_low, a_high), (b_low, b_high) = a, b
    low = max(a_low, b_low, key=lambda end: (end[0], end[1]))  # at a tie, the open end
    high = min(a_high, b_high, key=lambda end: (end[0], not end[1]))
    return low, high


def _number(text: str) -> float:
    return float(text.replace(",", "."))


def ratios(text: str, start: int = 0, end: int | None = None) -> list[Ratio]:
    """Every ratio with a confidence interval in ``text[start:end]``."""
    found: list[Ratio] = []
    for m in RATIO.finditer(text, start, len(text) if end is None else end):
        low, high = _number(m.group("lo")), _number(m.group("hi"))
        if low > high:
            continue
        kind = re.sub(r"\s+", " ", m.group("kind").lower())
        found.append(Ratio(m.start(), m.end(), kind, _number(m.group("est")), low, high))
    return found


def quantities(text: str, start: int = 0, end: int | None = None) -> list[Quantity]:
    """Every number with a unit in ``text[start:end]``, outside ratios and "95% CI"."""
    stop = len(text) if end is None else end
    taken = [(r.start, r.end) for r in ratios(text, start, stop)]
    found: list[Quantity] = []
    for m in QUANTITY.finditer(text, start, stop):
        unit = m.group("unit")
        if unit is None:
            continue
        if any(a <= m.start("num") < b for a, b in taken):
            continue
        if unit == "%" and _CI_AFTER.match(text, m.end()):
            continue
        sign = m.group("sign")
        found.append(
            Quantity(
                m.start(),
                m.end(),
                _number(m.group("num")),
                UNITS[unit.lower()],
                SIGNS.get(sign.lower()) if sign else None,
            )
        )
    return found
