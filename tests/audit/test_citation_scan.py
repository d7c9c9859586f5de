"""Bracket matching visits only the brackets and pairs them as a walk over every character."""

from __future__ import annotations

from hypothesis import given
from hypothesis import strategies as st

from audit.citation_scan import bracket_pairs


def _walked(text: str) -> dict[int, int]:
    """The rule of :func:`bracket_pairs`, one character at a time: a closer pops openers down
    to its own kind; a closer with none of its kind open is skipped."""
    pairs: dict[int, int] = {}
    stack: list[tuple[str, int]] = []
    for index, char in enumerate(text):
        if char in "[(":
            stack.append(("]" if char == "[" else ")", index))
        elif char in "])" and any(kind == char for kind, _ in stack):
            while True:
                kind, opened = stack.pop()
                if kind == char:
                    pairs[opened] = index
                    break
    return pairs


@given(st.text(alphabet="[]()ab \n", max_size=60))
def test_bracket_pairs_are_those_of_a_walk_over_every_character(text: str) -> None:
    assert bracket_pairs(text) == _walked(text)


def test_a_closer_drops_the_unclosed_openers_above_its_own() -> None:
    assert bracket_pairs("[a (b] c) (d)") == {0: 5, 10: 12}
