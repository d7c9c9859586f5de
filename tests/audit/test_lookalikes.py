"""Look-alike skeletons: what maps to what, spans back to the source, the exact messages."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from audit.errors import CitationSyntaxError
from audit.lookalikes import ascii_of, require_ascii, skeleton

HANDLE = "pmid:99000001/abstract.3~awhr0"


@pytest.mark.parametrize(
    ("char", "expected"),
    [
        ("\uff50", "p"),  # fullwidth p (NFKD)
        ("\U0001d429", "p"),  # mathematical bold p (NFKD)
        ("\u0440", "p"),  # Cyrillic er (table)
        ("\u03bf", "o"),  # Greek omicron (table)
        ("\u0456", "i"),  # Cyrillic byelorussian-ukrainian i (table)
        ("\ua4d1", "P"),  # Lisu pa (table)
        ("\u13a0", "D"),  # Cherokee a (table)
        ("\u00ed", "i"),  # i with acute (NFKD without the mark)
        ("\u0669", "9"),  # Arabic-Indic nine (decimal value)
        ("\u096b", "5"),  # Devanagari five (decimal value)
        ("\uff1a", ":"),  # fullwidth colon (NFKD)
        ("\u2236", ":"),  # ratio (table)
        ("\u2215", "/"),  # division slash (table)
        ("\u223c", "~"),  # tilde operator (table)
        ("\u2013", "-"),  # en dash (the folding dashes)
        ("\u3002", "."),  # ideographic full stop (table)
        ("\u00a0", " "),  # no-break space
        ("\u200b", ""),  # zero-width space (Cf)
        ("\u202e", ""),  # right-to-left override (Cf)
        ("\u0301", ""),  # combining acute accent (M)
        ("\u3164", ""),  # Hangul filler (default ignorable)
        ("\u4e2d", "\u4e2d"),  # an ideograph imitates nothing
    ],
)
def test_ascii_of_maps_each_lookalike_to_the_ascii_it_imitates(char: str, expected: str) -> None:
    assert ascii_of(char) == expected


def test_ascii_text_is_its_own_skeleton() -> None:
    skel = skeleton(HANDLE)
    assert (skel.text, skel.origin, skel.span(0, 4)) == (HANDLE, None, (0, 4))


def test_skeleton_spans_map_back_over_dropped_and_expanded_characters() -> None:
    text = "see p\u200bmid:9\ufe0f/a\u2026 ok"
    skel = skeleton(text)
    assert skel.text == "see pmid:9/a... ok"
    assert skel.span(4, 12) == (4, 14)  # "p…a" in the skeleton is "p\u200bmid:9\ufe0f/a"
    assert skel.span(4, 13) == (4, 15)  # a span ending inside "..." ends after the ellipsis


def test_a_combining_mark_after_a_span_belongs_to_it() -> None:
    skel = skeleton("x awhr0\u0301 y")
    assert skel.text == "x awhr0 y"
    assert skel.span(2, 7) == (2, 8)


@pytest.mark.parametrize(
    ("handle", "message"),
    [
        (
            "\uff50\uff4d\uff49\uff44:99000001/abstract.3~awhr0",
            "look-alike character '\uff50' (U+FF50 FULLWIDTH LATIN SMALL LETTER P) at character 1 "
            "of the handle, expected 'p'",
        ),
        (
            "pmid:99000001/abstr\u0430ct.3~awhr0",
            "look-alike character '\u0430' (U+0430 CYRILLIC SMALL LETTER A) at character 20 of "
            "the handle, expected 'a'",
        ),
        (
            "pm\u200bid:99000001/abstract.3~awhr0",
            "invisible character U+200B ZERO WIDTH SPACE at character 3 of the handle; a handle "
            "is plain ASCII",
        ),
        (
            "pmid:99000001/abstract.3~\u202e0rhwa",
            "invisible character U+202E RIGHT-TO-LEFT OVERRIDE at character 26 of the handle; a "
            "handle is plain ASCII",
        ),
        (
            "pmid:9\u03010/abstract.3~awhr0",
            "combining mark U+0301 COMBINING ACUTE ACCENT at character 7 of the handle; a handle "
            "is plain ASCII",
        ),
        (
            "pmid:99000001/\u4e2d~awhr0",
            "non-ASCII character '\u4e2d' (U+4E2D CJK UNIFIED IDEOGRAPH-4E2D) at character 15 of "
            "the handle; a handle is plain ASCII",
        ),
        (
            "pmid:1\ud800/a~abcde",
            "non-ASCII character '\\ud800' (U+D800) at character 7 of the handle; a handle is "
            "plain ASCII",
        ),
    ],
    ids=["fullwidth", "cyrillic", "zero-width-space", "bidi-override", "combining", "cjk", "lone"],
)
def test_require_ascii_names_the_first_non_ascii_character(handle: str, message: str) -> None:
    with pytest.raises(CitationSyntaxError) as caught:
        require_ascii(handle)
    assert caught.value.message == message
    assert caught.value.start + 1 == int(message.split(" at character ")[1].split()[0])


def test_require_ascii_passes_ascii() -> None:
    require_ascii(HANDLE)  # returns without raising


@settings(max_examples=300, deadline=None)
@given(st.text(max_size=60))
def test_skeleton_spans_stay_in_bounds_and_in_order(text: str) -> None:
    skel = skeleton(text)
    for start in range(len(skel.text)):
        first, last = skel.span(start, start + 1)
        assert 0 <= first < last <= len(text)
        if start:
            assert skel.span(start - 1, start)[0] <= first
