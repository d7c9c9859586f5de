"""The handle codec: grammar, exact errors, mint/verify, property tests."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from audit.errors import CitationSyntaxError
from audit.handles import (
    PINNED_SCHEMES,
    Handle,
    Locator,
    mint,
    parse_handle,
    parse_locator,
    verify,
)
from audit.keys import CHECK_ALPHABET, Keyring

KEYRING = Keyring.from_keys(b"k" * 32)
OTHER = Keyring.from_keys(b"o" * 32)


@pytest.mark.parametrize(
    ("text", "locator"),
    [
        ("pmid:99000001/title", Locator("pmid", "99000001", "title")),
        ("pmid:99000001@2/abstract.2", Locator("pmid", "99000001", "abstract.2", "2")),
        ("pmcid:PMC99000001/body.methods.p3", Locator("pmcid", "PMC99000001", "body.methods.p3")),
        ("ppr:PPR990001@1/abstract.1", Locator("ppr", "PPR990001", "abstract.1", "1")),
        (
            "nct:NCT99000001@2025-06-02/trial.brief_summary.1",
            Locator("nct", "NCT99000001", "trial.brief_summary.1", "2025-06-02"),
        ),
        (
            "setid:5eed0001-0000-4000-8000-000000000001@4/label.boxed_warning.1",
            Locator("setid", "5eed0001-0000-4000-8000-000000000001", "label.boxed_warning.1", "4"),
        ),
    ],
)
def test_locators_parse_and_print_back(text: str, locator: Locator) -> None:
    assert parse_locator(text) == locator
    assert locator.text == text


def test_record_id_and_handle_text() -> None:
    locator = parse_locator("nct:NCT99000001@2025-06-02/trial.brief_summary.1")
    assert locator.record_id == "nct:NCT99000001"
    handle = Handle(locator, "x3v9p")
    assert handle.text == "nct:NCT99000001@2025-06-02/trial.brief_summary.1~x3v9p"
    assert parse_handle(handle.text) == handle


SCHEMES_MESSAGE = "(expected one of pmid, pmcid, ppr, nct, setid, local)"


@pytest.mark.parametrize(
    ("text", "message", "span"),
    [
        ("pmd:1/title~abcde", f"unknown scheme 'pmd' {SCHEMES_MESSAGE}", (0, 3)),
        ("PMID:1/title~abcde", f"unknown scheme 'PMID' {SCHEMES_MESSAGE}", (0, 4)),
        (
            "",
            "expected a scheme (one of pmid, pmcid, ppr, nct, setid, local), got end of text",
            (0, 1),
        ),
        (
            "9:1/t~abcde",
            "expected a scheme (one of pmid, pmcid, ppr, nct, setid, local), got '9'",
            (0, 1),
        ),
        ("pmid", "expected ':' after the scheme, got end of text", (4, 5)),
        ("pmid;1/t~abcde", "expected ':' after the scheme, got ';'", (4, 5)),
        (
            "nct:NCT123/trial.x~abcde",
            "nct id must be NCT followed by 8 digits, got 'NCT123'",
            (4, 10),
        ),
        (
            "pmid:30831578-abstract",
            "pmid must be 1 to 10 digits without a leading zero, got '30831578-abstract'",
            (5, 22),
        ),
        (
            "pmid:0123/t~abcde",
            "pmid must be 1 to 10 digits without a leading zero, got '0123'",
            (5, 9),
        ),
        ("pmid:/t~abcde", "pmid must be 1 to 10 digits without a leading zero, got ''", (5, 6)),
        (
            "pmcid:99000001/t~abcde",
            "pmcid must be PMC followed by 1 to 10 digits without a leading zero, got '99000001'",
            (6, 14),
        ),
        (
            "ppr:ppr1/t~abcde",
            "ppr id must be PPR followed by 1 to 10 digits without a leading zero, got 'ppr1'",
            (4, 8),
        ),
        (
            "setid:5EED0001-0000-4000-8000-000000000001/t~abcde",
            "setid must be a lower-case UUID (8-4-4-4-12 hex digits), "
            "got '5EED0001-0000-4000-8000-000000000001'",
            (6, 42),
        ),
        (
            "nct:NCT99000001@/t~abcde",
            "version must start with a letter or digit and contain only letters, digits, '.' and "
            "'-' (at most 40 characters), got ''",
            (16, 17),
        ),
        (
            "nct:NCT99000001@-1/t~abcde",
            "version must start with a letter or digit and contain only letters, digits, '.' and "
            "'-' (at most 40 characters), got '-1'",
            (16, 18),
        ),
        ("pmid:1", "expected '/' followed by a passage path, got end of text", (6, 7)),
        ("pmid:1~abcde", "expected '/' followed by a passage path, got '~'", (6, 7)),
        ("pmid:1/~abcde", "empty passage path after '/'", (7, 8)),
        (
            "pmid:1/Title~abcde",
            "path segments must be lower-case letters, digits or '_' separated by '.', "
            "got 'T' in 'Title'",
            (7, 8),
        ),
        (
            "pmid:1/abstract..2~abcde",
            "path segments must be lower-case letters, digits or '_' separated by '.', "
            "got an empty segment in 'abstract..2'",
            (16, 17),
        ),
        (
            "pmid:1/abstract.2.~abcde",
            "path segments must be lower-case letters, digits or '_' separated by '.', "
            "got an empty segment in 'abstract.2.'",
            (18, 19),
        ),
        (
            "pmid:1/title",
            "missing check code: expected '~' followed by 5 characters",
            (12, 13),
        ),
        (
            "pmid:1/title~ABCDE",
            "check code must be 5 lower-case Crockford base32 characters (0-9, a-z without i, l, "
            "o, u), got 'ABCDE'",
            (13, 18),
        ),
        (
            "pmid:1/title~abcd",
            "check code must be 5 lower-case Crockford base32 characters (0-9, a-z without i, l, "
            "o, u), got 'abcd'",
            (13, 17),
        ),
        (
            "pmid:1/title~abcdef",
            "check code must be 5 lower-case Crockford base32 characters (0-9, a-z without i, l, "
            "o, u), got 'abcdef'",
            (13, 19),
        ),
        (
            "pmid:1/title~abcdl",
            "check code must be 5 lower-case Crockford base32 characters (0-9, a-z without i, l, "
            "o, u), got 'abcdl'",
            (13, 18),
        ),
    ],
)
def test_grammar_errors_say_what_failed_and_where(
    text: str, message: str, span: tuple[int, int]
) -> None:
    with pytest.raises(CitationSyntaxError) as caught:
        parse_handle(text)
    assert caught.value.message == message
    assert (caught.value.start, caught.value.end) == span


PIN = "handles pin the record version: expected '@' and a version after the id"


@pytest.mark.parametrize(
    ("text", "message", "span"),
    [
        ("nct:NCT99000001/trial.brief_summary.1~1td1a", f"nct {PIN}, got '/'", (15, 16)),
        (
            "setid:5eed0001-0000-4000-8000-000000000001/label.boxed_warning.1~abcde",
            f"setid {PIN}, got '/'",
            (42, 43),
        ),
        ("ppr:PPR990001/abstract.1~abcde", f"ppr {PIN}, got '/'", (13, 14)),
        ("nct:NCT99000001", f"nct {PIN}, got end of text", (15, 16)),
    ],
)
def test_trial_label_and_preprint_handles_without_a_version_are_malformed(
    text: str, message: str, span: tuple[int, int]
) -> None:
    with pytest.raises(CitationSyntaxError) as caught:
        parse_handle(text)
    assert (caught.value.message, (caught.value.start, caught.value.end)) == (message, span)
    assert caught.value.expected == "'@' version"
    locator = text.split("~")[0]
    with pytest.raises(CitationSyntaxError) as again:
        parse_locator(locator)
    assert again.value.message == message


def test_mint_refuses_an_unpinned_trial_label_or_preprint_locator() -> None:
    for scheme, ident in (
        ("nct", "NCT99000001"),
        ("setid", "5eed0001-0000-4000-8000-000000000001"),
        ("ppr", "PPR990001"),
    ):
        with pytest.raises(CitationSyntaxError) as caught:
            mint(KEYRING, Locator(scheme, ident, "trial.brief_summary.1"))
        assert caught.value.message == f"{scheme} {PIN}, got '/'"
    assert mint(KEYRING, Locator("pmid", "99000001", "title")).startswith("pmid:99000001/title~")


def test_the_caret_under_an_unpinned_trial_points_at_the_missing_version() -> None:
    with pytest.raises(CitationSyntaxError) as caught:
        parse_handle("nct:NCT99000001/trial.brief_summary.1~1td1a")
    assert caught.value.caret() == (
        "nct:NCT99000001/trial.brief_summary.1~1td1a\n" + " " * 15 + "^"
    )


def test_caret_marks_the_failing_part() -> None:
    with pytest.raises(CitationSyntaxError) as caught:
        parse_handle("nct:NCT123/trial.x~abcde")
    assert caught.value.caret() == "nct:NCT123/trial.x~abcde\n    ^^^^^^"
    assert caught.value.expected == "nct id"


def test_long_version_and_path_are_refused() -> None:
    with pytest.raises(CitationSyntaxError) as caught:
        parse_locator("nct:NCT99000001@" + "1" * 41 + "/t")
    assert caught.value.expected == "version"
    with pytest.raises(CitationSyntaxError) as caught:
        parse_locator("pmid:1/" + "a" * 201)
    assert caught.value.message == "passage path is 201 characters long (at most 200)"


def test_locator_refuses_a_check_code() -> None:
    with pytest.raises(CitationSyntaxError) as caught:
        parse_locator("pmid:1/title~abcde")
    assert caught.value.message == (
        "unexpected '~' after the passage path (a locator has no check code)"
    )


def test_mint_known_vector_with_the_demo_key() -> None:
    """Pinned: changing the check code function would break every published handle."""
    demo = Keyring.demo_keyring()
    assert mint(demo, parse_locator("pmid:30831578/abstract.7")) == "pmid:30831578/abstract.7~wk9p5"


def test_mint_then_verify() -> None:
    text = mint(KEYRING, parse_locator("nct:NCT99000001@2025-06-02/trial.brief_summary.1"))
    handle = parse_handle(text)
    assert verify(KEYRING, handle)
    assert not verify(OTHER, handle)


def test_mint_refuses_a_hand_built_locator_that_breaks_the_grammar() -> None:
    with pytest.raises(CitationSyntaxError) as caught:
        mint(KEYRING, Locator("pmid", "99000001", "Title"))
    assert caught.value.expected == "path segment"
    with pytest.raises(CitationSyntaxError) as caught:
        mint(KEYRING, Locator("pmid", "1@2", "title"))  # reads back as version 2
    assert (
        caught.value.message == "locator 'pmid:1@2/title' does not round-trip through the grammar"
    )


def test_a_forged_check_does_not_verify() -> None:
    text = mint(KEYRING, parse_locator("pmid:99000001/title"))
    forged = text[:-5] + ("00000" if text[-5:] != "00000" else "11111")
    assert not verify(KEYRING, parse_handle(forged))


def test_moving_a_check_to_another_passage_does_not_verify() -> None:
    check = mint(KEYRING, parse_locator("pmid:99000001/abstract.1"))[-5:]
    assert not verify(KEYRING, parse_handle(f"pmid:99000001/abstract.2~{check}"))


# --- properties ------------------------------------------------------------------------------

_DIGITS = st.text("0123456789", min_size=0, max_size=9)
_NUMBER = st.builds(lambda first, rest: first + rest, st.sampled_from("123456789"), _DIGITS)
_SEGMENT = st.text("abcdefghijklmnopqrstuvwxyz0123456789_", min_size=1, max_size=12)
_PATH = st.lists(_SEGMENT, min_size=1, max_size=4).map(".".join)
_VERSION = st.builds(
    lambda first, rest: first + rest,
    st.sampled_from("0123456789abcXYZ"),
    st.text("0123456789abcXYZ.-", max_size=12),
)
_HEX = "0123456789abcdef"
_UUID = st.tuples(*(st.text(_HEX, min_size=n, max_size=n) for n in (8, 4, 4, 4, 12))).map("-".join)
_IDS = {
    "pmid": _NUMBER,
    "pmcid": _NUMBER.map(lambda n: f"PMC{n}"),
    "ppr": _NUMBER.map(lambda n: f"PPR{n}"),
    "nct": st.text("0123456789", min_size=8, max_size=8).map(lambda n: f"NCT{n}"),
    "setid": _UUID,
}
LOCATORS = st.sampled_from(sorted(_IDS)).flatmap(
    lambda scheme: st.builds(
        Locator,
        scheme=st.just(scheme),
        id=_IDS[scheme],
        path=_PATH,
        version=_VERSION if scheme in PINNED_SCHEMES else st.none() | _VERSION,
    )
)


@settings(max_examples=200, deadline=None)
@given(LOCATORS)
def test_mint_verify_round_trip(locator: Locator) -> None:
    text = mint(KEYRING, locator)
    handle = parse_handle(text)
    assert handle.locator == locator
    assert handle.text == text
    assert all(c in CHECK_ALPHABET for c in handle.check)
    assert verify(KEYRING, handle)


@settings(max_examples=200, deadline=None)
@given(LOCATORS, st.data())
def test_any_single_character_change_is_rejected(locator: Locator, data: st.DataObject) -> None:
    text = mint(KEYRING, locator)
    position = data.draw(st.integers(0, len(text) - 1), label="position")
    replacement = data.draw(
        st.characters(codec="utf-8").filter(lambda c: c != text[position]), label="replacement"
    )
    changed = text[:position] + replacement + text[position + 1 :]
    try:
        handle = parse_handle(changed)
    except CitationSyntaxError:
        return  # malformed
    assert not verify(KEYRING, handle)  # forged, never ok


@settings(max_examples=200, deadline=None)
@given(LOCATORS.filter(lambda loc: loc.scheme in PINNED_SCHEMES))
def test_no_pinned_scheme_handle_parses_without_its_version(locator: Locator) -> None:
    text = mint(KEYRING, locator)
    assert locator.version is not None
    unpinned = text.replace(f"@{locator.version}/", "/", 1)
    with pytest.raises(CitationSyntaxError) as caught:
        parse_handle(unpinned)
    assert caught.value.expected == "'@' version"


@settings(max_examples=100, deadline=None)
@given(st.text(max_size=80))
def test_parser_only_raises_syntax_errors(text: str) -> None:
    try:
        handle = parse_handle(text)
    except CitationSyntaxError as error:
        assert 0 <= error.start < error.end <= max(len(text), error.start + 1)
        return
    assert handle.text == text
