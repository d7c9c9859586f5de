"""Sentence splitting: a full stop after an abbreviation or initials does not end a sentence."""

from __future__ import annotations

import pytest

from audit.sentences import lead_in_end, sentence_spans, split_blocks


def sentences(text: str) -> list[str]:
    return [text[start:end] for start, end in sentence_spans(text)]


@pytest.mark.parametrize(
    "first",
    [
        "See fig. 3 for the dose.",
        "See Fig. 3 for the dose.",
        "See figs. 3 and 4 for the dose.",
        "As shown (fig. 2) the dose was low.",
        "As Smith et al. Reported, the dose was low.",
        "Dosing per Dr. Smith was low.",
        "It was approved in the U.S. Market in May.",
        "Signs, e.g. Fever, were rare.",
    ],
)
def test_an_abbreviation_does_not_end_the_sentence(first: str) -> None:
    assert sentences(first + " Then it stopped.") == [first, "Then it stopped."]


@pytest.mark.parametrize(
    "first",
    ["It was given in trial XV.", "It was given in trial Xfig.", "The dose was 5 mg."],
)
def test_a_full_stop_after_another_word_ends_the_sentence(first: str) -> None:
    assert sentences(first + " Then it stopped.") == [first, "Then it stopped."]


def test_sentences_are_found_in_the_text_after_start_only() -> None:
    text = "Alpha. Beta gamma. Delta."
    assert sentence_spans(text, 9) == [(9, 18), (19, 25)]  # "ta gamma.", "Delta."
    assert sentence_spans(text) == [(0, 6), (7, 18), (19, 25)]


def test_a_full_stop_before_a_lower_case_word_does_not_end_the_sentence() -> None:
    text = "The dose was low. then it rose. Then it stopped."
    assert sentences(text) == ["The dose was low. then it rose.", "Then it stopped."]


@pytest.mark.parametrize("text", ["", "  \n "])
def test_a_text_without_words_has_no_sentences(text: str) -> None:
    assert sentence_spans(text) == []


@pytest.mark.parametrize(
    ("text", "end"),
    [
        ("**Safety.** Take one a day.", 12),  # the space after it belongs to it
        ("**Dose**: Take one a day.", 9),
        ("**Dose** take one a day.", None),  # bold, but no full stop or colon: not a lead-in
        ("**Trial X** was run in May.", None),
        ("**Safety.**", None),  # nothing after it: the bold text is the sentence
        ("**Safety.**   ", None),
    ],
)
def test_a_bold_lead_in_ends_with_punctuation_and_has_text_after_it(
    text: str, end: int | None
) -> None:
    assert lead_in_end(text) == end


def test_the_lines_of_a_code_fence_are_one_paragraph() -> None:
    answer = "Intro.\n\n```\nline one\nline two\n```\n"
    blocks = split_blocks(answer)
    assert [(b.kind, b.text(answer)) for b in blocks] == [
        ("paragraph", "Intro."),
        ("paragraph", "line one\nline two"),
    ]


@pytest.mark.parametrize(
    ("answer", "heading"),
    [
        ("## Dose ##\n", "Dose"),
        ("# Dose #  \n", "Dose"),
        ("### Dose\n", "Dose"),
        ("## C# ##", "C#"),
        ("Intro.\n\n## Dose ##\n", "Dose"),  # a heading further down the answer
        ("## Dose ##\r\n", "Dose"),  # Windows line ends
    ],
)
def test_the_closing_hashes_of_a_heading_are_not_its_text(answer: str, heading: str) -> None:
    blocks = [(b.kind, b.text(answer)) for b in split_blocks(answer)]
    assert blocks[-1] == ("heading", heading)


@pytest.mark.parametrize(
    ("answer", "text"),
    [("|a|b|\n", "a|b"), ("  |a|b|\n", "a|b"), ("Intro.\n\n|a|b|", "a|b"), ("|a|X|", "a|X")],
)
def test_a_table_row_is_the_text_between_its_outer_bars(answer: str, text: str) -> None:
    assert [(b.kind, b.text(answer)) for b in split_blocks(answer)][-1] == ("table_row", text)


def test_a_separator_row_makes_the_row_above_the_header_and_alone_is_nothing() -> None:
    answer = "|a|b|\n|---|---|\n|1|2|\n"
    assert [(b.kind, b.text(answer)) for b in split_blocks(answer)] == [
        ("heading", "a|b"),
        ("table_row", "1|2"),
    ]
    assert split_blocks("|---|---|\n") == []


def test_a_line_ending_in_x_keeps_it() -> None:
    answer = "It was phase X\nof the trial, in 2025 X\n"
    assert [b.text(answer) for b in split_blocks(answer)] == [
        "It was phase X\nof the trial, in 2025 X"
    ]


def test_a_blank_quoted_line_ends_a_paragraph_and_the_answer_goes_on() -> None:
    answer = "> First part.\n>\n> Second part.\n\nAfter."
    assert [b.text(answer) for b in split_blocks(answer)] == [
        "First part.",
        "Second part.",
        "After.",
    ]


def test_markdown_inside_a_code_fence_is_plain_text() -> None:
    answer = "```\n# not a heading\n- not an item\n```\nAfter it.\n"
    blocks = split_blocks(answer)
    assert [(b.kind, b.text(answer)) for b in blocks] == [
        ("paragraph", "# not a heading\n- not an item"),
        ("paragraph", "After it."),
    ]


def test_a_heading_without_text_is_no_block() -> None:
    assert split_blocks("#\n") == []
    # CommonMark: closing hashes may follow the opening's blank, so these are empty headings
    assert split_blocks("## ##\n") == split_blocks("#  #\n") == split_blocks("### ### \n") == []
