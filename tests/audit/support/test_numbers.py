"""The number reader of the rules judge: ratios with their intervals, and figures with their
units, in a whole text or a window of it (how figures compare is in test_rules.py)."""

from __future__ import annotations

import pytest

from audit.support.numbers import Quantity, Ratio, quantities, ratios


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        (
            "the hazard\nratio was 0.71 (95% CI 0.60–0.84)",
            Ratio(4, 43, "hazard ratio", 0.71, 0.60, 0.84),  # the kind in lower case, one space
        ),
        ("HR 2,5 (1,2-4,1)", Ratio(0, 15, "hr", 2.5, 1.2, 4.1)),  # decimal commas
        ("HR 1.00 (1.00–1.00)", Ratio(0, 18, "hr", 1.0, 1.0, 1.0)),  # rounded to a point
    ],
)
def test_a_ratio_reads_its_kind_estimate_and_interval(text: str, expected: Ratio) -> None:
    assert ratios(text) == [expected]


def test_a_reversed_interval_is_no_ratio_and_the_ones_after_it_are_read() -> None:
    assert ratios("OR 2.0 (3.0-1.0); RR 0.5 (0.3-0.8)") == [Ratio(18, 33, "rr", 0.5, 0.3, 0.8)]


def test_ratios_are_read_only_within_the_window() -> None:
    text = "OR 1.5 (1.2-1.9) and RR 0.5 (0.3-0.8)"
    assert ratios(text, 0, 16) == [Ratio(0, 15, "or", 1.5, 1.2, 1.9)]
    assert ratios(text, 17) == [Ratio(21, 36, "rr", 0.5, 0.3, 0.8)]


def test_figures_are_read_only_within_the_window() -> None:
    text = "10 mg, then 20 mg"
    assert quantities(text, 0, 5) == [Quantity(0, 5, 10.0, "mg", None)]
    assert quantities(text, 6) == [Quantity(12, 17, 20.0, "mg", None)]


def test_a_unit_is_read_in_its_one_spelling() -> None:
    assert quantities("12 patients, 3 days, 1,5 mg") == [
        Quantity(0, 11, 12.0, "people", None),
        Quantity(13, 19, 3.0, "day", None),
        Quantity(21, 27, 1.5, "mg", None),
    ]


def test_a_number_without_a_unit_is_no_figure_and_the_ones_after_it_are_read() -> None:
    assert quantities("3 of 10 patients") == [Quantity(5, 16, 10.0, "people", None)]


def test_a_ratios_upper_bound_with_a_unit_is_no_figure() -> None:
    assert quantities("odds ratio 2.5 (1.5-4.0 fold), with 20 mg") == [
        Quantity(36, 41, 20.0, "mg", None)
    ]


@pytest.mark.parametrize("ci", ["95% CI", "95% ci", "95 % confidence interval"])
def test_the_95_percent_of_a_confidence_interval_is_no_figure(ci: str) -> None:
    text = f"weight fell by 4.2 kg ({ci} 3.1 to 5.3) at 12 weeks"
    end = len(text)
    assert quantities(text) == [
        Quantity(15, 21, 4.2, "kg", None),
        Quantity(end - 8, end, 12.0, "week", None),
    ]


def test_the_95_percent_of_a_confidence_interval_broken_over_lines_is_no_figure() -> None:
    assert quantities("4.2 kg (95 %\n\n   confidence interval 3.1 to 5.3)") == [
        Quantity(0, 6, 4.2, "kg", None)
    ]


@pytest.mark.parametrize("text", ["30 % cigarette smokers", "30 % cirrhosis", "30 % CIN2+"])
def test_a_percent_before_a_word_that_begins_with_ci_is_a_figure(text: str) -> None:
    assert quantities(text) == [Quantity(0, 4, 30.0, "%", None)]


def test_a_unit_is_spelt_in_ascii_letters_in_any_case() -> None:
    # the long s, the dotless i and the Kelvin sign fold to s, i and k only under Unicode rules
    assert quantities("3 DAYS, 4 Kg, 3 day\u017f, 4 \u212ag, 5 pat\u0131ents") == [
        Quantity(0, 6, 3.0, "day", None),
        Quantity(8, 12, 4.0, "kg", None),
    ]
