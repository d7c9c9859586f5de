"""Look-alike skeletons: what maps to what, spans back to the source, the exact messages."""

from __future__ import annotations

import html
from collections.abc import Callable

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from audit.errors import CitationSyntaxError
from audit.lookalikes import (
    Skeleton,
    ascii_of,
    reference_at,
    require_ascii,
    require_plain,
    skeleton,
)

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
    assert skel == Skeleton(source=HANDLE, text=HANDLE, origin=None, ends=None)
    assert skel.span(0, 4) == (0, 4)


def test_each_skeleton_character_names_the_source_character_it_comes_from() -> None:
    skel = skeleton("\u0440mid:9")  # a Cyrillic er, then ASCII to the end of the text
    assert skel == Skeleton(
        source="\u0440mid:9",
        text="pmid:9",
        origin=(0, 1, 2, 3, 4, 5),
        ends=(1, 2, 3, 4, 5, 6),
    )


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
        (
            "pmid:1\u00a0/x~abcde",  # NFKD makes it a space, which is no look-alike of anything
            "non-ASCII character '\\xa0' (U+00A0 NO-BREAK SPACE) at character 7 of the handle; a "
            "handle is plain ASCII",
        ),
    ],
    ids=[
        "fullwidth",
        "cyrillic",
        "zero-width-space",
        "bidi-override",
        "combining",
        "cjk",
        "lone",
        "no-break-space",
    ],
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
    if skel.origin is not None:  # one source span per skeleton character
        assert len(skel.origin) == len(skel.ends or ()) == len(skel.text)
    for start in range(len(skel.text)):
        first, last = skel.span(start, start + 1)
        assert 0 <= first < last <= len(text)
        if start:
            assert skel.span(start - 1, start)[0] <= first


# --- markup a renderer does not show as written: escapes, character references, markers ------


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("pmid\\:99/a~b", "pmid:99/a~b"),  # Markdown escape
        ("pmid\\\\:9", "pmid\\:9"),  # an escaped backslash is a backslash
        ("pmid\\x", "pmid\\x"),  # a backslash before a letter is a backslash
        ("pmid&#58;9", "pmid:9"),  # decimal reference
        ("pmid&#x3A;9&#X3a;", "pmid:9:"),  # hexadecimal
        ("pmid&colon;9&sol;a", "pmid:9/a"),  # HTML5 names
        ("&#112;mid&#58", "pmid:"),  # a numeric reference needs no ';'
        ("AT&amp;T &ampmid", "AT&T &mid"),  # legacy names need none either (html.unescape)
        ("&#x440;mid:9", "pmid:9"),  # a reference to a look-alike: mapped like one
        ("pm&#8203;id:9", "pmid:9"),  # a reference to an invisible character: dropped
        ("&zz; &colon\\:", "&zz; &colon:"),  # no such name: the text stays
        ("x&ampy a&ltb", "x&y a<b"),  # the legacy name one shorter than the run; a 2-letter one
        ("&fjlig;ord", "fjord"),  # a reference to two characters stands for both
        ("pm**id**:9", "pmid:9"),  # strong markers inside a token
        ("pm*i*d:9 pm`id`:9", "pmid:9 pmid:9"),  # emphasis and code markers
        ("**pmid:9** `pmid:9` a * b", "**pmid:9** `pmid:9` a * b"),  # around a token: kept
        ("pmid:9**.", "pmid:9."),  # between the token and its full stop
    ],
)
def test_the_skeleton_reads_markup_as_a_renderer_shows_it(text: str, expected: str) -> None:
    assert skeleton(text).text == expected


def test_an_escape_or_a_reference_maps_back_whole() -> None:
    skel = skeleton("see pmid&#58;9\\/a&colon; x")
    assert skel.text == "see pmid:9/a: x"
    assert skel.span(4, 13) == (4, 24)  # "pmid:9/a:" is "pmid&#58;9\\/a&colon;"
    assert skel.span(8, 9) == (8, 13)  # the ':' is "&#58;"
    skel = skeleton("x pm**id**:9 y")
    assert (skel.text, skel.span(2, 8)) == ("x pmid:9 y", (2, 12))


@settings(max_examples=500, deadline=None)
@given(
    st.lists(
        st.sampled_from(
            ["&", "#", "x", "3A", "58", ";", "amp", "colon", "not", "it", "a", " ", "\\", "&#"]
        ),
        max_size=20,
    ).map("".join)
)
def test_references_are_read_with_html_unescape_semantics(text: str) -> None:
    parts: list[str] = []
    at = 0
    while at < len(text):
        found = reference_at(text, at) if text[at] == "&" else None
        if found is None:
            parts.append(text[at])
            at += 1
        else:
            parts.append(found[0])
            at = found[1]
    assert "".join(parts) == html.unescape(text)


_MARKUP_PIECES = st.sampled_from(
    [
        *("p", "m", "9", ":", "/", "~", " ", "*", "**", "`", "\\", "\\:", "&"),
        *("&#58;", "&colon;", "&#x301;", "&not", "\u0440", "\u200b", "\u0301"),
    ]
)


@settings(max_examples=300, deadline=None)
@given(st.lists(_MARKUP_PIECES, max_size=30).map("".join))
def test_skeleton_spans_of_markup_stay_in_bounds_and_in_order(text: str) -> None:
    skel = skeleton(text)
    if skel.origin is not None:  # one source span per skeleton character
        assert len(skel.origin) == len(skel.ends or ()) == len(skel.text)
    for start in range(len(skel.text)):
        first, last = skel.span(start, start + 1)
        assert 0 <= first < last <= len(text)
        if start:
            assert skel.span(start - 1, start)[0] <= first


@pytest.mark.parametrize(
    ("handle", "message"),
    [
        (
            "pmid\\:99000001/abstract.3~awhr1",
            "Markdown escape '\\:' at character 5 of the handle, expected ':'",
        ),
        (
            "pmid:99000001/abstract\\.3~awhr1",
            "Markdown escape '\\.' at character 23 of the handle, expected '.'",
        ),
        (
            "pmid&#58;99000001/abstract.3~awhr1",
            "character reference '&#58;' at character 5 of the handle, expected ':'",
        ),
        (
            "pmid&colon;99000001/abstract.3~awhr1",
            "character reference '&colon;' at character 5 of the handle, expected ':'",
        ),
        (
            "&#x70;mid:99000001/abstract.3~awhr1",
            "character reference '&#x70;' at character 1 of the handle, expected 'p'",
        ),
        (
            "pm&#8203;id:99000001/abstract.3~awhr1",
            "character reference '&#8203;' (U+200B ZERO WIDTH SPACE) at character 3 of the "
            "handle; a handle is plain ASCII",
        ),
        (
            "pmid:99000001/&notit;abstract.3~awhr1",
            "character reference '&not' (U+00AC NOT SIGN) at character 15 of the handle; a "
            "handle is plain ASCII",
        ),
        (
            "pm**id**:99000001/abstract.3~awhr1",
            "emphasis marker '**' at character 3 of the handle; a handle is written without "
            "Markdown",
        ),
        (
            "pm`id`:99000001/abstract.3~awhr1",
            "code marker '`' at character 3 of the handle; a handle is written without Markdown",
        ),
        (
            "pmid&#32;99000001/abstract.3~awhr1",  # a space is ASCII, yet no handle character
            "character reference '&#32;' (U+0020 SPACE) at character 5 of the handle; a handle "
            "is plain ASCII",
        ),
        (
            "&fjlig;mid:99000001/abstract.3~awhr1",
            "character reference '&fjlig;' at character 1 of the handle; a handle is plain ASCII",
        ),
        (
            "pmid:9&9/abstract\\.3~awhr1",  # a bare '&' is the grammar's to name, not the end
            "Markdown escape '\\.' at character 18 of the handle, expected '.'",
        ),
        (
            "p\u0440mid&#58;9",  # the first offence is named, whatever its kind
            "look-alike character '\u0440' (U+0440 CYRILLIC SMALL LETTER ER) at character 2 of "
            "the handle, expected 'p'",
        ),
    ],
    ids=[
        "escape-colon",
        "escape-dot",
        "decimal",
        "named",
        "hex-letter",
        "invisible",
        "legacy-name",
        "strong",
        "code",
        "space",
        "two-characters",
        "after-a-bare-ampersand",
        "first-wins",
    ],
)
def test_require_plain_names_the_first_markup_or_non_ascii_character(
    handle: str, message: str
) -> None:
    with pytest.raises(CitationSyntaxError) as caught:
        require_plain(handle)
    assert caught.value.message == message
    assert caught.value.start + 1 == int(message.split(" at character ")[1].split()[0])


def test_require_plain_passes_a_plain_handle_and_a_bare_ampersand() -> None:
    require_plain(HANDLE)  # returns without raising
    require_plain("pmid:9&9/x~y")  # no reference: the grammar names the '&'


@pytest.mark.parametrize(
    ("check", "handle", "start", "end", "expected"),
    [
        (require_ascii, "\uff50mid:99000001/abstract.3~awhr0", 0, 1, "'p'"),
        (require_ascii, "pm\u200bid:99000001/abstract.3~awhr0", 2, 3, "ASCII"),
        (require_ascii, "pmid:9\u03010/abstract.3~awhr0", 6, 7, "ASCII"),
        (require_ascii, "pmid:99000001/\u4e2d~awhr0", 14, 15, "ASCII"),
        (require_plain, "pmid:9\u0440/abstract.3~awhr0", 6, 7, "'p'"),
        (require_plain, "pmid\\:99000001/abstract.3~awhr1", 4, 6, "':'"),
        (require_plain, "pmid&#58;99000001/abstract.3~awhr1", 4, 9, "':'"),
        (require_plain, "pm&#8203;id:99000001/abstract.3~awhr1", 2, 9, "ASCII"),
        (require_plain, "&fjlig;mid:99000001/abstract.3~awhr1", 0, 7, "ASCII"),
        (require_plain, "pm**id**:99000001/abstract.3~awhr1", 2, 4, "no markup"),
        (require_plain, "pm`id`:99000001/abstract.3~awhr1", 2, 3, "no markup"),
    ],
    ids=[
        "look-alike",
        "invisible",
        "combining",
        "non-ascii",
        "plain-look-alike",
        "escape",
        "reference",
        "invisible-reference",
        "two-character-reference",
        "strong",
        "code",
    ],
)
def test_the_error_spans_the_offending_text_and_says_what_belongs_there(
    check: Callable[[str], None], handle: str, start: int, end: int, expected: str
) -> None:
    with pytest.raises(CitationSyntaxError) as caught:
        check(handle)
    error = caught.value
    assert (error.text, error.start, error.end, error.expected) == (handle, start, end, expected)
