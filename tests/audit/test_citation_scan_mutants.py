"""What :func:`find_units` makes of the markup around a handle: the span that leaves the
display text, each element's quote, raw text and quote position, and when the markup cannot
be read (the cases the mutation run of audit/citation_scan.py showed untested)."""

from __future__ import annotations

import pytest

from audit.citation_scan import Candidate, bracket_pairs, find_candidates, find_units

H = "pmid:99000001/abstract.4~ae2tc"
H2 = "nct:NCT99000001@2025-06-02/trial.brief_summary.1~x3v9p"


def _units(template: str) -> list[tuple[str, str, list[tuple[str | None, str, bool]]]]:
    """(unit text, replacement, [(quote, raw text, malformed)]) of each unit of the text."""
    text = template.format(h=H, h2=H2)
    return [
        (
            text[unit.start : unit.end],
            unit.replacement,
            [(e.quote, text[e.raw_start : e.raw_end], e.error is not None) for e in unit.elements],
        )
        for unit in find_units(text)
    ]


def _quote_marks(template: str) -> list[int]:
    """Where, in the text, the quote of each element opens (-1: no quote)."""
    text = template.format(h=H, h2=H2)
    return [e.quote_start for unit in find_units(text) for e in unit.elements]


# --- bare handles -----------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("template", "unit"),
    [
        ("Risk fell **{h}**.", f"**{H}**"),
        ("Risk fell __{h}__.", f"__{H}__"),
        ("Risk fell *{h}*.", f"*{H}*"),
        ("Risk fell _{h}_.", f"_{H}_"),
        ("Risk fell `{h}`.", f"`{H}`"),
        ("**{h}** says so.", f"**{H}**"),
        ("*{h}* says so.", f"*{H}*"),
    ],
)
def test_emphasis_around_a_bare_handle_leaves_with_it(template: str, unit: str) -> None:
    assert _units(template) == [(unit, "", [(None, H, False)])]


@pytest.mark.parametrize("template", ["Risk fell *{h} here.", "Risk fell {h}** here.", "_{h} x"])
def test_an_unmatched_emphasis_mark_stays_in_the_display_text(template: str) -> None:
    assert _units(template) == [(H, "", [(None, H, False)])]


def test_a_quote_after_a_bare_handle_and_a_colon_ends_the_unit_at_its_closing_mark() -> None:
    assert _units("Risk {h}: “a”. Then") == [(f"{H}: “a”", "", [("a", f"{H}: “a”", False)])]
    assert _quote_marks("Risk {h}: “a”. Then") == [len(f"Risk {H}: ")]


@pytest.mark.parametrize(
    "template",
    [
        "Risk {h}“a”.",  # a quote mark right after the handle opens no quote
        "Risk {h} X “a”.",  # a word between the handle and the quote
        "Risk {h}, “a”.",
    ],
)
def test_a_quote_not_right_after_a_space_or_colon_is_not_the_handles(template: str) -> None:
    assert _units(template) == [(H, "", [(None, H, False)])]


def test_a_bare_handles_quote_cannot_run_past_the_next_handle() -> None:
    """“a {h2} b” would quote the next handle: the first handle's quote is unclosed."""
    assert _units("Risk {h} “a {h2} b”.") == [
        (H, "", [(None, H, True)]),
        (H2, "", [(None, H2, False)]),
    ]


@pytest.mark.parametrize(
    "template",
    [
        "Risk fell ({h} and more.",
        "Risk fell [{h} and more.",
        "Risk fell ( {h} and more.",
        "Risk fell (\t{h} and more.",
        "({h} and more.",
        "[ {h} and more.",
    ],
)
def test_a_bare_handle_right_after_a_bracket_that_never_closes_is_malformed(
    template: str,
) -> None:
    assert _units(template) == [(H, "", [(None, H, True)])]


@pytest.mark.parametrize(
    "template",
    [
        "Risk (X {h} and more.",  # a word between the open bracket and the handle
        "Table X {h} and more.",
        "{h} says so (",  # the answer ends with the bracket, after the handle
        "{h} says so [",
        " {h} says so [",
    ],
)
def test_a_bare_handle_not_right_after_an_open_bracket_is_well_formed(template: str) -> None:
    assert _units(template) == [(H, "", [(None, H, False)])]


# --- groups -----------------------------------------------------------------------------------


def test_a_quote_holding_its_own_opening_mark_is_malformed_in_a_group() -> None:
    """[h “a “b”]: the quote may end at either closing mark, so it cannot be read."""
    assert _units("Risk fell [{h} “a “b”].") == [
        (f"[{H} “a “b”]", "", [("a “b", f"{H} “a “b”", True)])
    ]


def test_two_unclosed_quotes_in_a_group_make_it_malformed() -> None:
    assert _units("Risk fell [{h} “a “b c].") == [(f"[{H} “a “b c]", "", [(None, H, True)])]
    assert _units("Risk fell [{h} “a; {h2} “b c].") == [
        (f"[{H} “a; {H2} “b c]", "", [(None, H, True), (None, H2, True)])
    ]


# --- Markdown links ---------------------------------------------------------------------------


@pytest.mark.parametrize("link_text", ["", " "])
def test_a_link_with_an_empty_text_cites_its_handle(link_text: str) -> None:
    assert _units(f"See [{link_text}]({{h}}).") == [
        (f"[{link_text}]({H})", link_text, [(None, H, False)])
    ]


@pytest.mark.parametrize("link_text", ['"', "figure X", "Table X", '" a', "”x”y"])
def test_a_link_text_that_is_not_one_quote_is_display_text(link_text: str) -> None:
    assert _units(f"See [{link_text}]({{h}}).") == [
        (f"[{link_text}]({H})", link_text, [(None, H, False)])
    ]


@pytest.mark.parametrize("link_text", ["“a “b”", "““a”", "“a“”", '"a" b"'])
def test_a_link_text_quoted_at_both_ends_but_not_one_quote_is_malformed(link_text: str) -> None:
    assert _units(f"See [{link_text}]({{h}}).") == [
        (f"[{link_text}]({H})", link_text, [(None, H, True)])
    ]


def test_a_wholly_quoted_link_text_is_the_quote_of_the_whole_link() -> None:
    template = 'See [ "a b" ]({h}) now.'
    link = f'[ "a b" ]({H})'
    assert _units(template) == [(link, ' "a b" ', [("a b", link, False)])]
    assert _quote_marks(template) == [len("See [ ")]


def test_a_curly_quoted_link_text_opens_at_its_first_mark() -> None:
    assert _quote_marks("See [“a b”]({h}).") == [len("See [")]
    assert _quote_marks("See [  “a b”]({h}).") == [len("See [  ")]


def test_a_quote_in_the_link_target_is_the_handles_and_wins_over_the_link_text() -> None:
    template = 'See ["a"]({h} "b").'
    assert _units(template) == [(f'["a"]({H} "b")', '"a"', [("b", f'{H} "b"', False)])]
    assert _quote_marks(template) == [len(f'See ["a"]({H} ')]


def test_an_unclosed_quote_in_the_link_target_is_malformed() -> None:
    assert _units("See [text]({h} “a).") == [(f"[text]({H} “a)", "text", [(None, H, True)])]


def test_a_quote_in_a_group_cannot_run_past_the_next_handle() -> None:
    """[h “a h2 b”]: a quote that would hold the next handle is unclosed; both are cited."""
    assert [elements for _, _, elements in _units("Risk fell [{h} “a {h2} b”].")] == [
        [(None, H, True), (None, H2, True)]
    ]


def test_a_quote_mark_right_after_a_handle_in_a_group_opens_its_quote() -> None:
    assert _units("Risk fell [{h}“a”].") == [(f"[{H}“a”]", "", [("a", f"{H}“a”", False)])]


@pytest.mark.parametrize(
    "template", ["Risk fell [see {h}; Smith 2020].", "Risk fell [see {h} Smith 2020]."]
)
def test_prose_after_filler_words_in_a_group_stays_in_the_display_text(template: str) -> None:
    assert [replacement for _, replacement, _ in _units(template)] == ["[Smith 2020]"]


@pytest.mark.parametrize("template", ["Risk fell[{h}].", "Risk “fell”[{h}].", "[{h}] Risk fell."])
def test_a_group_glued_to_the_word_before_it_leaves_whole(template: str) -> None:
    assert _units(template) == [(f"[{H}]", "", [(None, H, False)])]


@pytest.mark.parametrize(
    "template",
    [
        "Risk fell [{h}; “b” {h2}].",  # a quote after a separator goes to the handle after it
        "Risk fell [{h}, “b” {h2}].",
        "Risk fell [{h};“b” {h2}].",
    ],
)
def test_a_separator_ends_an_element(template: str) -> None:
    assert [elements for _, _, elements in _units(template)] == [
        [(None, H, False), ("b", f"“b” {H2}", False)]
    ]


def test_a_separator_right_after_a_quote_ends_its_element() -> None:
    assert [elements for _, _, elements in _units("Risk fell [{h} “a”; “b” {h2}].")] == [
        [("a", f"{H} “a”", False), ("b", f"“b” {H2}", False)]
    ]


@pytest.mark.parametrize(
    ("template", "replacement"),
    [
        ("Risk fell [see Table X, {h}].", "[see Table X]"),
        ("Risk fell [cf {h}].", ""),
        ("Risk fell [cf. ab {h}].", "[cf. ab]"),
        ("Risk fell [as in Table 2 {h}].", "[as in Table 2]"),
    ],
)
def test_prose_before_a_handle_in_a_group_is_kept_whole(template: str, replacement: str) -> None:
    assert [(r, elements) for _, r, elements in _units(template)] == [
        (replacement, [(None, H, False)])
    ]


@pytest.mark.parametrize("template", ["Risk fell [“{h}”; “{h2}”].", "Risk fell [“{h}”, “{h2}”]."])
def test_quote_marks_right_around_each_handle_of_a_group_quote_the_handle(template: str) -> None:
    assert [elements for _, _, elements in _units(template)] == [
        [(None, H, False), (None, H2, False)]
    ]


@pytest.mark.parametrize("template", ["Risk fell [{h} x“;” {h2}].", "Risk fell [{h} x“, ”y {h2}]."])
def test_quote_marks_around_a_separator_are_left_over_marks(template: str) -> None:
    """x“;”: the opening mark is glued to a word, so no quote opens; the marks are unreadable."""
    assert [elements for _, _, elements in _units(template)] == [
        [(None, H, True), (None, H2, True)]
    ]


def test_each_quote_of_a_group_goes_to_the_handle_before_it() -> None:
    assert [elements for _, _, elements in _units("Risk fell [{h} “a” {h2} “b”].")] == [
        [("a", f"{H} “a”", False), ("b", f"{H2} “b”", False)]
    ]


def test_a_group_right_after_a_bracketed_word_is_a_group_not_a_link() -> None:
    """[a][h] is no Markdown link with a handle target: only [h] leaves, [a] stays."""
    assert _units("Risk fell [a][{h}].") == [(f"[{H}]", "", [(None, H, False)])]


def test_a_bare_handles_quote_cannot_run_past_a_group_after_it() -> None:
    assert _units("Risk {h} “a [{h2}] b”.") == [
        (H, "", [(None, H, True)]),
        (f"[{H2}]", "", [(None, H2, False)]),
    ]


def test_two_adjacent_groups_with_handles_leave_as_one_unit() -> None:
    assert _units("[{h}][{h2}]") == [(f"[{H}][{H2}]", "", [(None, H, False), (None, H2, False)])]


# --- quotes that may have run past their group ------------------------------------------------


@pytest.mark.parametrize("template", ["{h} “a”] b.", "Risk {h} “a”] b.", "Risk {h} b”]{h2} more."])
def test_a_quote_mark_before_a_closer_that_closes_nothing_makes_the_line_malformed(
    template: str,
) -> None:
    assert all(malformed for _, _, els in _units(template) for _, _, malformed in els)


def test_a_run_on_quote_mark_leaves_the_other_lines_alone() -> None:
    assert _units("Risk [{h}].\nThen “a”] b.") == [(f"[{H}]", "", [(None, H, False)])]


# --- candidates and brackets ------------------------------------------------------------------


@pytest.mark.parametrize(
    ("text", "spans"),
    [
        ("жmid:99000001/abstract.4~ae2tc", [(0, 30)]),  # the token starts with the text
        ("see жmid:99000001/abstract.4~ae2tc", [(4, 34)]),  # ... but not before a space
        ("ab:c/d~eжxy:z/w~v", [(0, 8), (8, 17)]),  # ... nor inside the candidate before it
    ],
)
def test_an_unknown_scheme_after_non_ascii_text_starts_where_that_text_does(
    text: str, spans: list[tuple[int, int]]
) -> None:
    assert [(c.start, c.end) for c in find_candidates(text)] == spans


def test_a_known_scheme_glued_to_one_character_before_it_is_glued() -> None:
    assert find_candidates("/pmid:99000001/abstract.4~ae2tc") == [Candidate(1, 31, glued=True)]


@pytest.mark.parametrize(
    ("text", "pairs"),
    [
        ("a\n[“x ] y”]", {2: 10}),  # a quote on a later line is quote text too
        ("[„a“ b” c ] d”]", {0: 14}),  # a quote opened by ” after „…“ runs to the next ”
        ("[“” a ] b”]", {0: 6}),  # an empty quote closes right away
        ("[“a\n] b”]\nc", {0: 4}),  # a quote never runs to a later line
    ],
)
def test_brackets_inside_a_quote_in_a_bracket_are_quote_text(
    text: str, pairs: dict[int, int]
) -> None:
    assert bracket_pairs(text) == pairs


@pytest.mark.parametrize(
    ("text", "spans"),
    [
        ("PMID:30831578~ae2tc", [(0, 19)]),  # a check code makes it handle-like in any case
        ("PMID:123 and pmid:99000001/abstract.4~ae2tc", [(13, 43)]),  # the scan goes on
        ("see PMID:123, then PMID:456", []),
    ],
)
def test_an_ordinary_reference_is_no_candidate_and_the_scan_goes_past_it(
    text: str, spans: list[tuple[int, int]]
) -> None:
    assert [(c.start, c.end) for c in find_candidates(text)] == spans


@pytest.mark.parametrize(
    ("text", "spans"),
    [
        ("see pmid:.", []),  # a scheme and a colon with nothing after them
        ("pmid:.", []),
        ("_pmid:_", []),
        ("__pmid:__", []),
        ("pmid:1", [(0, 6)]),  # one character after the colon is a candidate (malformed)
        ("see pmid:1.", [(4, 10)]),
        ("_pmid:99000001/abstract.4~ae2tc_", [(1, 31)]),  # emphasis around it is not in it
        ("__pmid:99000001/abstract.4~ae2tc__", [(2, 32)]),
    ],
)
def test_a_known_scheme_needs_something_after_its_colon(
    text: str, spans: list[tuple[int, int]]
) -> None:
    assert [(c.start, c.end) for c in find_candidates(text)] == spans
