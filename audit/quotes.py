"""Quote matching: is a quote verbatim (after folding) in a passage, and what is closest if not.

:func:`quote_in_passage` decides; :func:`closest_match` only explains a mismatch and never
decides a verdict.
"""

from __future__ import annotations

from dataclasses import dataclass

from rapidfuzz import fuzz

from audit.folding import FoldedText, fold


def quote_in_passage(quote: str, passage: FoldedText) -> bool:
    """True when the folded quote is a non-empty substring of the pre-folded passage.

    Only the quote is folded (O(len(quote))); the passage was folded once when it was loaded,
    and the substring test is CPython's linear-time string search.
    """
    folded = fold(quote)
    return bool(folded) and folded in passage


@dataclass(frozen=True)
class ClosestMatch:
    """The passage span most similar to a quote (folded text) and the similarity, 0..1."""

    text: str
    similarity: float


def _widen_to_words(text: str, start: int, end: int) -> tuple[int, int]:
    """Grow ``[start, end)`` so it neither starts nor ends inside a word."""
    while start > 0 and not text[start - 1].isspace():
        start -= 1
    while end < len(text) and not text[end].isspace():
        end += 1
    return start, end


def closest_match(quote: str, passage_text: str) -> ClosestMatch | None:
    """The span of the (folded) passage that best matches the (folded) quote.

    Uses rapidfuzz ``partial_ratio_alignment``; the span is widened to whole words. None when
    the quote or the passage is empty after folding.
    """
    return closest_in_folded(fold(quote), fold(passage_text))


def closest_in_folded(needle: FoldedText, haystack: FoldedText) -> ClosestMatch | None:
    """:func:`closest_match` of a folded quote in a folded passage (nothing folded again)."""
    if not needle or not haystack:
        return None
    alignment = fuzz.partial_ratio_alignment(needle, haystack)
    if alignment is None:  # only with a score_cutoff, kept for the type checker
        return None
    start, end = _widen_to_words(haystack, alignment.dest_start, alignment.dest_end)
    return ClosestMatch(text=haystack[start:end], similarity=round(alignment.score / 100, 4))
