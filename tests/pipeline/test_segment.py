"""The deterministic sentence splitter and chunker behind label/trial passage paths."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from pipeline.segment import (
    SEGMENTATION_VERSION,
    chunk_text,
    normalize_space,
    split_paragraphs,
    split_sentences,
)

SPLITS = [
    ("The dose is 2.5 mg. Take it daily.", ["The dose is 2.5 mg.", "Take it daily."]),
    ("Use e.g. Zentravir. Then stop.", ["Use e.g. Zentravir.", "Then stop."]),
    ("Smith et al. Reported it first.", ["Smith et al. Reported it first."]),
    ("In the U.S. The rate is 5%. Stop.", ["In the U.S. The rate is 5%.", "Stop."]),
    ("Dr. Farrow saw J. Smith today.", ["Dr. Farrow saw J. Smith today."]),
    ("Contains D&C Red No. 6 dye. Store cool.", ["Contains D&C Red No. 6 dye.", "Store cool."]),
    (
        "Bleeding can occur [see Warnings (5.1) ]. • Monitor INR. • Stop if needed.",
        ["Bleeding can occur [see Warnings (5.1) ].", "• Monitor INR.", "• Stop if needed."],
    ),
    ("Is it safe? Yes! It is.", ["Is it safe?", "Yes!", "It is."]),
    ('He said "Stop." Then left.', ['He said "Stop."', "Then left."]),
    (
        "See section 5.1 for details. 12 patients died.",
        ["See section 5.1 for details.", "12 patients died."],
    ),
    ("the value was 3. and then lower", ["the value was 3. and then lower"]),
    ("Wait... Then go.", ["Wait...", "Then go."]),
    ("  spaced \n\n out.  Next  one. ", ["spaced out.", "Next one."]),
    ("", []),
]


@pytest.mark.parametrize(("text", "expected"), SPLITS)
def test_split_sentences(text: str, expected: list[str]) -> None:
    assert split_sentences(text) == expected


def test_version_is_recorded_as_a_string() -> None:
    assert SEGMENTATION_VERSION == "1"


def test_chunks_pack_whole_sentences_up_to_the_bound() -> None:
    text = "Alpha beta gamma. Delta epsilon. Zeta eta theta iota."
    assert chunk_text(text, 35) == ["Alpha beta gamma. Delta epsilon.", "Zeta eta theta iota."]
    assert chunk_text(text, 1200) == [text]


def test_an_over_long_sentence_is_cut_at_spaces_and_a_long_word_hard() -> None:
    assert chunk_text("aaa bbb ccc ddd.", 8) == ["aaa bbb", "ccc ddd."]
    assert chunk_text("abcdefghij kl", 4) == ["abcd", "efgh", "ij", "kl"]


def test_blank_text_has_no_chunks() -> None:
    assert chunk_text(" \n\t ") == []


def test_chunk_bound_must_be_positive() -> None:
    with pytest.raises(ValueError) as info:
        chunk_text("x", 0)
    assert str(info.value) == "max_chars must be at least 1"


def test_paragraphs_are_split_on_blank_lines() -> None:
    assert split_paragraphs("One\nline.\n\n  \nTwo.\n") == ["One line.", "Two."]


_PIECES = [*'abcXYZ019 .!?"()•\n\t,;', "e.g.", "U.S.", "et al.", "No. ", ". A"]
_TEXT = st.lists(st.sampled_from(_PIECES), max_size=150).map("".join)


@given(_TEXT)
def test_sentences_rebuild_the_normalised_text(text: str) -> None:
    sentences = split_sentences(text)
    assert " ".join(sentences) == normalize_space(text)
    assert all(s and s == s.strip() for s in sentences)


@given(_TEXT, st.integers(min_value=1, max_value=80))
def test_chunks_are_bounded_substrings_in_order(text: str, size: int) -> None:
    chunks = chunk_text(text, size)
    norm = normalize_space(text)
    assert all(0 < len(c) <= size for c in chunks)
    assert "".join(chunks).replace(" ", "") == norm.replace(" ", "")
    if all(len(word) <= size for word in norm.split(" ")):
        assert " ".join(chunks) == norm  # only a word longer than the bound is cut inside
    assert chunk_text(text, size) == chunks  # deterministic
