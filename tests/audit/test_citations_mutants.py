"""The answer parser on the inputs its mutation run found untested: what parse_answer returns
for reference lists, footnote markers next to groups, sentences around a group, and the sweep.
Each test fails on a mutant of audit/citations.py that survived the other tests
(docs/mutation.md); the equivalent ones are in data/mutation-equivalent/citations.toml."""

from __future__ import annotations

import pytest

from audit.citations import MAX_CITATIONS_PER_SENTENCE, MAX_QUOTE_CHARS, parse_answer
from audit.errors import LimitExceeded

H1 = "pmid:99000001/abstract.4~ae2tc"
H3 = "nct:NCT99000001@2025-06-02/trial.brief_summary.1~x3v9p"


def _sentences(answer: str) -> list[tuple[str, str, list[str]]]:
    """(kind, text, handle texts) for every sentence, in order."""
    parsed = parse_answer(answer)
    return [(s.kind, s.text, [c.handle_text for c in s.citations]) for s in parsed.sentences]


# --- reference lists --------------------------------------------------------------------------


def test_a_definition_label_with_leading_zeros_is_the_footnote_of_that_number() -> None:
    assert _sentences(f"Risk fell [1].\n\n[01]: {H1}\n") == [("sentence", "Risk fell.", [H1])]


def test_a_definition_on_the_first_line_of_the_answer_resolves() -> None:
    assert _sentences(f"[1]: {H1}\nRisk fell [1].\n") == [("sentence", "Risk fell.", [H1])]


def test_a_definition_after_the_line_that_ends_a_reference_list_resolves() -> None:
    answer = f"Risk fell [1] and rose [2].\n\n## References\n1. {H1}\nSee also:\n[2]: {H3}\n"
    assert _sentences(answer) == [
        ("sentence", "Risk fell and rose.", [H1, H3]),
        ("reference_entry", "See also:", []),
    ]


def test_an_empty_entry_does_not_end_the_reference_list() -> None:
    answer = f"Risk fell [2].\n\n## References\n1. \n2. {H1}\n"  # "1. " ends in a blank
    assert _sentences(answer) == [("sentence", "Risk fell.", [H1])]


def test_a_reference_list_with_crlf_line_ends_resolves() -> None:
    answer = f"Risk fell [1].\r\n\r\n## References\r\n1. {H1}\r\n"
    assert _sentences(answer) == [("sentence", "Risk fell.", [H1])]


def test_an_unused_entry_is_a_list_item_shown_whole_with_its_handle_where_it_stands() -> None:
    answer = f"Risk fell [1].\n\n[1]: {H3}\n[2]: see {H1} in arm X\n"
    parsed = parse_answer(answer)
    assert [(s.kind, s.text) for s in parsed.sentences] == [
        ("sentence", "Risk fell."),
        ("list_item", f"see {H1} in arm X"),
    ]
    (citation,) = parsed.sentences[1].citations
    at = answer.index(H1)
    assert (citation.start, citation.end, citation.handle_span) == (
        at,
        at + len(H1),
        (at, at + len(H1)),
    )


def test_a_footnote_after_a_word_in_its_entry_is_one_citation_spanning_its_handle() -> None:
    answer = f"Risk fell [1].\n\n[1]: see {H1}\n"
    (citation,) = parse_answer(answer).citations
    at = answer.index(H1)
    assert (citation.handle_text, citation.handle_span) == (H1, (at, at + len(H1)))


def test_markers_inside_the_entries_do_not_make_the_list_a_reference_list() -> None:
    # no marker outside the list cites it: it is ordinary text, its handles cited in place
    answer = f"Risk fell.\n\n[1]: {H1} and [2]\n[2]: {H3}\n"
    assert _sentences(answer) == [
        ("sentence", "Risk fell.", []),
        ("sentence", "[1]: and [2] [2]:", [H1, H3]),
    ]


# --- footnote markers -------------------------------------------------------------------------


def test_a_footnote_numbered_high_resolves() -> None:
    assert _sentences(f"Risk fell [25].\n\n[25]: {H1}\n") == [("sentence", "Risk fell.", [H1])]


def test_footnote_range_of_the_limit_is_accepted_and_one_more_is_refused() -> None:
    answer = f"Risk fell [1-{MAX_CITATIONS_PER_SENTENCE}].\n\n[1]: {H1}\n"
    assert len(parse_answer(answer).citations) == MAX_CITATIONS_PER_SENTENCE
    with pytest.raises(LimitExceeded) as caught:
        parse_answer(f"Risk fell [1-51].\n\n[1]: {H1}\n")
    assert str(caught.value) == "footnote range [1-51] names 51 references (limit 50)"


def test_a_marker_naming_a_missing_entry_still_resolves_the_others() -> None:
    answer = f"Risk fell [3, 1].\n\n[1]: {H1}\n"
    missing, found = parse_answer(answer).citations
    assert (missing.raw, missing.handle, missing.error) == (
        "[3, 1]",
        None,
        "footnote [3] has no entry in the reference list",
    )
    assert (found.handle_text, found.error) == (H1, None)


@pytest.mark.parametrize(
    ("answer", "handles"),
    [
        (f"Risk fell [1] [{H3}].\n\n[1]: {H1}\n", [H1, H3]),
        (f"Risk fell [1][{H3}].\n\n[1]: {H1}\n", [H1, H3]),
        (f"Risk fell ({H3})[1].\n\n[1]: {H1}\n", [H3, H1]),
    ],
    ids=["marker-space-group", "marker-group", "group-marker"],
)
def test_a_marker_beside_a_group_leaves_the_display_text(answer: str, handles: list[str]) -> None:
    assert _sentences(answer) == [("sentence", "Risk fell.", handles)]


def test_a_marker_right_after_a_link_leaves_the_display_text() -> None:
    answer = f"Risk fell in [the trial]({H3})[1].\n\n[1]: {H1}\n"
    assert _sentences(answer) == [("sentence", "Risk fell in the trial.", [H3, H1])]


# --- sentences and where a group goes ---------------------------------------------------------


def test_a_group_that_keeps_text_does_not_shift_the_groups_after_it() -> None:
    answer = f"Risk fell (HR 0.8; {H1}). It rose [{H3}]."
    assert _sentences(answer) == [
        ("sentence", "Risk fell (HR 0.8).", [H1]),
        ("sentence", "It rose.", [H3]),
    ]


def test_a_pipe_in_a_paragraph_is_text_and_a_heading_with_pipes_is_a_row_of_cells() -> None:
    assert _sentences("Ratios a|b were high.") == [("sentence", "Ratios a|b were high.", [])]
    assert _sentences("# Risk|Benefit\n\nSafe.") == [
        ("heading", "Risk | Benefit", []),
        ("sentence", "Safe.", []),
    ]


def test_a_group_before_the_first_sentence_belongs_to_it() -> None:
    assert _sentences(f"[{H1}] Risk fell. It rose.") == [
        ("sentence", "Risk fell.", [H1]),
        ("sentence", "It rose.", []),
    ]


@pytest.mark.parametrize(
    ("answer", "expected"),
    [
        (
            f"Risk fell. [{H1}] It rose.",
            [("sentence", "Risk fell.", [H1]), ("sentence", "It rose.", [])],
        ),
        (  # the group's prose stays where it stands: it starts the next sentence
            f"Risk fell. (HR 0.8; {H1}) It rose.",
            [("sentence", "Risk fell.", [H1]), ("sentence", "(HR 0.8) It rose.", [])],
        ),
        (
            f"Risk fell. Dose rose. Harm grew. (HR 0.8; {H1}) Next came.",
            [
                ("sentence", "Risk fell.", []),
                ("sentence", "Dose rose.", []),
                ("sentence", "Harm grew.", [H1]),
                ("sentence", "(HR 0.8) Next came.", []),
            ],
        ),
    ],
    ids=["second-sentence", "second-sentence-with-prose", "fourth-sentence-with-prose"],
)
def test_a_group_after_a_full_stop_belongs_to_the_sentence_just_before(
    answer: str, expected: list[tuple[str, str, list[str]]]
) -> None:
    assert _sentences(answer) == expected


def test_a_group_written_against_the_word_after_a_lead_in_belongs_to_that_sentence() -> None:
    assert _sentences(f"**Safety.** [{H1}]Risk fell.") == [
        ("lead_in", "Safety.", []),
        ("sentence", "Risk fell.", [H1]),
    ]


def test_a_paragraph_of_groups_gives_every_citation_to_the_sentence_before() -> None:
    assert _sentences(f"Risk fell.\n\n[{H1}] [{H3}]\n") == [("sentence", "Risk fell.", [H1, H3])]


def test_a_bold_group_alone_in_a_paragraph_goes_to_the_sentence_before() -> None:
    assert _sentences(f"Risk fell.\n\n**[{H1}]**\n") == [("sentence", "Risk fell.", [H1])]


def test_a_bold_group_alone_after_a_lead_in_goes_to_the_lead_in() -> None:
    assert _sentences(f"**Safety.** **[{H1}]**") == [("lead_in", "Safety.", [H1])]


# --- the sweep --------------------------------------------------------------------------------


def test_a_handle_in_a_fence_line_right_before_a_cited_handle_is_cited_too() -> None:
    answer = f"```{H1}\n{H3} was cited.\n```\n"
    assert _sentences(answer) == [
        ("sentence", f"```{H1}", [H1]),
        ("sentence", "was cited.", [H3]),
    ]


@pytest.mark.parametrize(
    "answer",
    [
        f'Risk fell [1].\n\n[1]: see {H1} "{{quote}}"\n',  # a footnote entry
        f'Risk fell.\n\n[1]: see {H1} "{{quote}}"\n',  # a definition nothing cites: text
        f'Risk fell [{H1} "{{quote}}"].\n',  # a group
    ],
    ids=["footnote-entry", "uncited-definition", "group"],
)
def test_a_quote_over_the_limit_is_located_at_its_opening_mark(answer: str) -> None:
    answer = answer.format(quote="x" * (MAX_QUOTE_CHARS + 1))
    with pytest.raises(LimitExceeded) as caught:
        parse_answer(answer)
    at = answer.index('"')
    assert str(caught.value) == f"quote at character {at} is 2,001 characters long (limit 2,000)"
