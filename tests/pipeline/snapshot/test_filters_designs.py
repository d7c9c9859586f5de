"""The study-design table and rule (pipeline/snapshot/designs.py), without a snapshot."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from audit.errors import InputError
from pipeline.snapshot.designs import (
    BROADER,
    DESIGNS,
    OVERLAPS,
    TERMS,
    design_terms,
    parse_designs,
    relation,
)


def test_the_table_maps_distinct_lower_case_terms_onto_known_designs() -> None:
    terms = [term for term, _, _ in TERMS]
    assert len(terms) == len(set(terms))
    assert all(term == term.lower().strip() for term in terms)
    assert {design for _, design, _ in TERMS} <= set(DESIGNS)
    assert set(BROADER) | set(BROADER.values()) <= set(DESIGNS)
    assert all(pair <= set(DESIGNS) and len(pair) == 2 for pair in OVERLAPS)


@pytest.mark.parametrize(
    ("asked", "named", "expected"),
    [
        ("rct", "rct", 1),
        ("clinical-trial", "rct", 1),  # an RCT is a clinical trial
        ("clinical-study", "rct", 1),
        ("rct", "clinical-trial", None),  # a clinical trial may or may not be randomised
        ("cohort", "observational", None),
        ("systematic-review", "meta-analysis", None),  # overlapping
        ("meta-analysis", "review", None),
        ("rct", "observational", 0),
        ("review", "editorial", 0),
        ("case-report", "cohort", 0),
    ],
)
def test_a_named_design_admits_a_broader_ask_and_only_tells_nothing_about_a_narrower_one(
    asked: str, named: str, expected: int | None
) -> None:
    assert relation(asked, named) == expected


def test_terms_for_rct_admit_medline_rcts_and_leave_broader_trials_undecided() -> None:
    terms = design_terms(["rct"])
    assert set(terms.admit) == {
        "randomized controlled trial",
        "randomized controlled trial, veterinary",
    }
    assert "clinical trial, phase iii" in terms.undecided
    assert "clinical study" in terms.undecided
    assert "observational study" not in terms.undecided  # another design: rejects
    assert "journal article" not in terms.decided  # names no design


@given(st.lists(st.sampled_from(DESIGNS), min_size=1, max_size=4))
@settings(max_examples=100)
def test_a_term_is_at_most_one_of_admitting_and_undecided_and_both_name_a_design(
    asked: list[str],
) -> None:
    terms = design_terms(asked)
    assert not set(terms.admit) & set(terms.undecided)
    assert set(terms.admit) | set(terms.undecided) <= set(terms.decided)


@pytest.mark.parametrize(
    ("given_", "parsed"),
    [
        (["RCT"], ("rct",)),
        (["Systematic Review", "systematic_review"], ("systematic-review",)),
        ([" case-report ", "meta analysis"], ("case-report", "meta-analysis")),
    ],
)
def test_designs_are_read_forgiving_case_spaces_and_underscores(
    given_: list[str], parsed: tuple[str, ...]
) -> None:
    assert parse_designs("design", given_) == parsed


def test_too_many_designs_is_an_error_naming_the_limit() -> None:
    with pytest.raises(InputError) as caught:
        parse_designs("design", [*DESIGNS, "rct"])
    assert caught.value.message == f"design: at most {len(DESIGNS)} study designs, got 18"


@given(st.lists(st.text(max_size=20), max_size=3))
@settings(max_examples=150)
def test_parsing_designs_only_ever_returns_known_designs_or_raises_input_error(
    values: list[str],
) -> None:
    try:
        parsed = parse_designs("design", values)
    except InputError:
        return
    assert set(parsed) <= set(DESIGNS)
