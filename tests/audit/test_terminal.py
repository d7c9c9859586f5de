"""The one terminal sanitiser: what it escapes, what it keeps, and that JSON survives it."""

from __future__ import annotations

import json
import re
import unicodedata

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from audit.terminal import (
    caret_lines,
    display_width,
    escape,
    html_text,
    is_unsafe,
    one_line,
    terminal_lines,
)

UNSAFE_CATEGORIES = {"Cc", "Cf", "Cs", "Co", "Cn", "Zl", "Zp"}
FILLERS = "\u115f\u1160\u3164\uffa0"


def unsafe_in(text: str, allowed: str = "") -> list[str]:
    """The characters of ``text`` a terminal must not receive (by category, not by our code)."""
    return [
        c
        for c in text
        if c not in allowed and (unicodedata.category(c) in UNSAFE_CATEGORIES or c in FILLERS)
    ]


@pytest.mark.parametrize(
    ("text", "shown"),
    [
        ("red \x1b[31mX\x1b[0m", "red \\u001b[31mX\\u001b[0m"),  # an ANSI colour
        ("\x1b]0;pwned\x07title", "\\u001b]0;pwned\\u0007title"),  # sets the window title
        ("\x9b2J", "\\u009b2J"),  # C1 CSI: clears the screen on some terminals
        ("ok\u202edegrof", "ok\\u202edegrof"),  # right-to-left override
        ("a\u2066b\u2069c\u200fd\u061ce", "a\\u2066b\\u2069c\\u200fd\\u061ce"),  # isolates, marks
        ("in\u200bvisible\u00adsoft\ufeff", "in\\u200bvisible\\u00adsoft\\ufeff"),
        ("tag\U000e0041", "tag\\udb40\\udc41"),  # tag characters hide text in plain sight
        ("fill\u3164er", "fill\\u3164er"),  # a Hangul filler draws nothing
        ("bad\udcffname", "bad\\udcffname"),  # a lone surrogate (a non-UTF-8 file name)
        ("private\ue000", "private\\ue000"),
        ("line\nbreak\r\n\tand\u2028more", "line break and more"),
    ],
)
def test_unsafe_characters_are_made_visible(text: str, shown: str) -> None:
    assert one_line(text) == shown


@pytest.mark.parametrize(
    "text",
    [
        "Zentravir does not increase the risk (HR 0.82; 95% CI 0.61–1.10).",
        "Müller, Ærø, São Paulo, naïve café, Dvořák",
        "中文 日本語 한국어 ελληνικά русский עברית العربية",
        "emoji 😀 and a ZWJ-free flag 🇫🇷, combining é (e + U+0301)",
        "no-break\u00a0space, em\u2003space, ideographic\u3000space",
        "≤ ≥ µg μg m² ½ ‰ † ‡ § ¶ “quotes” ‘single’ «guillemets»",
    ],
)
def test_ordinary_text_passes_unchanged(text: str) -> None:
    assert one_line(text) == text
    assert terminal_lines(text) == text
    assert html_text(text) == text


def test_escapes_are_spelled_as_in_json() -> None:
    assert escape("\x1b") == "\\u001b"
    assert escape("\u202e") == "\\u202e"
    assert escape("\U000e0041") == "\\udb40\\udc41"
    assert json.loads('"' + escape("\U000e0041") + '"') == "\U000e0041"


def test_terminal_lines_keep_line_feeds_and_escape_the_rest() -> None:
    assert terminal_lines("one\x1b[2K\ntwo\rthree\ttab") == (
        "one\\u001b[2K\ntwo\\u000dthree\\u0009tab"
    )


def test_html_text_uses_character_references() -> None:
    assert html_text("<p>ok\u202ex\t\x1b</p>\n") == "<p>ok&#x202e;x\t&#x1b;</p>\n"


def test_the_caret_stays_under_the_failing_part() -> None:
    shown, caret = caret_lines("ab\u202ecd", 3, 5, prefix="malformed ")
    assert shown == "malformed ab\\u202ecd"
    assert caret == " " * 18 + "^^"
    shown, caret = caret_lines("中文/x", 2, 3)  # wide characters take two columns each
    assert (shown, caret) == ("中文/x", "    ^")


def test_display_width() -> None:
    assert display_width("abc") == 3
    assert display_width("中文") == 4
    assert display_width("e\u0301") == 1


ANY_TEXT = st.text(st.characters(codec="utf-8") | st.characters(), max_size=60)


@settings(max_examples=500, deadline=None)
@given(ANY_TEXT)
def test_one_line_never_lets_an_unsafe_character_or_a_line_break_through(text: str) -> None:
    shown = one_line(text)
    assert unsafe_in(shown) == []
    assert "\n" not in shown and "\r" not in shown
    assert one_line(shown) == shown  # idempotent: escapes are printable ASCII


@settings(max_examples=500, deadline=None)
@given(ANY_TEXT)
def test_terminal_lines_let_only_line_feeds_through(text: str) -> None:
    shown = terminal_lines(text)
    assert unsafe_in(shown, allowed="\n") == []
    assert shown.count("\n") == text.count("\n")


ORDINARY = st.text(
    st.characters(
        categories=(
            *("Lu", "Ll", "Lt", "Lm", "Lo", "Mn", "Mc", "Me", "Nd", "Nl", "No", "Pc"),
            *("Pd", "Ps", "Pe", "Pi", "Pf", "Po", "Sm", "Sc", "Sk", "So", "Zs"),
        ),
        exclude_characters=FILLERS,
    ),
    max_size=60,
)


@settings(max_examples=500, deadline=None)
@given(ORDINARY)
def test_ordinary_text_of_any_script_passes_unchanged(text: str) -> None:
    assert one_line(text) == text
    assert terminal_lines(text) == text
    assert not any(is_unsafe(c) for c in text)


JSON_VALUES = st.recursive(
    st.none() | st.booleans() | st.integers() | ANY_TEXT,
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(ANY_TEXT, inner, max_size=4),
    max_leaves=12,
)


@settings(max_examples=300, deadline=None)
@given(JSON_VALUES, st.sampled_from([None, 2]))
def test_json_through_the_sanitiser_is_still_the_same_json(
    value: object, indent: int | None
) -> None:
    text = json.dumps(value, ensure_ascii=False, indent=indent)
    shown = terminal_lines(text)
    assert unsafe_in(shown, allowed="\n") == []
    assert json.loads(shown) == value


@settings(max_examples=300, deadline=None)
@given(ANY_TEXT.filter(lambda t: "&" not in t))
def test_html_references_decode_to_the_same_characters(text: str) -> None:
    shown = html_text(text)
    assert unsafe_in(shown, allowed="\n\t") == []
    decoded = re.sub(r"&#x([0-9a-f]+);", lambda m: chr(int(m.group(1), 16)), shown)
    assert decoded == text
