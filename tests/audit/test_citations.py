"""The answer parser: spec vectors (data file), spans, limits, claims JSON, robustness."""

from __future__ import annotations

import contextlib
import json
import re
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from audit.citations import (
    MAX_ANSWER_CHARS,
    MAX_CITATIONS_PER_SENTENCE,
    MAX_QUOTE_CHARS,
    parse_answer,
    parse_claims,
)
from audit.errors import InputError, LimitExceeded

VECTORS: list[dict[str, Any]] = json.loads(
    (Path(__file__).parent / "data" / "citation_vectors.json").read_text(encoding="utf-8")
)
H1 = "pmid:99000001/abstract.4~ae2tc"
H3 = "nct:NCT99000001@2025-06-02/trial.brief_summary.1~x3v9p"


def _observed(answer: str) -> list[dict[str, Any]]:
    return [
        {
            "text": sentence.text,
            "kind": sentence.kind,
            "citations": [
                {
                    "handle": citation.handle_text or None,
                    "quote": citation.quote,
                    "malformed": citation.handle is None,
                }
                for citation in sentence.citations
            ],
        }
        for sentence in parse_answer(answer).sentences
    ]


def test_the_vectors_cover_enough_cases() -> None:
    assert len(VECTORS) >= 60
    assert len({v["name"] for v in VECTORS}) == len(VECTORS)


@pytest.mark.parametrize("vector", VECTORS, ids=[v["name"] for v in VECTORS])
def test_vector(vector: dict[str, Any]) -> None:
    assert _observed(vector["answer"]) == vector["sentences"]


_MARKER = re.compile(r"\[\^?[\w ,–-]+\]")


@pytest.mark.parametrize("vector", VECTORS, ids=[v["name"] for v in VECTORS])
def test_spans_point_at_the_citation_in_the_answer(vector: dict[str, Any]) -> None:
    answer = vector["answer"]
    for citation in parse_answer(answer).citations:
        written = answer[citation.start : citation.end]
        if _MARKER.fullmatch(written):  # a footnote: the span is the marker, raw the entry
            assert citation.handle_text in answer
        else:
            assert written == citation.raw
            assert citation.handle_text in citation.raw


def test_sentences_are_numbered_from_one() -> None:
    parsed = parse_answer(f"# Title\n\nOne [{H1}]. Two.\n\n- Three [{H3}].")
    assert [s.index for s in parsed.sentences] == [1, 2, 3, 4]


def test_malformed_citation_carries_the_grammar_message() -> None:
    (citation,) = parse_answer("Zentravir is safe [nct:NCT123/trial.x~abcde].").citations
    assert citation.handle is None
    assert citation.error == "nct id must be NCT followed by 8 digits, got 'NCT123'"


def test_valid_citation_is_parsed() -> None:
    (citation,) = parse_answer(f'Safe [{H3} "brief summary"].').citations
    assert citation.error is None
    assert citation.handle is not None
    assert citation.handle.locator.record_id == "nct:NCT99000001"
    assert citation.handle.locator.version == "2025-06-02"
    assert citation.raw == f'{H3} "brief summary"'


def test_dangling_footnote_says_which() -> None:
    answer = f"Safe [1]. Stopped [3].\n\n## References\n1. {H1}\n"
    citations = parse_answer(answer).citations
    assert citations[-1].error == "footnote [3] has no entry in the reference list"
    assert answer[citations[-1].start : citations[-1].end] == "[3]"


def test_answer_limit() -> None:
    with pytest.raises(LimitExceeded) as caught:
        parse_answer("a" * (MAX_ANSWER_CHARS + 1))
    assert str(caught.value) == "answer is 200,001 characters long (limit 200,000)"


def test_answer_at_the_limit_is_accepted() -> None:
    assert parse_answer("a" * MAX_ANSWER_CHARS).sentences[0].kind == "sentence"


def test_citations_per_sentence_limit() -> None:
    group = "; ".join([H1] * (MAX_CITATIONS_PER_SENTENCE + 1))
    with pytest.raises(LimitExceeded) as caught:
        parse_answer(f"Intro. Zentravir is safe [{group}].")
    assert str(caught.value) == "sentence 2 has 51 citations (limit 50)"
    fifty = "; ".join([H1] * MAX_CITATIONS_PER_SENTENCE)
    assert len(parse_answer(f"Safe [{fifty}].").citations) == 50


def test_quote_limit() -> None:
    long_quote = "x" * (MAX_QUOTE_CHARS + 1)
    with pytest.raises(LimitExceeded) as caught:
        parse_answer(f'Safe [{H1} "{long_quote}"].')
    assert str(caught.value) == "quote at character 37 is 2,001 characters long (limit 2,000)"
    assert parse_answer(f'Safe [{H1} "{"x" * MAX_QUOTE_CHARS}"].').citations[0].quote


def test_footnote_range_limit() -> None:
    with pytest.raises(LimitExceeded) as caught:
        parse_answer(f"Safe [1-999].\n\n[1]: {H1}\n")
    assert str(caught.value) == "footnote range [1-999] names 999 references (limit 50)"


# --- structured claims -----------------------------------------------------------------------


def test_claims_json() -> None:
    document = {
        "claims": [
            {"sentence": "Zentravir is safe.", "citations": [H1]},
            {
                "sentence": "The trial was stopped.",
                "citations": [{"handle": H3, "quote": "brief summary"}, "pmid:1/x"],
            },
            {"sentence": "Farrow syndrome", "kind": "heading"},
        ]
    }
    parsed = parse_claims(json.dumps(document))
    assert [(s.index, s.text, s.kind) for s in parsed.sentences] == [
        (1, "Zentravir is safe.", "sentence"),
        (2, "The trial was stopped.", "sentence"),
        (3, "Farrow syndrome", "heading"),
    ]
    first, second, third = parsed.citations
    assert first.handle is not None and first.quote is None
    assert second.quote == "brief summary" and second.raw == f'{H3} "brief summary"'
    assert third.handle is None
    assert third.error == "missing check code: expected '~' followed by 5 characters"


def test_claims_json_bare_list_and_bytes() -> None:
    parsed = parse_claims(json.dumps([{"sentence": "Safe.", "citations": [H1]}]).encode())
    assert parsed.sentences[0].citations[0].handle_text == H1


@pytest.mark.parametrize(
    ("data", "message"),
    [
        (
            "{",
            "claims JSON is not valid JSON: Expecting property name enclosed in double quotes: "
            "line 1 column 2 (char 1)",
        ),
        ('{"claims": 3}', "claims JSON must be a list of claims or an object with 'claims'"),
        ("[3]", "claims JSON: claim 1 must be an object"),
        ('[{"citations": []}]', "claims JSON: claim 1: 'sentence' must be a string"),
        (
            '[{"sentence": "a", "citations": "x"}]',
            "claims JSON: claim 1: 'citations' must be a list",
        ),
        (
            '[{"sentence": "a", "citations": [3]}]',
            "claims JSON: claim 1, citation 1 must be a handle string or an object",
        ),
        (
            '[{"sentence": "a", "citations": [{"quote": "q"}]}]',
            "claims JSON: claim 1, citation 1: 'handle' must be a string",
        ),
        (
            '[{"sentence": "a", "citations": [{"handle": "h", "quote": 1}]}]',
            "claims JSON: claim 1, citation 1: 'quote' must be a string or null",
        ),
        (
            '[{"sentence": "a", "kind": "poem"}]',
            "claims JSON: claim 1: 'kind' must be one of sentence, heading, list_item, lead_in, "
            "got 'poem'",
        ),
    ],
)
def test_claims_json_errors(data: str, message: str) -> None:
    with pytest.raises(InputError) as caught:
        parse_claims(data)
    assert str(caught.value) == message


# --- robustness ------------------------------------------------------------------------------

_PIECES = st.sampled_from(
    [
        *'pmidnct:/~@.-_[]()"“”„«»;,*`#|> \n\t0123456789abcdeNCTPMC^',
        "pmid:",
        "nct:NCT99000001",
        "/title",
        "~ae2tc",
        "[1]",
        "[^1]: ",
        "\n1. ",
        "\n## References\n",
        "**",
        "\u00a0",
        "\u200b",
        H1,
        H3,
        "e.g. ",
        ". ",
        "\r\n",
    ]
)


@settings(max_examples=200, deadline=None)
@given(st.lists(_PIECES, max_size=60).map("".join))
def test_parser_only_raises_its_own_errors_on_markup_soup(text: str) -> None:
    try:
        parsed = parse_answer(text)
    except InputError:
        return
    for citation in parsed.citations:
        assert 0 <= citation.start <= citation.end <= len(text)
        assert (citation.handle is None) == (citation.error is not None)


@settings(max_examples=200, deadline=None)
@given(st.text(max_size=300))
def test_parser_only_raises_its_own_errors_on_any_text(text: str) -> None:
    with contextlib.suppress(InputError):
        parse_answer(text)


@settings(max_examples=100, deadline=None)
@given(st.text(max_size=200))
def test_claims_parser_only_raises_its_own_errors(text: str) -> None:
    with contextlib.suppress(InputError):
        parse_claims(text)
