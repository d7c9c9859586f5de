"""Each rule of the precise handle parser reports its span and what it expected there
(audit/handles.py; the ``expected`` and span of :class:`audit.errors.CitationSyntaxError`,
which a caret and a caller's "expected ..." rest on). The messages: test_handles.py."""

from __future__ import annotations

import pytest

from audit.errors import CitationSyntaxError
from audit.handles import parse_handle


@pytest.mark.parametrize(
    ("text", "start", "end", "expected"),
    [
        ("", 0, 1, "scheme"),
        ("1pmid:1/a~abcde", 0, 1, "scheme"),
        ("pmix:1/a~abcde", 0, 4, "scheme"),
        ("pmid;1/a~abcde", 4, 5, "':'"),
        ("pmid:01/a~abcde", 5, 7, "pmid id"),
        ("pmid:/a~abcde", 5, 6, "pmid id"),
        ("pmid:12X4/a~abcde", 5, 9, "pmid id"),  # the id runs to '@', '/' or '~', not to X
        ("nct:NCT99000001/a~abcde", 15, 16, "'@' version"),
        ("pmid:1@/a~abcde", 7, 8, "version"),
        ("pmid:1@-x/a~abcde", 7, 9, "version"),
        ("pmid:1~abcde", 6, 7, "'/'"),
        ("pmid:1/~abcde", 7, 8, "path"),
        ("pmid:1/a.B~abcde", 9, 10, "path segment"),
        ("pmid:1/a..b~abcde", 9, 10, "path segment"),
        ("pmid:1/aXb~abcde", 8, 9, "path segment"),  # an upper-case X stops nothing
        ("pmid:1/ab.cD~abcde", 11, 12, "path segment"),  # the flaw inside a later segment
        ("pmid:1/" + "a" * 201 + "~abcde", 7, 208, "path"),
        ("pmid:1/a", 8, 9, "'~'"),
        ("pmid:1/a~abcd", 9, 13, "check code"),
        ("pmid:1/a~abcdI", 9, 14, "check code"),
        ("pmid:1/a~", 9, 10, "check code"),
    ],
)
def test_each_grammar_rule_reports_its_span_and_what_it_expected(
    text: str, start: int, end: int, expected: str
) -> None:
    with pytest.raises(CitationSyntaxError) as raised:
        parse_handle(text)
    error = raised.value
    assert (error.text, error.start, error.end, error.expected) == (text, start, end, expected)


def test_a_local_id_of_the_right_characters_but_a_hidden_part_is_refused_there() -> None:
    text = "local:.notes@1/body~abcde"
    with pytest.raises(CitationSyntaxError) as raised:
        parse_handle(text)
    error = raised.value
    assert error.message == (
        "local id names an empty, '.'-led or hidden path part (got '.notes' in '.notes'), "
        "got '.notes'"
    )
    assert (error.start, error.end, error.expected) == (6, 12, "local id")
