"""audit.references.compare: one test per rule of the metadata comparison."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from audit.references.compare import (
    abbreviates,
    compare_authors,
    compare_titles,
    compare_venues,
    compare_years,
    fold_title,
    surname_key,
)

TITLE = "A synthetic cohort of vitamin X in adults: ten-year outcomes"


@pytest.mark.parametrize(
    "seen",
    [
        TITLE,
        "A Synthetic Cohort of Vitamin X in Adults - Ten-Year Outcomes.",
        "A synthétic cohort of vitamin X in adults: ten year outcomes",
        "A synthetic cohort of vitamin X in adult: ten-year outcomes",
    ],
    ids=["same", "case-and-punctuation", "accents-and-hyphens", "one-letter-typo"],
)
def test_titles_match_across_case_punctuation_accents_and_typos(seen: str) -> None:
    assert compare_titles(seen, TITLE).outcome == "match"


def test_a_main_title_without_its_subtitle_matches() -> None:
    assert compare_titles("A synthetic cohort of vitamin X in adults", TITLE).outcome == "match"
    record = "Vitamin Z and liver injury in mice (preprint)"
    assert compare_titles("Vitamin Z and liver injury in mice", record).outcome == "match"


def test_two_different_subtitles_of_one_main_title_do_not_match() -> None:
    other = "A synthetic cohort of vitamin X in adults: a protocol for a feasibility study"
    assert compare_titles(other, TITLE).outcome != "match"


def test_a_short_leading_part_is_no_subtitle_match() -> None:
    assert compare_titles("A synthetic", TITLE).outcome == "other"


def test_word_order_counts_in_titles() -> None:
    shuffled = "Ten-year outcomes in adults: vitamin X of a synthetic cohort"
    assert compare_titles(shuffled, TITLE).outcome != "match"


def test_a_near_miss_title_differs_and_another_title_is_other() -> None:
    near = compare_titles("A synthetic cohort of vitamin Y in children: five-year outcomes", TITLE)
    assert near.outcome == "differs"
    far = compare_titles("Quantum effects of vitamin W on bone density", TITLE)
    assert far.outcome == "other"
    assert far.score is not None and far.score < 60


def test_a_missing_title_is_absent_never_evidence() -> None:
    assert compare_titles(None, TITLE).outcome == "absent"
    assert compare_titles(TITLE, None).outcome == "absent"


@pytest.mark.parametrize(
    ("name", "key"),
    [
        ("Smith AB", "smith"),
        ("Smith, A. B.", "smith"),
        ("A. B. Smith", "smith"),
        ("Anna Smith", "smith"),
        ("Smith A. B.", "smith"),
        ("Müller J", "muller"),
        ("Muller J", "muller"),
        ("van der Berg K", "berg"),
        ("Berg K van der", "berg"),
        ("Karin van der Berg", "berg"),
        ("de la Cruz, A.", "cruz"),
        ("Farrow Trial Group (fictional)", "farrowtrialgroup"),
        ("et al.", None),
        ("et al", None),
    ],
)
def test_surname_keys_fold_accents_particles_initials_and_et_al(name: str, key: str | None) -> None:
    assert surname_key(name) == key


def test_authors_match_on_the_first_author_and_ignore_et_al() -> None:
    check = compare_authors(("Berg K van der", "et al."), ("van der Berg K", "Müller J"))
    assert check.outcome == "match"
    assert check.seen == "Berg K van der; et al."
    assert check.expected == "van der Berg K; Müller J"


def test_swapped_authors_differ_and_strangers_are_other() -> None:
    assert compare_authors(("Roe R", "Doe J"), ("Doe J", "Roe R")).outcome == "differs"
    assert compare_authors(("Zed Q",), ("Doe J", "Roe R")).outcome == "other"
    assert compare_authors((), ("Doe J",)).outcome == "absent"


@pytest.mark.parametrize(
    ("seen", "outcome"), [(2020, "match"), (2021, "match"), (2019, "match"), (2022, "differs")]
)
def test_years_match_within_one_for_online_first(seen: int, outcome: str) -> None:
    assert compare_years(seen, 2020).outcome == outcome


def test_a_missing_year_is_absent() -> None:
    assert compare_years(None, 2020).outcome == "absent"


@pytest.mark.parametrize(
    ("short", "full"),
    [
        ("N Engl J Med", "The New England Journal of Medicine"),
        ("J Synth Med", "Journal of Synthetic Medicine"),
        ("J. Synth. Med.", "Journal of Synthetic Medicine"),
        ("Synth Rev Geriatr", "Synthetic Reviews in Geriatrics"),
        ("Proc Synth Soc", "Proceedings of the Synthetic Society"),
    ],
)
def test_journal_abbreviations_match_their_full_names(short: str, full: str) -> None:
    assert abbreviates(short, full)
    assert compare_venues(short, full).outcome == "match"
    assert compare_venues(full, short).outcome == "match"


def test_another_journal_differs() -> None:
    assert not abbreviates("J Synth Phys", "Journal of Synthetic Medicine")
    check = compare_venues("Invented Journal of Physics", "Journal of Synthetic Medicine")
    assert (check.outcome, check.seen, check.expected) == (
        "differs",
        "Invented Journal of Physics",
        "Journal of Synthetic Medicine",
    )


@given(st.text(max_size=80))
def test_fold_title_is_idempotent(text: str) -> None:
    assert fold_title(fold_title(text)) == fold_title(text)


@given(st.text(max_size=60), st.text(max_size=60))
def test_comparisons_never_raise(a: str, b: str) -> None:
    compare_titles(a, b)
    compare_authors((a,), (b,))
    compare_venues(a, b)
    surname_key(a)
