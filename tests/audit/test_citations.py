"""The answer parser: spec vectors (data file), spans, limits, claims JSON, robustness."""

from __future__ import annotations

import contextlib
import json
import re
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from audit.citation_scan import find_candidates
from audit.citations import (
    MAX_ANSWER_CHARS,
    MAX_CITATIONS_PER_SENTENCE,
    MAX_QUOTE_CHARS,
    lone_surrogate,
    parse_answer,
)
from audit.errors import InputError, LimitExceeded, NothingToAudit

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
    if "error" in vector:  # a vector of an answer that is refused
        with pytest.raises(InputError) as caught:
            parse_answer(vector["answer"])
        assert str(caught.value) == vector["error"]
    else:
        assert _observed(vector["answer"]) == vector["sentences"]


_MARKER = re.compile(r"\[\^?[\w ,–-]+\]")


@pytest.mark.parametrize("vector", VECTORS, ids=[v["name"] for v in VECTORS])
def test_spans_point_at_the_citation_in_the_answer(vector: dict[str, Any]) -> None:
    answer = vector["answer"]
    if "error" in vector:
        return
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
        "\u202e",
        "\u0301",
        "\uff50",
        "\u0440",
        "\uff1a",
        "```",
        "<!-- ",
        "https://x.org/",
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
    spans = [c.handle_span for c in parsed.citations if c.handle_span is not None]
    for citation in parsed.citations:
        assert 0 <= citation.start <= citation.end <= len(text)
        assert (citation.handle is None) == (citation.error is not None)
    for cand in find_candidates(text):  # the sweep: every handle-looking span is cited
        assert any(start < cand.end and cand.start < end for start, end in spans)


@settings(max_examples=200, deadline=None)
@given(st.text(max_size=300))
def test_parser_only_raises_its_own_errors_on_any_text(text: str) -> None:
    with contextlib.suppress(InputError):
        parse_answer(text)


# --- no silent drops (issue 12 §1) -------------------------------------------------------------

OK = "pmid:99000001/abstract.3~awhr0"
FORGED = "pmid:99000001/abstract.3~zzzzz"


def _cited(answer: str) -> list[tuple[str, str | None]]:
    """(sentence text, handle text) for every citation, in order."""
    return [
        (s.text, c.handle_text or None) for s in parse_answer(answer).sentences for c in s.citations
    ]


def test_footnote_marker_inside_a_citation_group_resolves_through_the_reference_list() -> None:
    answer = f"Risk was unchanged ({OK}; see also [1]).\n\n[1]: {FORGED}\n"
    parsed = parse_answer(answer)
    assert [(s.text, [c.handle_text for c in s.citations]) for s in parsed.sentences] == [
        ("Risk was unchanged.", [OK, FORGED])
    ]
    marker = parsed.citations[1]
    assert answer[marker.start : marker.end] == "[1]"
    assert marker.handle_span == (answer.index(FORGED), answer.index(FORGED) + len(FORGED))


@pytest.mark.parametrize(
    "answer",
    [
        f'Risk was unchanged [{OK} "no change in risk [1]"].\n\n[1]: {FORGED}\n',
        f'Risk was unchanged {OK}: "no change in risk [1]".\n\n[1]: {FORGED}\n',
        f"Risk was unchanged [as reported [1]]({OK}).\n\n[1]: {FORGED}\n",
    ],
    ids=["quote-in-group", "quote-after-bare-handle", "link-text"],
)
def test_footnote_marker_inside_a_quote_or_link_text_resolves(answer: str) -> None:
    assert sorted(h or "" for _, h in _cited(answer)) == [OK, FORGED]  # in answer order


def test_marker_inside_a_group_leaves_the_display_text() -> None:
    answer = f"Risk (HR 0.8; {OK}; see [1, 2]).\n\n[1]: {OK}\n[2]: {OK}\n"
    (sentence,) = parse_answer(answer).sentences
    assert sentence.text == "Risk (HR 0.8)."
    assert len(sentence.citations) == 3


def test_reference_list_inside_a_blockquote_resolves() -> None:
    answer = f"> Risk was unchanged [1].\n>\n> ## References\n> 1. {FORGED}\n> [2]: {OK}\n"
    assert _cited(answer) == [("Risk was unchanged.", FORGED), (OK, OK)]


def test_used_footnote_whose_markers_never_resolve_is_audited_once_as_a_list_item() -> None:
    # the only marker stands in a fence line, which is no sentence: the entry must not vanish
    answer = f"Risk was low.\n\n```[1]\ncode\n```\n\n[1]: {FORGED}\n"
    parsed = parse_answer(answer)
    assert [(s.kind, s.text, [c.handle_text for c in s.citations]) for s in parsed.sentences] == [
        ("sentence", "Risk was low.", []),
        ("sentence", "code", []),
        ("list_item", FORGED, [FORGED]),
    ]


@pytest.mark.parametrize(
    ("fence", "line"),
    [
        (f"```{FORGED}\ncode\n```", f"```{FORGED}"),
        (f"~~~ python title={FORGED}\ncode\n~~~", f"~~~ python title={FORGED}"),
        (f"```\ncode\n``` {FORGED}", f"``` {FORGED}"),
    ],
    ids=["backticks", "tildes-with-attributes", "closing-line"],
)
def test_handle_in_a_fence_line_is_cited_by_a_sentence_of_that_line(fence: str, line: str) -> None:
    answer = f"Risk was unchanged [{OK}].\n\n{fence}\n"
    assert _cited(answer) == [("Risk was unchanged.", OK), (line, FORGED)]


@pytest.mark.parametrize(
    ("written", "error"),
    [
        (
            "\uff50\uff4d\uff49\uff44:99000001/abstract.3~awhr0",
            "look-alike character '\uff50' (U+FF50 FULLWIDTH LATIN SMALL LETTER P) at character 1 "
            "of the handle, expected 'p'",
        ),
        (
            "\u0440mid:99000001/abstract.3~awhr0",
            "look-alike character '\u0440' (U+0440 CYRILLIC SMALL LETTER ER) at character 1 of "
            "the handle, expected 'p'",
        ),
        (
            "pmid\uff1a\u0669\u0669000001/abstract.3~awhr0",
            "look-alike character '\uff1a' (U+FF1A FULLWIDTH COLON) at character 5 of the handle, "
            "expected ':'",
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
            "pmid:99000001/abstract.3\u2060~awhr0",
            "invisible character U+2060 WORD JOINER at character 25 of the handle; a handle is "
            "plain ASCII",
        ),
    ],
    ids=["fullwidth", "cyrillic", "fullwidth-colon-arabic-digits", "zero-width", "bidi", "joiner"],
)
def test_lookalike_or_invisible_handle_is_malformed_not_uncited(written: str, error: str) -> None:
    (sentence,) = parse_answer(f"Risk was unchanged ({written}).").sentences
    (citation,) = sentence.citations
    assert (sentence.text, citation.handle_text, citation.handle) == (
        "Risk was unchanged.",
        written,
        None,
    )
    assert citation.error == error


@pytest.mark.parametrize(
    ("written", "error"),
    [
        (
            "pmid\\:99000001/abstract.3~awhr1",
            "Markdown escape '\\:' at character 5 of the handle, expected ':'",
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
            "pm**id**:99000001/abstract.3~awhr1",
            "emphasis marker '**' at character 3 of the handle; a handle is written without "
            "Markdown",
        ),
        (
            "pmid:99000001/abstract.3~aw`hr`1",
            "code marker '`' at character 28 of the handle; a handle is written without Markdown",
        ),
    ],
    ids=["escape", "decimal-reference", "named-reference", "strong", "code"],
)
@pytest.mark.parametrize("context", ["The drug is safe {h}.", "The drug is safe [{h}]."])
def test_a_handle_hidden_by_markup_is_malformed_not_uncited(
    written: str, error: str, context: str
) -> None:
    (sentence,) = parse_answer(context.format(h=written)).sentences
    (citation,) = sentence.citations
    assert (sentence.text, citation.handle_text, citation.handle, citation.error) == (
        "The drug is safe.",
        written,
        None,
        error,
    )


def test_a_homoglyph_the_skeleton_does_not_know_still_makes_one_malformed_token() -> None:
    (sentence,) = parse_answer(
        "Risk was unchanged (pm\u13d7d:99000001/abstract.3~awhr0)."
    ).sentences
    (citation,) = sentence.citations
    assert (sentence.text, citation.handle_text) == (
        "Risk was unchanged.",
        "pm\u13d7d:99000001/abstract.3~awhr0",
    )
    assert citation.error == (
        "non-ASCII character '\u13d7' (U+13D7 CHEROKEE LETTER DI) at character 3 of the handle; "
        "a handle is plain ASCII"
    )


def test_invisible_characters_around_a_handle_are_not_part_of_it() -> None:
    (citation,) = parse_answer(f"Risk was unchanged \u200b{OK}\u200b.").citations
    assert (citation.handle_text, citation.error) == (OK, None)


def test_handle_glued_inside_a_url_is_cited_and_the_url_stays() -> None:
    answer = f"See [the record](https://example.org/{FORGED}) and evidence://{OK}."
    (sentence,) = parse_answer(answer).sentences
    assert sentence.text == f"See the record and evidence://{OK}."
    assert [c.handle_text for c in sentence.citations] == [FORGED, OK]


def test_a_url_without_a_handle_path_is_not_a_citation() -> None:
    parsed = parse_answer("See https://example.org/pmid:99000001 and https://x.org:8080/a~b.")
    assert parsed.citations == ()


@pytest.mark.parametrize(
    ("answer", "message"),
    [
        ("", "nothing to audit: the answer is empty"),
        (" \n\t\n", "nothing to audit: the answer is empty"),
        (
            "# Zentravir\n\n---\n\n## Safety\n",
            "nothing to audit: the answer has no sentence and no citation",
        ),
        ("```\n```\n", "nothing to audit: the answer has no sentence and no citation"),
    ],
    ids=["empty", "blank", "only-headings-and-a-rule", "empty-fence"],
)
def test_answer_with_nothing_to_audit_is_refused_not_passed(answer: str, message: str) -> None:
    with pytest.raises(NothingToAudit) as caught:
        parse_answer(answer)
    assert str(caught.value) == message


def test_an_answer_that_is_only_a_citation_is_something_to_audit() -> None:
    assert _cited(f"[{OK}]") == [("", OK)]


def test_answer_with_a_lone_surrogate_is_refused() -> None:
    with pytest.raises(InputError) as caught:
        parse_answer("Risk \ud800 was low.")
    assert str(caught.value) == (
        "answer holds a lone surrogate (\\ud800) at character 5, which is not valid Unicode"
    )


# --- the invariant, as a property: every handle-looking span is exactly one citation -----------

_VALID = [
    OK,
    FORGED,
    H1,
    H3,
    "pmcid:PMC9900001/body.2~abcde",
    "ppr:PPR990001@2/abstract.1~zzzzz",
    "setid:99000000-aaaa-4bbb-8ccc-dddddddddddd@3/label.boxed_warning.1~qrstv",
]
_MALFORMED = [  # ASCII that breaks the grammar; each has '/' or '~' (the handle-like shape)
    "pmid:0123/title~abcde",
    "nct:NCT123/trial.x~abcde",
    "pmid:99000001/abstract.3~awhr",
    "pmid:99000001/Abstract~abcde",
    "pmid:99000001/abstract.3",
]
_OTHER_SHAPE = ["doi:10.5555/x/title~ae2tc"]  # an unknown scheme in the handle shape
_NO_PATH = ["pmid:99000001-abstract"]  # a known scheme without '/' or '~'
_LOOKALIKE = {  # ASCII → characters whose skeleton is that ASCII
    "p": "\uff50\u0440\u03c1",
    "m": "\uff4d",
    "i": "\u0456\uff49\u00ed",
    "d": "\u0501",
    "a": "\u0430\u03b1",
    "e": "\u0435",
    "o": "\u043e\u03bf",
    "c": "\u0441",
    "t": "\uff54",
    "N": "\u039d",
    "C": "\u0421",
    "T": "\u0422",
    "P": "\u0420",
    "0": "\uff10\u0660",
    "9": "\u0669\u096f\U0001d7eb",
    "1": "\u0661\uff11",
    ":": "\u2236\uff1a",
    "/": "\u2215\u2044",
    "~": "\u223c\uff5e",
    ".": "\uff0e",
}
_INVISIBLE = "\u200b\u200c\u200d\u2060\u202e\u202d\u202c\u200e\u200f\u00ad\ufeff\u0301\u3164"


_NAMED = {":": "&colon;", "/": "&sol;", ".": "&period;", "~": "&tilde;", "@": "&commat;"}
_MARKERS = ["*", "**", "`"]


def _markup(draw: st.DrawFn, text: str) -> str:
    """``text`` with one piece of markup a renderer hides: a Markdown escape, a character
    reference, or emphasis/code markers around a part of it."""
    how = draw(st.sampled_from(["escape", "decimal", "hex", "named", "markers"]))
    if how == "escape":
        at = draw(st.sampled_from([i for i, c in enumerate(text) if c in ":/.~@-"]))
        return text[:at] + "\\" + text[at:]
    if how == "markers":
        first = draw(st.integers(1, len(text) - 2))
        last = draw(st.integers(first + 1, len(text) - 1))
        marker = draw(st.sampled_from(_MARKERS))
        return text[:first] + marker + text[first:last] + marker + text[last:]
    spots = [i for i, c in enumerate(text) if how != "named" or c in _NAMED]
    at = draw(st.sampled_from(spots))
    char = text[at]
    reference = {"decimal": f"&#{ord(char)};", "hex": f"&#x{ord(char):X};"}.get(how)
    return text[:at] + (reference or _NAMED[char]) + text[at + 1 :]


@st.composite
def _token(draw: st.DrawFn, handle_shaped: bool) -> tuple[str, str]:
    """(text, kind): kind "valid", "malformed" (ASCII), "lookalike" or "markup"."""
    kind = draw(st.sampled_from(["valid", "malformed", "lookalike", "lookalike", "markup"]))
    if kind == "malformed":
        pool = _MALFORMED + ([] if handle_shaped else _OTHER_SHAPE + _NO_PATH)
        return draw(st.sampled_from(pool)), kind
    text = draw(st.sampled_from(_VALID))
    if kind == "valid":
        return text, kind
    if kind == "markup":
        return _markup(draw, text), kind
    if draw(st.booleans()):  # replace one character by a look-alike
        spots = [i for i, c in enumerate(text) if c in _LOOKALIKE]
        at = draw(st.sampled_from(spots))
        return text[:at] + draw(st.sampled_from(_LOOKALIKE[text[at]])) + text[at + 1 :], kind
    at = draw(st.integers(1, len(text) - 1))  # insert an invisible character inside
    return text[:at] + draw(st.sampled_from(_INVISIBLE)) + text[at:], kind


# Contexts: "{h}" is a handle token; "[{n}]" a footnote marker whose definition "[n]: {h}" the
# answer's trailer holds; "glued" contexts put the handle right after other text (a URL).
_CONTEXTS = {
    "prose": "Risk was low {h} in trials.",
    "group": "Risk was low [{h}].",
    "group-quote": 'Risk was low [{h} "no change"].',
    "two-handles": "Risk was low [{h}; {h}].",
    "parentheses": "Risk (HR 0.8; 95% CI 0.6-1.1; {h}).",
    "bare-quote": '{h}: "some words" hold.',
    "prose-quote": 'He wrote "see {h} for the details" then.',
    "link-target": "See [the study]({h}).",
    "link-title": 'See [the study](https://example.org/x "{h}").',
    "link-text": "See [{h}](https://example.org/x).",
    "url": "See https://example.org/{h} now.",
    "code-span": "Use `{h}` here.",
    "bold": "Shown by **{h}** here.",
    "fence-content": "```\n{h}\n```",
    "fence-info": "```{h}\ncode\n```",
    "tilde-fence-info": "~~~ text title={h}\ncode\n~~~",
    "html-attribute": '<a href="{h}">study</a> said so.',
    "html-comment": "<!-- {h} --> Risk was low.",
    "blockquote": "> Risk was low [{h}].",
    "list-item": "- Risk was low {h}.",
    "table-cell": "| Risk | {h} |",
    "heading": "## Risk {h}",
    "marker": "Risk was low [{n}].",
    "marker-in-group": "Risk was low ({h}; see also [{n}]).",
    "marker-in-quote": 'Risk was low [{h} "no change [{n}]"].',
    "marker-twice": "Risk was low [{n}], as before [{n}].",
    "unused-definition": "[{n}]: {h}",
}
_GLUED_CONTEXTS = {"url"}


@dataclass(frozen=True)
class _Planted:
    """A handle token planted at ``[start, end)``; ``marker`` when footnote markers cite it."""

    start: int
    end: int
    kind: str
    citations: int = 1
    marker: str | None = None


@st.composite
def _answer(draw: st.DrawFn) -> tuple[str, list[_Planted]]:
    """An answer and the handle tokens planted in it."""
    names = draw(st.lists(st.sampled_from(sorted(_CONTEXTS)), min_size=1, max_size=8))
    parts: list[str] = []
    planted: list[_Planted] = []
    trailer: list[tuple[int, str, str, int]] = []  # label, token text, kind, markers
    at = 0
    for number, name in enumerate(names, start=1):
        if name == "unused-definition":
            text, kind = draw(_token(handle_shaped=False))
            trailer.append((number, text, kind, 0))  # no marker: audited as a list item
            continue
        piece, rest = "", _CONTEXTS[name]
        while (
            cut := min((i for i in (rest.find("{h}"), rest.find("{n}")) if i >= 0), default=-1)
        ) >= 0:
            piece, field, rest = piece + rest[:cut], rest[cut : cut + 3], rest[cut + 3 :]
            if field == "{n}":  # every marker of one context names the same definition
                if not trailer or trailer[-1][0] != number:
                    text, kind = draw(_token(handle_shaped=False))
                    trailer.append((number, text, kind, 0))
                label, text, kind, markers = trailer[-1]
                trailer[-1] = (label, text, kind, markers + 1)
                piece += str(number)
            else:
                text, kind = draw(_token(handle_shaped=name in _GLUED_CONTEXTS))
                planted.append(_Planted(at + len(piece), at + len(piece) + len(text), kind))
                piece += text
        parts.append(piece + rest)
        at += len(parts[-1]) + 2
    body = "\n\n".join(parts)
    lines: list[str] = []
    at = len(body) + 2
    for label, text, kind, markers in trailer:
        start = at + len(f"[{label}]: ")
        marker = f"[{label}]" if markers else None
        planted.append(_Planted(start, start + len(text), kind, max(1, markers), marker))
        lines.append(f"[{label}]: {text}")
        at += len(lines[-1]) + 1
    answer = body + ("\n\n" + "\n".join(lines) + "\n" if lines else "\n")
    return answer, planted


@settings(max_examples=400, deadline=None)
@given(_answer())
def test_every_handle_looking_span_in_any_context_is_exactly_one_citation(
    case: tuple[str, list[_Planted]],
) -> None:
    answer, planted = case
    by_span: dict[tuple[int, int] | None, list[Any]] = {}
    for citation in parse_answer(answer).citations:
        by_span.setdefault(citation.handle_span, []).append(citation)
    assert set(by_span) == {(p.start, p.end) for p in planted}  # none extra, none lost
    for token in planted:
        found = by_span[(token.start, token.end)]
        assert len(found) == token.citations, answer[token.start : token.end]
        for citation in found:
            assert citation.handle_text == answer[token.start : token.end]
            if token.marker is not None:  # cited where each marker stands
                assert answer[citation.start : citation.end] == token.marker
            if token.kind == "valid":
                assert citation.handle is not None and citation.error is None
            else:
                assert citation.handle is None and citation.error
            first_word = (citation.error or "").split(" ")[0]
            if token.kind == "lookalike":
                assert first_word in ("look-alike", "invisible", "combining")
            if token.kind == "markup":
                assert first_word in ("Markdown", "character", "emphasis", "code")


def test_lone_surrogate_finds_the_first_one_and_a_pair_is_none() -> None:
    assert lone_surrogate("ab\udc00c\ud800") == (2, "\\udc00")
    assert lone_surrogate("risk \U0001f600 low") is None
    assert lone_surrogate("plain") is None


@pytest.mark.parametrize(
    ("answer", "cited"),
    [
        (f"Risk fell. [The trial]({H1}) showed it rose.", "The trial showed it rose."),
        (f'Risk fell. ["It rose"]({H1}) in the trial.', '"It rose" in the trial.'),
        (f"Risk fell.\n[The trial]({H1}) showed it rose.", "The trial showed it rose."),
        (f"Risk fell. It rose [in the trial]({H1}).", "It rose in the trial."),
        (f"[It rose.]({H1}) Risk fell.", "It rose."),
        (f"Risk fell. [{H1}] It rose.", "Risk fell."),  # a group after the stop: unchanged
        (f"Risk fell. (HR 0.8; {H1}) It rose.", "Risk fell."),  # so is one with a remark
    ],
    ids=[
        "link",
        "quoted-link",
        "link-after-a-line-break",
        "link-at-the-end",
        "link-is-the-sentence",
        "group-after-the-stop",
        "group-with-a-remark",
    ],
)
def test_a_links_citation_belongs_to_the_sentence_its_link_text_is_in(
    answer: str, cited: str
) -> None:
    """A link's text is words of its sentence: at a sentence's start the link cites that
    sentence, not the one before (which the rule for a group after a full stop gave it)."""
    sentences = parse_answer(answer).sentences
    assert [s.text for s in sentences if s.citations] == [cited]
    assert [c.handle_text for s in sentences for c in s.citations] == [H1]
