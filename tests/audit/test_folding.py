"""Text folding (DESIGN.md §3): exactly the documented folds, nothing else, idempotent."""

from __future__ import annotations

import re
import sys
import unicodedata

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from audit.folding import (
    DASHES,
    DOUBLE_QUOTES,
    FOLD_TABLE,
    INVISIBLE,
    NO_BREAK_SPACES,
    SINGLE_QUOTES,
    fold,
    spaced,
)


@pytest.mark.parametrize("dash", list(DASHES))
def test_every_dash_and_minus_folds_to_hyphen(dash: str) -> None:
    assert fold(f"person{dash}years") == "person-years"


@pytest.mark.parametrize("mark", list(SINGLE_QUOTES))
def test_every_single_quote_apostrophe_and_prime_folds_to_apostrophe(mark: str) -> None:
    assert fold(f"children{mark}s") == "children's"


@pytest.mark.parametrize("mark", list(DOUBLE_QUOTES))
def test_every_double_quote_and_double_prime_folds_to_quote(mark: str) -> None:
    assert fold(f"{mark}safe{mark}") == '"safe"'


@pytest.mark.parametrize("space", list(NO_BREAK_SPACES))
def test_no_break_spaces_fold_to_space(space: str) -> None:
    assert fold(f"48{space}210") == "48 210"


@pytest.mark.parametrize("char", list(INVISIBLE))
def test_invisible_characters_are_removed(char: str) -> None:
    assert fold(f"zen{char}travir") == "zentravir"


@pytest.mark.parametrize(
    ("text", "folded"),
    [
        ("wait\u2026", "wait..."),
        ("5\u2034", "5'''"),
        ("  a \t\n b  ", "a b"),
        ("a\u00a0 b", "a b"),  # no-break space folded before whitespace runs collapse
        ("a \u200b b", "a b"),  # invisible removed before whitespace runs collapse
        ("\u200b a", "a"),
        ("a\u3000b\u2003c", "a b c"),  # other Unicode spaces are whitespace
        ("cafe\u0301", "caf\u00e9"),  # NFC
        ("e\u200b\u0301", "\u00e9"),  # NFC again after removing the invisible character
        ("\u2126", "\u03a9"),  # NFC singleton (ohm sign → omega)
        ("", ""),
        ("\u00ad\u200b", ""),
    ],
)
def test_examples(text: str, folded: str) -> None:
    assert fold(text) == folded


@pytest.mark.parametrize(
    "text",
    [
        "Zentravir",  # case
        "zentravir",
        "café",  # accents
        "naïve",
        "10 mg",  # digits and units
        "10 µg",
        "10 μg",  # micro sign and mu stay different (NFC keeps them apart)
        "m²",  # superscripts
        "CO₂",
        "p ≤ 0.05",  # comparison signs
        "p < 0.05",
        "≥",
        "x\u0060y",  # backtick and acute accent are not quote marks
        "x\u00b4y",
        "a.b,c;d:e!f?g",  # other punctuation
        "ﬁ",  # compatibility ligatures: NFC only, not NFKC
        "½",
    ],
)
def test_nothing_else_is_folded(text: str) -> None:
    assert fold(text) == unicodedata.normalize("NFC", text)


def test_distinct_meanings_stay_distinct() -> None:
    assert fold("p ≤ 0.05") != fold("p < 0.05")
    assert fold("Zentravir") != fold("zentravir")
    assert fold("m²") != fold("m2")


def test_fold_table_only_maps_the_documented_sets() -> None:
    documented = set(DASHES + SINGLE_QUOTES + DOUBLE_QUOTES + NO_BREAK_SPACES + INVISIBLE)
    documented |= {"\u2026", "\u2034", "\u2037"}
    assert {chr(code) for code in FOLD_TABLE} == documented


_TRICKY = st.sampled_from(
    [
        *DASHES,
        *SINGLE_QUOTES,
        *DOUBLE_QUOTES,
        *NO_BREAK_SPACES,
        *INVISIBLE,
        "\u2026",
        "\u2034",
        " ",
        "\t",
        "\n",
        "e",
        "\u0301",
        "\u0327",
        "A",
        "\u212b",
        "\u2126",
        "\u1e0b\u0323",
    ]
)


@settings(max_examples=200, deadline=None)
@given(st.text(max_size=60) | st.lists(_TRICKY, max_size=30).map("".join))
def test_fold_is_idempotent(text: str) -> None:
    once = fold(text)
    assert fold(once) == once
    assert once == once.strip()
    assert "  " not in once


def test_the_whitespace_step_splits_on_what_the_regex_whitespace_class_matches() -> None:
    """``spaced`` splits on ``str.isspace``; the step it replaced substituted ``\\s+``: the
    same characters, every code point checked."""
    pattern = re.compile(r"\s")
    assert all(
        (pattern.match(chr(code)) is not None) == chr(code).isspace()
        for code in range(sys.maxunicode + 1)
    )


@given(st.text(max_size=60) | st.lists(_TRICKY, max_size=30).map("".join))
def test_the_whitespace_step_is_one_space_per_run_trimmed(text: str) -> None:
    assert spaced(text) == re.sub(r"\s+", " ", text).strip()
