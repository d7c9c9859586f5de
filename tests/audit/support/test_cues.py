"""The cue lexicon of the rules judge, one function at a time: tokens, content words,
negation scope, hedges, windows, and the acronyms a null finding is about."""

from __future__ import annotations

from audit.support import cues


def test_a_lexicon_is_its_whitespace_separated_words() -> None:
    assert cues._words(" not no\n  never no ") == frozenset({"not", "no", "never"})


def test_a_curly_apostrophe_is_read_as_a_straight_one() -> None:
    words = cues.tokens("Zentravir doesn\u2019t raise it")
    assert [(w.raw, w.low) for w in words] == [
        ("Zentravir", "zentravir"),
        ("doesn\u2019t", "doesn't"),
        ("raise", "raise"),
        ("it", "it"),
    ]
    assert cues.negated("Zentravir doesn\u2019t raise it", words, 2) is True


def test_two_letter_words_carry_meaning_and_one_letter_words_do_not() -> None:
    assert [w.raw for w in cues.content(cues.tokens("BP fell in x group"))] == [
        "BP",
        "fell",
        "group",
    ]


def test_a_negation_reaches_the_next_four_words_from_the_first_word_on() -> None:
    text = "Not one of the adults improved"
    words = cues.tokens(text)
    assert [cues.negated(text, words, i) for i in range(len(words))] == [
        False,  # the cue itself
        True,
        True,
        True,
        True,
        False,  # "improved" is the fifth word after "Not"
    ]


def test_a_hedging_phrase_hedges_only_within_the_words_given() -> None:
    text = "Zentravir lowers stroke. Further studies are needed."
    assert cues.hedged(text, cues.tokens(text, 25)) is True  # no hedge word, the phrase
    assert cues.hedged(text, cues.tokens(text, 0, 24)) is False


def test_significance_and_null_findings_are_read_only_within_the_window() -> None:
    text = "Stroke fell. It was significantly reduced, with no difference in deaths."
    assert cues.significant(text, 0, 12) is False
    assert cues.significant(text, 13, len(text)) is True
    assert cues.null_findings(text, 0, 40) == []
    assert cues.null_findings(text, 0, len(text)) == [(48, 61)]


def test_a_null_finding_opening_with_no_is_about_the_words_up_to_the_window_end() -> None:
    text = "No association with zentravir was seen. Stroke, however, rose."
    [found] = cues.null_findings(text, 0, 39)
    assert [w.raw for w in cues.null_argument(text, found, 0, 39)] == ["zentravir", "seen"]


def test_an_acronym_in_the_plural_names_its_singular() -> None:
    text = "NSAIDs and COX inhibitors were not associated with stroke."
    [found] = cues.null_findings(text, 0, len(text))
    assert cues.null_finding(text, found, 0, len(text)).names == frozenset({"NSAID", "COX"})
    assert cues.initialisms(cues.tokens(text, 0, 25)) == frozenset(
        {"NSAIDCOX", "NSAIDCOXI", "COXI"}
    )


def test_initialisms_are_runs_of_at_most_five_words() -> None:
    words = cues.tokens("Alpha Beta Gamma Delta Epsilon Zeta")
    assert cues.initialisms(words) == frozenset(
        {"AB", "ABG", "ABGD", "ABGDE"}
        | {"BG", "BGD", "BGDE", "BGDEZ"}
        | {"GD", "GDE", "GDEZ"}
        | {"DE", "DEZ"}
        | {"EZ"}
    )
