"""Text folding for quote matching (DESIGN.md §3).

A quote passes when its folded form is a substring of the folded passage. Folding removes
only differences that a faithful copy can pick up on the way (typography, layout, invisible
characters); everything that can change meaning stays significant: case, accents, digits,
superscripts, comparison signs, units, punctuation other than dashes and quote marks.

The steps, in order:

1. Unicode NFC.
2. One character table (:data:`FOLD_TABLE`): every dash and minus → ``-``; every single quote
   mark, apostrophe and single prime → ``'``; every double quote mark (guillemets included)
   and double prime → ``"``; triple primes → ``'''``; no-break spaces → space; the horizontal
   ellipsis → ``...``; invisible characters (soft hyphen, zero-width space/non-joiner/joiner,
   word joiner, invisible math operators, BOM) removed.
3. Whitespace runs (anything ``str.isspace``) → one space; trim both ends.
4. NFC again, because removing an invisible character can bring a base letter and a combining
   mark together (``e`` ZWSP U+0301 → ``é``). This makes :func:`fold` idempotent.

Step 2 runs before step 3 so that ``"a\\u00a0 b"`` and ``"a \\u200b b"`` both fold to ``"a b"``.
"""

from __future__ import annotations

import unicodedata
from typing import NewType

FoldedText = NewType("FoldedText", str)
"""Text that went through :func:`fold`; only folded text is compared with folded text."""

DASHES = (
    "\u2010"  # hyphen
    "\u2011"  # non-breaking hyphen
    "\u2012"  # figure dash
    "\u2013"  # en dash
    "\u2014"  # em dash
    "\u2015"  # horizontal bar
    "\u2212"  # minus sign
    "\u2e3a"  # two-em dash
    "\u2e3b"  # three-em dash
    "\ufe31"  # presentation form for vertical em dash
    "\ufe32"  # presentation form for vertical en dash
    "\ufe58"  # small em dash
    "\ufe63"  # small hyphen-minus
    "\uff0d"  # fullwidth hyphen-minus
)
SINGLE_QUOTES = (
    "\u2018"  # left single quotation mark
    "\u2019"  # right single quotation mark
    "\u201a"  # single low-9 quotation mark
    "\u201b"  # single high-reversed-9 quotation mark
    "\u2039"  # single left-pointing angle quotation mark
    "\u203a"  # single right-pointing angle quotation mark
    "\u2032"  # prime
    "\u2035"  # reversed prime
    "\u02b9"  # modifier letter prime
    "\u02bc"  # modifier letter apostrophe
    "\u275b"  # heavy single turned comma quotation mark ornament
    "\u275c"  # heavy single comma quotation mark ornament
    "\uff07"  # fullwidth apostrophe
)
DOUBLE_QUOTES = (
    "\u201c"  # left double quotation mark
    "\u201d"  # right double quotation mark
    "\u201e"  # double low-9 quotation mark
    "\u201f"  # double high-reversed-9 quotation mark
    "\u00ab"  # left-pointing double angle quotation mark
    "\u00bb"  # right-pointing double angle quotation mark
    "\u2033"  # double prime
    "\u2036"  # reversed double prime
    "\u02ba"  # modifier letter double prime
    "\u275d"  # heavy double turned comma quotation mark ornament
    "\u275e"  # heavy double comma quotation mark ornament
    "\u2e42"  # double low-reversed-9 quotation mark
    "\u301d"  # reversed double prime quotation mark
    "\u301e"  # double prime quotation mark
    "\u301f"  # low double prime quotation mark
    "\uff02"  # fullwidth quotation mark
)
TRIPLE_PRIMES = (
    "\u2034"  # triple prime
    "\u2037"  # reversed triple prime
)
NO_BREAK_SPACES = (
    "\u00a0"  # no-break space
    "\u2007"  # figure space
    "\u202f"  # narrow no-break space
)
INVISIBLE = (
    "\u00ad"  # soft hyphen
    "\u200b"  # zero width space
    "\u200c"  # zero width non-joiner
    "\u200d"  # zero width joiner
    "\u2060"  # word joiner
    "\u2061"  # function application
    "\u2062"  # invisible times
    "\u2063"  # invisible separator
    "\u2064"  # invisible plus
    "\ufeff"  # zero width no-break space (BOM)
)
ELLIPSIS = "\u2026"  # horizontal ellipsis

FOLD_TABLE: dict[int, str | None] = {
    **{ord(c): "-" for c in DASHES},
    **{ord(c): "'" for c in SINGLE_QUOTES},
    **{ord(c): '"' for c in DOUBLE_QUOTES},
    **{ord(c): "'''" for c in TRIPLE_PRIMES},
    **{ord(c): " " for c in NO_BREAK_SPACES},
    **{ord(c): None for c in INVISIBLE},
    ord(ELLIPSIS): "...",
}
"""The character folds of step 2, for ``str.translate``."""


def spaced(text: str) -> str:
    """Step 3: every whitespace run (``str.isspace``, what ``\\s`` matches) → one space, both
    ends trimmed (splitting on it: a regex substitution costs a match per space)."""
    return " ".join(text.split())


def fold(text: str) -> FoldedText:
    """Fold ``text`` for quote comparison (see the module docstring); idempotent."""
    text = unicodedata.normalize("NFC", text)
    text = spaced(text.translate(FOLD_TABLE))
    return FoldedText(unicodedata.normalize("NFC", text))
