"""A quote runs to its own closing mark: brackets and other quote marks in it are quote text,
and a quote that cannot be read whole makes its citation malformed — never a shorter quote
that passes (docs/contract.md, "Quotes in citations")."""

from __future__ import annotations

import json

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from audit.citation_scan import QUOTE_CLOSERS, bracket_pairs
from audit.citations import parse_answer
from audit.claims import parse_claims

H = "pmid:99000001/abstract.4~ae2tc"
DELIMITERS = [(opener, closer) for opener, closers in QUOTE_CLOSERS.items() for closer in closers]
# Where a quote can stand; "{q}" is the quote with its delimiters.
CONTEXTS = {
    "group": "Risk fell [{h} {q}].",
    "group-quote-first": "Risk fell [{q} {h}].",
    "group-colon": "Risk fell [{h}: {q}].",
    "parentheses": "Risk fell ({h} {q}).",
    "two-handles": "Risk fell [{h} {q}; nct:NCT99000001@2025-06-02/trial.brief_summary.1~x3v9p].",
    "link-text": "Risk fell [{q}]({h}).",
    "footnote": "Risk fell [1].\n\n[1]: {h} {q}\n",
    "footnote-group": "Risk fell [1].\n\n[1]: [{h} {q}]\n",
    "bare": "- {h}: {q}",
}
_WORDS = st.text(alphabet='ab []()"“”„«»‘’;,', min_size=1, max_size=24)


def _citations_of_h(answer: str) -> list[tuple[str | None, bool]]:
    """(quote, malformed) of each citation of ``H`` in the parsed answer."""
    return [
        (c.quote, c.handle is None) for c in parse_answer(answer).citations if c.handle_text == H
    ]


@settings(max_examples=300, deadline=None)
@given(
    st.sampled_from(sorted(CONTEXTS)),
    st.sampled_from(DELIMITERS),
    _WORDS,
)
def test_a_quote_runs_to_its_own_closing_mark(
    context: str, delimiters: tuple[str, str], words: str
) -> None:
    """Any brackets, separators and other quote marks in the quote are quote text; its own
    closing marks it cannot hold (the quote would end there)."""
    opener, closer = delimiters
    for mark in QUOTE_CLOSERS[opener]:
        words = words.replace(mark, "")
    answer = CONTEXTS[context].format(h=H, q=f"{opener}{words}{closer}")
    found = _citations_of_h(answer)
    assert found, answer
    if words.strip() and opener not in words:
        assert found == [(words, False)], answer
    else:  # an empty quote passes nothing; a quote holding its own opener is malformed
        assert all(malformed or quote == words for quote, malformed in found), answer


@pytest.mark.parametrize(
    ("written", "quote"),
    [
        ('“risk of "Farrow syndrome" did not rise”', 'risk of "Farrow syndrome" did not rise'),
        ('„risk of "Farrow syndrome" did not rise“', 'risk of "Farrow syndrome" did not rise'),
        ("„risk of “Farrow syndrome” did not rise”", None),  # „ closes at the first “
        ('«x≠"r1">1</xref>].»', 'x≠"r1">1</xref>].'),
        ('"risk [1, 2] fell] in adults"', "risk [1, 2] fell] in adults"),
        ('"risk (HR 0.8)) fell"', "risk (HR 0.8)) fell"),
    ],
)
def test_brackets_and_other_marks_inside_a_quote_are_quote_text(
    written: str, quote: str | None
) -> None:
    [(found, malformed)] = _citations_of_h(f"Risk fell [{H} {written}].")
    if quote is None:
        assert malformed
    else:
        assert (found, malformed) == (quote, False)


@pytest.mark.parametrize(
    "answer",
    [
        f'Risk fell [{H} “does not increase the risk"].',  # a straight mark closes no curly quote
        f'Risk fell [{H} "risk fell] in adults].',  # unclosed: the group cannot be read
        f"Risk fell [{H} “risk of “Farrow” did not rise”].",  # nested marks of one kind
        f'Risk fell [{H} "risk fell\n] in adults"].',  # a quote is skipped on its own line only
        f'- {H}: "does not increase the risk',  # a bare handle with an unclosed quote
        f'Risk fell ["risk" fell"]({H}).',  # quote marks at both ends of a link text, not one quote
        f'Risk fell [1].\n\n[1]: {H} "does not increase\n',  # a footnote definition
        f"Risk fell [{H} “risk”] fell”].",  # a closing mark, then a bracket nothing opened
        f"Risk fell [{H} “risk”“fell”].",  # a quote glued to the one before opens none
        f'Risk fell [{H} "risk"fell"].',  # nor one glued to a word
        f"Risk fell [{H} ‘does not increase the risk’].",  # single quotes are not quote marks
        f"Risk fell [{H}”].",  # a closing mark right after the handle
        f'Risk (fell "a"] and {H}.',  # a "] right after a quote, closing nothing, on its line
    ],
)
def test_a_quote_that_cannot_be_read_whole_makes_the_citation_malformed(answer: str) -> None:
    found = _citations_of_h(answer)
    assert found and all(malformed for _, malformed in found)
    error = next(c.error for c in parse_answer(answer).citations if c.handle_text == H)
    assert error is not None and "quote marks" in error


@pytest.mark.parametrize(
    "answer",
    [
        f'He said "a ] b" and [{H} "risk"].',
        f'Risk (a) fell; b) rose, "x" [{H} "risk"].',
        f'Risk (see "a ] b") fell [{H} "risk"].',
        f'Risk [see "a”] b"] fell [{H} "risk"].',  # the ”] is in the quote, the first one
    ],
)
def test_quote_marks_and_brackets_in_the_prose_around_a_citation_are_prose(answer: str) -> None:
    assert _citations_of_h(answer) == [("risk", False)]


def test_quote_marks_around_a_handle_quote_the_handle() -> None:
    answer = f'See [the study](https://example.org/x "{H}").'
    [citation] = parse_answer(answer).citations
    assert citation.handle is not None and citation.quote is None


def test_claims_json_quotes_are_taken_whole() -> None:
    quote = 'risk of "Farrow] syndrome” (HR 0.8)) did «not» rise'
    claims = {"claims": [{"sentence": "Risk fell.", "citations": [{"handle": H, "quote": quote}]}]}
    [citation] = parse_claims(json.dumps(claims)).citations
    assert citation.handle is not None and citation.quote == quote


def test_bracket_pairs_skips_a_quote_opened_inside_a_bracket() -> None:
    text = 'a [h "x ] y"] (z "(" w)'
    assert bracket_pairs(text) == {2: 12, 14: 22}
    assert bracket_pairs('a "x ] y" [b]') == {10: 12}  # outside brackets quotes are not read


@pytest.mark.parametrize(
    ("sentence", "quote", "malformed"),
    [
        (f'Risk fell [{H} "risk fell] in adults"].', "risk fell] in adults", False),
        (
            f'Risk fell [{H} “risk of "Farrow" did not rise”].',
            'risk of "Farrow" did not rise',
            False,
        ),
        (f'Risk fell [{H} "does not increase].', None, True),
    ],
)
def test_a_quote_written_in_a_claims_sentence_is_read_as_in_prose(
    sentence: str, quote: str | None, malformed: bool
) -> None:
    claims = {"claims": [{"sentence": sentence, "citations": []}]}
    [citation] = parse_claims(json.dumps(claims)).citations
    assert (citation.quote, citation.handle is None) == (quote, malformed)
