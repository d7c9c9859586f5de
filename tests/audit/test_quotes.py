"""Quote matching on pre-folded passages and the closest-match diagnostic."""

from __future__ import annotations

import pytest

from audit.folding import fold
from audit.quotes import ClosestMatch, closest_match, quote_in_passage

PASSAGE = (
    "During 48\u00a0210 person\u2013years of follow\u2011up, 312 children were diagnosed with "
    "Farrow syndrome. Zentravir exposure does not increase the risk of Farrow syndrome\u2026"
)
FOLDED = fold(PASSAGE)


@pytest.mark.parametrize(
    "quote",
    [
        "48 210 person-years",
        "48\u202f210 person\u2014years",
        "does not increase the risk",
        "  does   not\nincrease  ",
        "Farrow syndrome...",
        "312 children",
        "fol\u00adlow-up",  # a soft hyphen copied from a hyphenated layout
    ],
)
def test_verbatim_quotes_pass_after_folding(quote: str) -> None:
    assert quote_in_passage(quote, FOLDED)


@pytest.mark.parametrize(
    "quote",
    [
        "318 children",  # a changed number
        "Does not increase the risk",  # case is significant
        "does increase the risk",  # a dropped word
        "48210 person-years",  # spaces inside numbers are significant
        "zentravir exposure",
    ],
)
def test_changed_quotes_fail(quote: str) -> None:
    assert not quote_in_passage(quote, FOLDED)


@pytest.mark.parametrize("quote", ["", "   ", "\u200b", "\u00ad \u2060"])
def test_empty_quotes_never_pass(quote: str) -> None:
    assert not quote_in_passage(quote, FOLDED)


def test_closest_match_shows_the_passage_words_and_similarity() -> None:
    match = closest_match("318 children were diagnosed", PASSAGE)
    assert match == ClosestMatch(text="312 children were diagnosed", similarity=0.963)


def test_closest_match_of_a_verbatim_quote_is_itself() -> None:
    match = closest_match("does not increase the risk", PASSAGE)
    assert match is not None
    assert match.similarity == 1.0
    assert match.text == "does not increase the risk"


def test_closest_match_quote_longer_than_passage() -> None:
    match = closest_match("Zentravir exposure does not increase the risk at all, ever", "the risk")
    assert match is not None
    assert match.text == "the risk"
    assert 0 < match.similarity <= 1


@pytest.mark.parametrize(("quote", "passage"), [("", PASSAGE), ("risk", ""), ("\u200b", PASSAGE)])
def test_closest_match_of_nothing_is_none(quote: str, passage: str) -> None:
    assert closest_match(quote, passage) is None
