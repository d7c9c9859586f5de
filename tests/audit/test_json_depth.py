"""The one JSON depth scan: deepest nesting reached, strings skipped, one linear pass."""

from __future__ import annotations

import re

from hypothesis import given, settings
from hypothesis import strategies as st

from audit.json_depth import _MARKS, nesting_depth  # pyright: ignore[reportPrivateUsage]


def reference_depth(text: str) -> int:
    """The same measure, one character at a time (obviously linear, obviously right)."""
    depth = deepest = 0
    in_string = escaped = False
    for char in text:
        if escaped:
            escaped = False
        elif char == "\\":
            escaped = True
        elif char == '"':
            in_string = not in_string
        elif in_string:
            continue
        elif char in "[{":
            depth += 1
            deepest = max(deepest, depth)
        elif char in "]}":
            depth -= 1
    return deepest


def test_brackets_inside_strings_and_escaped_quotes_do_not_count() -> None:
    assert nesting_depth('[[1], {"a": ["]]]", "\\"[["]}]') == 3
    assert nesting_depth("1") == 0
    assert nesting_depth(b'{"a": [{"b": "}}}"}]}') == 3


def test_an_unbalanced_body_measures_the_depth_it_reaches_not_zero() -> None:
    assert nesting_depth("[" * 100_000) == 100_000
    assert nesting_depth(b"[" * 100_000) == 100_000
    assert nesting_depth("[" * 50 + "]" * 70 + "{" * 10) == 50


def test_the_limit_stops_the_count_at_limit_plus_one() -> None:
    assert nesting_depth("[" * 100_000, limit=64) == 65
    assert nesting_depth("[" * 64 + "]" * 64, limit=64) == 64


def test_an_unterminated_string_full_of_escaped_quotes_hides_what_follows() -> None:
    # the reviewer's quadratic input, five times longer: a rescanning pattern would take
    # hours on it (and the test would time out); one pass reads it in milliseconds
    assert nesting_depth('"' + '\\"' * 200_000) == 0
    assert nesting_depth(b'"' + b'\\"' * 200_000 + b"[[[[") == 0
    assert nesting_depth('[{"abstract": "cut inside \\"a quote\\" [[' + "x \\" * 1000) == 2


def test_each_step_of_the_scan_reads_at_most_two_characters() -> None:
    """Linear by construction: the scan is one left-to-right ``findall`` of a pattern whose
    every match (and so every attempt) spans one or two characters — no step looks ahead to
    the end of a string, as the quadratic ``"[^"\\\\]*(?:\\\\.[^"\\\\]*)*"`` did."""
    assert re._parser.parse(_MARKS.pattern).getwidth() == (1, 2)  # pyright: ignore[reportAttributeAccessIssue]
    text = '"' + '\\"' * 1000
    assert sum(len(m) for m in _MARKS.findall(text)) == len(text)  # each character once


@settings(max_examples=500, deadline=None)
@given(st.text(alphabet=st.sampled_from(list('[]{}"\\ax\u00e9')), max_size=200))
def test_the_scan_agrees_with_a_character_by_character_reference(text: str) -> None:
    assert nesting_depth(text) == reference_depth(text)
    assert nesting_depth(text.encode("utf-8")) == reference_depth(text)
    assert nesting_depth(text, limit=3) == min(reference_depth(text), 4)
