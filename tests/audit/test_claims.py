"""Structured claims JSON: the schema, strict validation with one-line errors, robustness."""

from __future__ import annotations

import contextlib
import json

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from audit import claims as claims_module
from audit.citations import MAX_ANSWER_CHARS
from audit.claims import MAX_CLAIMS_DEPTH, parse_claims
from audit.errors import InputError, LimitExceeded, NothingToAudit

H1 = "pmid:99000001/abstract.4~ae2tc"
H3 = "nct:NCT99000001@2025-06-02/trial.brief_summary.1~x3v9p"


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
    assert first.raw == H1  # the text shown for it: the handle alone, no quote
    # a citation listed in claims JSON has no place in an answer's text: its span is empty
    assert [(c.start, c.end, c.handle_span) for c in parsed.citations] == [(0, 0, None)] * 3
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
        (
            '[{"sentence": "a", "kind": ["heading"]}]',
            "claims JSON: claim 1: 'kind' must be one of sentence, heading, list_item, lead_in, "
            "got ['heading']",
        ),
        (
            '[{"sentence": "a", "citations": null}]',
            "claims JSON: claim 1: 'citations' must be a list",
        ),
        ('{"citatoins": []}', "claims JSON: unknown key 'citatoins' (expected 'claims')"),
        (
            '{"claims": [{"sentence": "a"}], "source": "x"}',
            "claims JSON: unknown key 'source' (expected 'claims')",
        ),
        (
            f'[{{"sentence": "a", "citations": ["{H1}"]}}, {{"sentence": "b", "citatoins": []}}]',
            "claims JSON: claim 2: unknown key 'citatoins' (expected 'sentence', 'kind', "
            "'citations')",
        ),
        (
            f'[{{"sentence": "a", "citations": [{{"handle": "{H1}", "qoute": "x"}}]}}]',
            "claims JSON: claim 1, citation 1: unknown key 'qoute' (expected 'handle', 'quote')",
        ),
        (
            f'[{{"sentence": "a", "citations": ["{H1}"], "citations": []}}]',
            "claims JSON: claim 1: key 'citations' is given twice",
        ),
        ('{"claims": [], "claims": []}', "claims JSON: key 'claims' is given twice"),
        (
            '[{"sentence": "a", "citations": [NaN]}]',
            "claims JSON is not valid JSON: NaN is not a number",
        ),
        (
            '[{"sentence": "risk \\ud800 low"}]',
            "claims JSON: claim 1: 'sentence' holds a lone surrogate (\\ud800), not valid Unicode",
        ),
        (
            '[{"sentence": "a", "citations": ["pmid:1/x~\\udfff"]}]',
            "claims JSON: claim 1, citation 1: the handle holds a lone surrogate (\\udfff), "
            "not valid Unicode",
        ),
        (
            '[{"sentence": "a", "citations": [{"handle": "pmid:1/x~\\ud800"}]}]',
            "claims JSON: claim 1, citation 1: 'handle' holds a lone surrogate (\\ud800), "
            "not valid Unicode",
        ),
        (
            f'[{{"sentence": "a", "citations": [{{"handle": "{H1}", "quote": "\\ud83d"}}]}}]',
            "claims JSON: claim 1, citation 1: 'quote' holds a lone surrogate (\\ud83d), "
            "not valid Unicode",
        ),
    ],
)
def test_claims_json_errors(data: str, message: str) -> None:
    with pytest.raises(InputError) as caught:
        parse_claims(data)
    assert str(caught.value) == message


@settings(max_examples=100, deadline=None)
@given(st.text(max_size=200))
def test_claims_parser_only_raises_its_own_errors(text: str) -> None:
    with contextlib.suppress(InputError):
        parse_claims(text)


def test_a_surrogate_pair_escape_is_one_valid_character() -> None:
    (sentence,) = parse_claims('[{"sentence": "risk \\ud83d\\ude00 low"}]').sentences
    assert sentence.text == "risk \U0001f600 low"


def test_deep_nesting_is_a_one_line_limit_error_not_a_recursion_error() -> None:
    with pytest.raises(LimitExceeded) as caught:
        parse_claims("[" * 100_000 + "]" * 100_000)
    assert str(caught.value) == "claims JSON nests 100,000 levels deep (limit 32)"


def test_unbalanced_deep_nesting_is_the_same_limit_error() -> None:
    with pytest.raises(LimitExceeded) as caught:
        parse_claims("[" * 100_000)
    assert str(caught.value) == "claims JSON nests 100,000 levels deep (limit 32)"


def test_a_recursion_error_while_parsing_is_a_limit_error_too(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setattr(claims_module, "nesting_depth", lambda text: 0)  # a scan that misses
    with pytest.raises(LimitExceeded) as caught:
        parse_claims("[" * 100_000 + "]" * 100_000)
    assert str(caught.value) == "claims JSON nests too deep to parse (limit 32)"


def test_nesting_at_the_limit_is_parsed_and_brackets_in_strings_do_not_count() -> None:
    deep = "[" * MAX_CLAIMS_DEPTH + "]" * MAX_CLAIMS_DEPTH
    with pytest.raises(InputError) as caught:  # parsed: a schema error, not a limit
        parse_claims(deep)
    assert str(caught.value) == "claims JSON: claim 1 must be an object"
    brackets = '[{"sentence": "' + "[{" * 1000 + '\\"]"}]'
    assert parse_claims(brackets).sentences[0].text == "[{" * 1000 + '"]'


def test_bytes_that_are_not_utf8_are_a_one_line_error() -> None:
    with pytest.raises(InputError) as caught:
        parse_claims(b'[{"sentence": "caf\xe9"}]')
    assert str(caught.value) == "claims JSON is not valid UTF-8 text (byte 18)"


def test_a_utf8_error_after_a_byte_order_mark_names_utf8_and_the_byte_in_the_input() -> None:
    with pytest.raises(InputError) as caught:  # the '\xe9' is byte 21: the mark is 3 bytes
        parse_claims(b'\xef\xbb\xbf[{"sentence": "caf\xe9"}]')
    assert str(caught.value) == "claims JSON is not valid UTF-8 text (byte 21)"


def test_encoded_surrogate_bytes_are_refused() -> None:
    with pytest.raises(InputError) as caught:  # CESU-8 style: UTF-8 forbids encoded surrogates
        parse_claims(b'[{"sentence": "\xed\xa0\x80"}]')
    assert str(caught.value) == "claims JSON is not valid UTF-8 text (byte 15)"


@pytest.mark.parametrize(
    ("data", "message"),
    [
        ("[]", "nothing to audit: claims JSON holds no claims"),
        ('{"claims": []}', "nothing to audit: claims JSON holds no claims"),
        (
            '[{"sentence": "Farrow syndrome", "kind": "heading"}, {"sentence": "  "}]',
            "nothing to audit: the claims hold no sentence and no citation",
        ),
    ],
    ids=["empty-list", "empty-claims", "headings-and-blank-sentences"],
)
def test_claims_with_nothing_to_audit_are_refused_not_passed(data: str, message: str) -> None:
    with pytest.raises(NothingToAudit) as caught:
        parse_claims(data)
    assert str(caught.value) == message


def test_a_heading_that_cites_is_something_to_audit() -> None:
    parsed = parse_claims(json.dumps([{"sentence": "Risk", "kind": "heading", "citations": [H1]}]))
    assert [c.handle_text for c in parsed.citations] == [H1]


def test_a_handle_in_a_sentence_that_its_citations_omit_is_audited() -> None:
    forged = "pmid:99000001/abstract.3~zzzzz"
    claims = [{"sentence": f"Risk was unchanged ({forged}).", "citations": [H1]}]
    (sentence,) = parse_claims(json.dumps(claims)).sentences
    assert [(c.handle_text, c.handle is not None) for c in sentence.citations] == [
        (H1, True),
        (forged, True),
    ]


def test_a_handle_in_a_sentence_and_in_its_citations_is_one_citation() -> None:
    claims = [{"sentence": f"Risk was unchanged [{H1}].", "citations": [H1]}]
    assert [c.handle_text for c in parse_claims(json.dumps(claims)).citations] == [H1]


def test_a_lookalike_handle_in_claims_is_malformed_with_the_character_named() -> None:
    claims = [{"sentence": "Risk.", "citations": ["\uff50mid:99000001/abstract.4~ae2tc"]}]
    (citation,) = parse_claims(json.dumps(claims)).citations
    assert citation.handle is None
    assert citation.error == (
        "look-alike character '\uff50' (U+FF50 FULLWIDTH LATIN SMALL LETTER P) at character 1 "
        "of the handle, expected 'p'"
    )


_JSON_VALUES = st.recursive(
    st.none() | st.booleans() | st.integers() | st.text(max_size=20),
    lambda inner: (
        st.lists(inner, max_size=4)
        | st.dictionaries(
            st.sampled_from(
                ["claims", "sentence", "kind", "citations", "handle", "quote", "citatoins", "x"]
            ),
            inner,
            max_size=4,
        )
    ),
    max_leaves=20,
)


@settings(max_examples=200, deadline=None)
@given(_JSON_VALUES)
def test_claims_parser_only_raises_its_own_errors_on_any_json_shape(value: object) -> None:
    with contextlib.suppress(InputError):
        parsed = parse_claims(json.dumps(value))
        assert parsed.sentences  # what parses always holds something to audit


def test_a_quote_over_the_limit_in_a_citation_object_is_a_limit_error() -> None:
    document = [{"sentence": "a", "citations": [{"handle": H1, "quote": "x" * 2_001}]}]
    with pytest.raises(LimitExceeded) as caught:
        parse_claims(json.dumps(document))
    assert str(caught.value) == "quote at character 0 is 2,001 characters long (limit 2,000)"


def test_every_handle_a_sentence_writes_is_audited_once() -> None:
    other = "pmid:99000001/abstract.3~zzzzz"
    sentence = f"Risk fell [{H1}] and then rose [{other}], as [{other}] says."
    claims = [{"sentence": sentence, "citations": [H1]}]
    parsed = parse_claims(json.dumps(claims))
    assert [(c.raw, c.handle_text) for c in parsed.citations] == [(H1, H1), (other, other)]
    assert [(c.start, c.end, c.handle_span) for c in parsed.citations] == [(0, 0, None)] * 2


def test_a_quote_the_sentence_adds_to_a_listed_handle_is_audited_too() -> None:
    sentence = f'Risk fell, "{H1} \u201crisk fell\u201d".'
    claims = [{"sentence": sentence, "citations": [H1]}]
    parsed = parse_claims(json.dumps(claims))
    assert [(c.handle_text, c.quote) for c in parsed.citations] == [(H1, None), (H1, "risk fell")]


def test_a_quote_over_the_limit_in_a_sentence_is_a_limit_error() -> None:
    sentence = f'Risk fell {H1} "{"x" * 2_001}".'
    with pytest.raises(LimitExceeded) as caught:
        parse_claims(json.dumps([{"sentence": sentence}]))
    assert str(caught.value) == "quote at character 0 is 2,001 characters long (limit 2,000)"


def test_a_listed_handle_first_in_a_bracket_does_not_hide_the_handle_after_it() -> None:
    other = "pmid:99000001/abstract.3~zzzzz"
    claims = [{"sentence": f"Risk fell [{H1}; {other}].", "citations": [H1]}]
    parsed = parse_claims(json.dumps(claims))
    assert [c.handle_text for c in parsed.citations] == [H1, other]


def _padded(document: object, length: int) -> str:
    """``document`` as JSON, padded with trailing whitespace to ``length`` characters."""
    text = json.dumps(document)
    return text + " " * (length - len(text))


def test_claims_json_of_exactly_the_size_limit_is_read() -> None:
    data = _padded([{"sentence": "Safe.", "citations": [H1]}], claims_module.MAX_CLAIMS_BYTES)
    assert [c.handle_text for c in parse_claims(data).citations] == [H1]


def test_claims_json_one_character_over_the_size_limit_is_a_limit_error() -> None:
    data = _padded([{"sentence": "Safe."}], claims_module.MAX_CLAIMS_BYTES + 1)
    with pytest.raises(LimitExceeded) as caught:
        parse_claims(data)
    assert str(caught.value) == "claims JSON is 1,000,001 characters long (limit 1,000,000)"


def test_sentences_of_exactly_the_answer_limit_are_read() -> None:
    half = MAX_ANSWER_CHARS // 2
    parsed = parse_claims(json.dumps([{"sentence": "a" * half}, {"sentence": "b" * half}]))
    assert [len(s.text) for s in parsed.sentences] == [half, half]


def test_sentences_one_character_over_the_answer_limit_are_a_limit_error() -> None:
    half = MAX_ANSWER_CHARS // 2  # the sentences are counted stripped, as they are audited
    document = [{"sentence": "a" * half}, {"sentence": f"  {'b' * (half + 1)}  "}]
    with pytest.raises(LimitExceeded) as caught:
        parse_claims(json.dumps(document))
    assert str(caught.value) == "claims hold 200,001 characters of sentences (limit 200,000)"
