"""Text segments (audit/segments.py): word diffs, highlights, marked spans, excerpt windows."""

from __future__ import annotations

import itertools

from hypothesis import given, settings
from hypothesis import strategies as st

from audit.segments import Segment, highlight, marked_span, window, word_diff


def test_word_diff_marks_whole_words_and_keeps_spacing() -> None:
    assert word_diff("given once daily to 240 adults", "given twice daily to 236 adults") == (
        Segment("same", "given "),
        Segment("del", "once"),
        Segment("ins", "twice"),
        Segment("same", " daily to "),
        Segment("del", "240"),
        Segment("ins", "236"),
        Segment("same", " adults"),
    )


def test_word_diff_of_equal_texts_is_one_plain_segment() -> None:
    assert word_diff("a  b", "a  b") == (Segment("same", "a  b"),)


def test_word_diff_handles_pure_insertions_and_deletions() -> None:
    assert word_diff("a b", "a b c") == (Segment("same", "a b"), Segment("ins", " c"))
    assert word_diff("a b c", "a c") == (
        Segment("same", "a "),
        Segment("del", "b "),
        Segment("same", "c"),
    )


def test_highlight_marks_the_first_occurrence_only() -> None:
    assert highlight("no risk, no risk", "no risk") == (
        Segment("mark", "no risk"),
        Segment("same", ", no risk"),
    )
    assert highlight("text", "absent") == (Segment("same", "text"),)
    assert highlight("During 48\u00a0210 person-years.", "48 210 person-years") == (
        Segment("same", "During "),
        Segment("mark", "48\u00a0210 person-years"),
        Segment("same", "."),
    )
    assert highlight("a (b) c", "(b)") == (
        Segment("same", "a "),
        Segment("mark", "(b)"),
        Segment("same", " c"),
    )
    assert highlight("text", None) == (Segment("same", "text"),)
    assert highlight("", "x") == highlight("", None) == ()  # nothing to show: no segment


def test_marked_span_marks_exactly_the_span_and_ignores_one_outside_the_text() -> None:
    assert marked_span("abcdef", 2, 4) == (
        Segment("same", "ab"),
        Segment("mark", "cd"),
        Segment("same", "ef"),
    )
    assert marked_span("abc", 2, 9) == (Segment("same", "abc"),)
    assert marked_span("", 0, 1) == ()


def test_a_span_at_either_end_of_the_text_is_marked_and_an_empty_one_is_not() -> None:
    assert marked_span("abc", 0, 1) == (Segment("mark", "a"), Segment("same", "bc"))
    assert marked_span("abc", 2, 3) == (Segment("same", "ab"), Segment("mark", "c"))
    assert marked_span("abc", 0, 3) == (Segment("mark", "abc"),)
    assert marked_span("abc", 1, 1) == (Segment("same", "abc"),)
    assert marked_span("abc", -1, 2) == (Segment("same", "abc"),)


def test_window_cuts_segments_at_character_offsets() -> None:
    segments = marked_span("abcdef", 2, 4)
    assert window(segments, 1, 3) == (Segment("same", "b"), Segment("mark", "c"))
    assert "".join(s.text for s in window(segments, 0, 6)) == "abcdef"
    assert window(segments, 6, 9) == ()


_TOKENS = st.sampled_from(["a", "b", "cc", " ", "  ", "\n", "\u00a0", "a b"])


@settings(max_examples=300)
@given(
    old=st.lists(_TOKENS, max_size=10).map("".join), new=st.lists(_TOKENS, max_size=10).map("".join)
)
def test_a_word_diff_spells_both_texts_in_non_empty_runs_of_alternating_kinds(
    old: str, new: str
) -> None:
    diff = word_diff(old, new)
    assert all(s.text for s in diff)
    assert all(x.kind != y.kind for x, y in itertools.pairwise(diff))
    assert "".join(s.text for s in diff if s.kind != "ins") == old
    assert "".join(s.text for s in diff if s.kind != "del") == new
