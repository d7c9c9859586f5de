"""audit.references.compare: the exact FieldCheck of each rule, and its edge cases."""

from __future__ import annotations

import pytest
from rapidfuzz import fuzz

from audit.references.compare import (
    FieldCheck,
    compare_authors,
    compare_titles,
    compare_venues,
    compare_years,
    surname_key,
)


def test_a_three_word_main_title_without_its_subtitle_matches() -> None:
    check = compare_titles("Vitamin Z deficiency", "Vitamin Z deficiency: a cohort study")
    assert check.outcome == "match"


@pytest.mark.parametrize(
    ("seen", "expected"),
    [(None, "A title"), ("...", "A title"), ("A title", None)],
    ids=["no-title", "only-punctuation", "no-record-title"],
)
def test_an_absent_title_check_keeps_both_sides(seen: str | None, expected: str | None) -> None:
    assert compare_titles(seen, expected) == FieldCheck("title", "absent", seen, expected)


@pytest.mark.parametrize(
    ("name", "key"),
    [
        ("Smith J,", "smith"),
        ("Xu X", "xu"),
        ("Smith\u00a0J", "smith"),
        ("Berg van", "berg"),
        ("Smith, John, Jr.", "smith"),
        ("LEE JH", "lee"),
        ("José de Souza Lima", "lima"),
        ("Ana Souza de Lima", "lima"),
        ("García Márquez, G", "garciamarquez"),
    ],
)
def test_surname_key_edge_cases(name: str, key: str) -> None:
    assert surname_key(name) == key


@pytest.mark.parametrize(
    ("seen", "expected", "shown_seen", "shown_expected"),
    [
        ((), ("Smith J",), None, "Smith J"),
        (("Smith J",), (), "Smith J", None),
        (("et al.",), ("Smith J", "Jones K"), "et al.", "Smith J; Jones K"),
    ],
    ids=["none-cited", "none-recorded", "only-et-al"],
)
def test_an_absent_author_check_shows_what_each_side_gave(
    seen: tuple[str, ...],
    expected: tuple[str, ...],
    shown_seen: str | None,
    shown_expected: str | None,
) -> None:
    check = compare_authors(seen, expected)
    assert check == FieldCheck("authors", "absent", shown_seen, shown_expected)


def test_a_matching_author_check_is_exact() -> None:
    check = compare_authors(("Smith J", "Jones K"), ("Smith J",))
    assert check == FieldCheck("authors", "match", "Smith J; Jones K", "Smith J")


@pytest.mark.parametrize(
    ("seen", "expected"),
    [("Vandenbrouke JP", "Vandenbroucke JP"), ("Kowalewsky A", "Kowalewski A")],
    ids=["ratio-96", "ratio-exactly-90"],
)
def test_a_misspelt_first_author_at_least_90_similar_matches(seen: str, expected: str) -> None:
    assert compare_authors((seen,), (expected,)).outcome == "match"


@pytest.mark.parametrize(
    ("seen", "expected", "check"),
    [
        (None, 2020, FieldCheck("year", "absent", None, "2020")),
        (2020, None, FieldCheck("year", "absent", "2020", None)),
        (2019, 2020, FieldCheck("year", "match", "2019", "2020")),
    ],
)
def test_a_year_check_is_exact(seen: int | None, expected: int | None, check: FieldCheck) -> None:
    assert compare_years(seen, expected) == check


@pytest.mark.parametrize(
    ("seen", "expected"),
    [(None, "Lancet"), ("The", "Lancet"), ("Lancet", "of the"), ("Lancet", None)],
    ids=["none-cited", "only-stop-words-cited", "only-stop-words-recorded", "none-recorded"],
)
def test_an_absent_venue_check_keeps_both_sides(seen: str | None, expected: str | None) -> None:
    assert compare_venues(seen, expected) == FieldCheck("venue", "absent", seen, expected)


@pytest.mark.parametrize(
    ("seen", "expected"),
    [
        ("N Engl J Med", "The New England Journal of Medicine"),
        ("Science & Society", "Science and Society"),
    ],
    ids=["abbreviation", "ampersand-for-and"],
)
def test_an_abbreviated_venue_matches_without_a_score(seen: str, expected: str) -> None:
    assert compare_venues(seen, expected) == FieldCheck("venue", "match", seen, expected)


@pytest.mark.parametrize(
    ("seen", "expected", "words_seen", "words_expected"),
    [
        (
            "Journal of Clinical Epidemiolgy",
            "Journal of Clinical Epidemiology",
            "journal clinical epidemiolgy",
            "journal clinical epidemiology",
        ),
        ("Cardiology", "Cardiolgoy", "cardiology", "cardiolgoy"),
    ],
    ids=["ratio-98", "ratio-exactly-90"],
)
def test_a_misspelt_venue_matches_with_its_ratio_on_the_folded_words(
    seen: str, expected: str, words_seen: str, words_expected: str
) -> None:
    score = fuzz.ratio(words_seen, words_expected)
    assert score >= 90.0
    assert compare_venues(seen, expected) == FieldCheck("venue", "match", seen, expected, score)
