"""audit.terminal at its edges: the last escape of the Basic Multilingual Plane and the first
surrogate pair, runs of line breaks, widths of wide, enclosing and combining characters, and
the caret under an empty span (the policy: test_terminal.py)."""

from __future__ import annotations

import pytest

from audit.terminal import caret_lines, display_width, escape, html_text, is_unsafe, one_line


@pytest.mark.parametrize(
    ("char", "spelled"),
    [
        ("\x00", "\\u0000"),
        ("\uffff", "\\uffff"),  # the last code point of one escape
        ("\U00010000", "\\ud800\\udc00"),  # the first of a surrogate pair
        ("\U0001f600", "\\ud83d\\ude00"),
        ("\U0010ffff", "\\udbff\\udfff"),
    ],
)
def test_an_escape_is_one_json_escape_or_a_surrogate_pair(char: str, spelled: str) -> None:
    assert escape(char) == spelled


def test_a_run_of_line_breaks_is_one_space_and_a_character_between_runs_ends_it() -> None:
    assert one_line("a\r\n\n\t\x0b\x0cb") == "a b"
    assert one_line("a\n\x1b\nb") == "a \\u001b b"
    assert one_line("\n") == " "
    assert one_line("a\x85b\u2028c\u2029d") == "a b c d"


def test_the_hangul_fillers_are_unsafe_though_printable() -> None:
    assert [is_unsafe(c) for c in "\u115f\u1160\u3164\uffa0"] == [True] * 4
    assert one_line("\u115fa\uffa0") == "\\u115fa\\uffa0"
    assert html_text("a\u1160b\n") == "a&#x1160;b\n"
    assert not is_unsafe("\u00a0") and not is_unsafe("a")


def test_widths_of_wide_fullwidth_enclosing_and_combining_characters() -> None:
    assert display_width("\uff21") == 2  # FULLWIDTH LATIN CAPITAL LETTER A: F, not W
    assert display_width("a\u20dd") == 1  # an enclosing circle (Me) takes no column
    assert display_width("a\u0301\u0327") == 1
    assert display_width("e\u0301xy") == 3  # the mark takes none, the rest still count
    assert display_width("\u0e01\u0e31") == 1  # Thai MAI HAN-AKAT: Mn of combining class 0
    assert display_width("") == 0


def test_a_caret_under_an_empty_span_is_one_caret_where_it_would_start() -> None:
    assert caret_lines("abc", 3, 3) == ("abc", "   ^")
    assert caret_lines("a\nb", 1, 2, prefix="> ") == ("> a b", "   ^")
