"""The handle codec: grammar, exact errors, mint/verify, property tests."""

from __future__ import annotations

from collections.abc import Callable
from typing import TypeVar

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from audit import handles
from audit.errors import CitationSyntaxError
from audit.handles import (
    PINNED_SCHEMES,
    PRECISE_ONLY,
    Handle,
    Locator,
    _fast_handle,
    _fast_locator,
    _precise_handle,
    _precise_locator,
    mint,
    parse_handle,
    parse_locator,
    verify,
)
from audit.keys import CHECK_ALPHABET, Keyring

_T = TypeVar("_T")
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


def test_a_parsed_handle_gives_its_parts_and_cannot_be_changed() -> None:
    text = "nct:NCT99000001@2025-06-02/trial.brief_summary.1~x3v9p"
    handle = parse_handle(text)
    assert handle.check == "x3v9p"
    assert handle.locator == Locator("nct", "NCT99000001", "trial.brief_summary.1", "2025-06-02")
    assert handle.locator.text == text[:-6]
    assert handle.locator is handle.locator  # built once
    assert {handle: 1}[parse_handle(text)] == 1
    assert handle != parse_handle(text[:-1] + "q")
    assert repr(handle) == (
        "Handle(Locator(scheme='nct', id='NCT99000001', path='trial.brief_summary.1', "
        "version='2025-06-02'), 'x3v9p')"
    )
    with pytest.raises(AttributeError):
        handle.text = "pmid:1/title~abcde"  # type: ignore[misc]
    with pytest.raises(AttributeError):
        handle.locator.path = "title"  # type: ignore[misc]


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


# --- the fast accepting path equals the precise parser -----------------------------------------

_LOOKALIKES = (
    "٣",  # Arabic-Indic digit three (``\d`` would match it)
    "１",  # fullwidth digit one
    "ａ",  # fullwidth a
    "К",  # Cyrillic capital ka
    "о",  # Cyrillic o
    "ı",  # dotless i
    "İ",  # dotted capital I
    "ſ",  # long s (folds to s)
    "K",  # Kelvin sign (folds to k)
    "\u200b",  # zero-width space
    "\u00a0",  # no-break space
    "\n",
    "\t",
    " ",
)
_REPLACEMENTS = st.sampled_from(
    (
        *_LOOKALIKES,
        *"~@/:.-_",
        *CHECK_ALPHABET,
        *"ilouILOU",
        *"PMCNTRabcdefXYZ",
    )
) | st.characters(codec="utf-8")


@st.composite
def _handle_texts(draw: st.DrawFn) -> str:
    """A well-formed handle (random check code, parts up to and past their length limits),
    then zero to two mutations: a substitution, an insertion, a deletion, a dropped span, a
    case swap, or a part stretched past its limit."""
    locator = draw(LOCATORS)
    version = locator.version
    if version is not None and draw(st.booleans()):
        version = "1" * draw(st.integers(38, 42))
    path = locator.path
    if draw(st.integers(0, 4)) == 0:
        path = "a." + "b" * draw(st.integers(196, 200))
    pin = f"@{version}" if version is not None else ""
    check = draw(st.text(CHECK_ALPHABET, min_size=5, max_size=5))
    text = f"{locator.scheme}:{locator.id}{pin}/{path}~{check}"
    for _ in range(draw(st.integers(0, 2))):
        kind = draw(st.sampled_from(("sub", "ins", "del", "span", "case")))
        at = draw(st.integers(0, max(len(text) - 1, 0)))
        if kind == "sub" and text:
            text = text[:at] + draw(_REPLACEMENTS) + text[at + 1 :]
        elif kind == "ins":
            text = text[:at] + draw(_REPLACEMENTS) + text[at:]
        elif kind == "del":
            text = text[:at] + text[at + 1 :]
        elif kind == "span":
            text = text[:at] + text[draw(st.integers(at, len(text))) :]
        else:
            text = text[:at] + text[at : at + 1].swapcase() + text[at + 1 :]
    return text


def _precise_or_none(parse: Callable[[str], _T], text: str) -> _T | None:
    try:
        return parse(text)
    except CitationSyntaxError:
        return None


def _assert_parsers_agree(text: str) -> None:
    fast, precise = _fast_handle(text), _precise_or_none(_precise_handle, text)
    if text.partition(":")[0] in PRECISE_ONLY:  # local ids: the precise parser alone decides
        assert (fast, _fast_locator(text.rpartition("~")[0] or text)) == (None, None), text
        return
    assert (fast is None) == (precise is None), text
    if fast is not None and precise is not None:
        assert (fast.locator, fast.check) == (precise.locator, precise.check)
        assert (fast.text, fast.locator.text) == (precise.text, precise.locator.text)
        assert (fast.text, fast.locator.text) == (text, text[:-6])
    locator = text.rpartition("~")[0] or text
    fast_loc, precise_loc = _fast_locator(locator), _precise_or_none(_precise_locator, locator)
    assert (fast_loc is None) == (precise_loc is None), locator
    if fast_loc is not None:
        assert fast_loc == precise_loc
        assert fast_loc.text == locator


def _mutation_points(text: str) -> list[int]:
    """Every position of a short text; of a long one (a part stretched to its limit), the
    positions within 3 characters of a delimiter or an end (the middle of a run is alike)."""
    if len(text) <= 80:
        return list(range(len(text) + 1))
    near = {i for i, c in enumerate(text) if c in ":@/.~"} | {0, len(text)}
    return sorted({p for i in near for p in range(i - 3, i + 4) if 0 <= p <= len(text)})


@settings(max_examples=100, deadline=None)
@given(_handle_texts(), st.lists(_REPLACEMENTS, min_size=2, max_size=5))
def test_the_fast_path_accepts_exactly_the_handles_the_precise_parser_accepts(
    text: str, pool: list[str]
) -> None:
    """The drawn text and every single-character deletion, case swap, substitution and
    insertion of it (characters from the drawn pool) parse alike on both paths."""
    _assert_parsers_agree(text)
    for at in _mutation_points(text):
        head, tail = text[:at], text[at:]
        _assert_parsers_agree(head + tail[1:])
        _assert_parsers_agree(head + tail[:1].swapcase() + tail[1:])
        for c in pool:
            _assert_parsers_agree(head + c + tail[1:])
            _assert_parsers_agree(head + c + tail)


@pytest.mark.parametrize(
    "text",
    [
        "pmid:99000001/title~abcde\n",  # ``$`` would accept the newline
        "pmid:٩٩000001/title~abcde",  # ``\d`` would accept Arabic-Indic digits
        "pmid:99000001/title~abcdE",
        "PMID:99000001/title~abcde",
        "pmid:99000001@" + "1" * 41 + "/title~abcde",
        "pmid:99000001/" + "a" * 201 + "~abcde",
        "nct:NCT99000001/trial.x~abcde",
        "pmid:99000001/title~abcd",
        "pmid:99000001/ti..tle~abcde",
    ],
)
def test_the_fast_path_rejects_near_misses_the_precise_parser_explains(text: str) -> None:
    assert _fast_handle(text) is None
    with pytest.raises(CitationSyntaxError):
        parse_handle(text)


def test_the_fast_path_accepts_parts_at_their_length_limits() -> None:
    text = "pmid:99000001@" + "1" * 40 + "/" + "a" * 200 + "~abcde"
    assert _fast_handle(text) == _precise_handle(text)


def test_mint_signs_a_built_locator_without_parsing_it(monkeypatch: pytest.MonkeyPatch) -> None:
    locator = Locator("pmid", "99000001", "title")
    expected = mint(KEYRING, locator)

    def refuse(text: str) -> None:
        raise AssertionError(f"parsed {text!r}")

    for name in ("parse_locator", "_precise_locator", "_fast_locator", "_LOCATOR_FORM"):
        monkeypatch.setattr(handles, name, refuse)
    assert mint(KEYRING, locator) == expected == f"pmid:99000001/title~{expected[-5:]}"


def test_a_locator_that_breaks_the_grammar_cannot_be_built() -> None:
    with pytest.raises(CitationSyntaxError) as caught:
        Locator("pmid", "099000001", "title")
    assert caught.value.message == (
        "pmid must be 1 to 10 digits without a leading zero, got '099000001'"
    )


@pytest.mark.parametrize(
    ("scheme", "ident", "version"),
    [("local", "dosing.md", "5a727f8d3dee"), ("local", "reports%2FQ1%20summary.md", "0" * 12)],
)
def test_a_local_locator_is_built_and_minted_through_the_precise_parser(
    scheme: str, ident: str, version: str
) -> None:
    """The fast path leaves local ids to the precise parser; a built locator still checks its
    grammar there (search mints local handles from built locators)."""
    locator = Locator(scheme, ident, "body.main.p1", version)
    assert _fast_locator(locator.text) is None
    assert parse_locator(locator.text) == locator
    handle = mint(Keyring.demo_keyring(), locator)
    assert parse_handle(handle).locator == locator
    with pytest.raises(CitationSyntaxError):
        Locator(scheme, ident.replace(".", "%2E"), "body.main.p1", version)  # not its spelling


def test_a_handle_is_never_equal_to_its_text_or_to_anything_but_a_handle() -> None:
    text = mint(KEYRING, parse_locator("pmid:99000001/abstract.1"))
    handle = parse_handle(text)
    assert handle == parse_handle(text) and hash(handle) == hash(parse_handle(text))
    assert handle != text and handle != None and handle != 1  # noqa: E711


@pytest.mark.parametrize(
    ("text", "fields"),
    [
        ("pmid:99000001/abstract.3~abcde", ("pmid", "99000001", None, "abstract.3")),
        ("pmid:99000001@2/title~abcde", ("pmid", "99000001", "2", "title")),
        ("pmcid:PMC99000001@v2.1/body.s2.p1~abcde", ("pmcid", "PMC99000001", "v2.1", "body.s2.p1")),
        ("ppr:PPR990001@1/abstract.1~abcde", ("ppr", "PPR990001", "1", "abstract.1")),
        (
            "nct:NCT99000001@2025-06-02/trial.arms.1~abcde",
            ("nct", "NCT99000001", "2025-06-02", "trial.arms.1"),
        ),
        (
            "setid:5eed0001-0000-4000-8000-000000000001@4/label.boxed_warning.1~abcde",
            ("setid", "5eed0001-0000-4000-8000-000000000001", "4", "label.boxed_warning.1"),
        ),
    ],
)
def test_a_parsed_handles_locator_is_split_at_the_grammars_delimiters(
    text: str, fields: tuple[str, str, str | None, str]
) -> None:
    locator = parse_handle(text).locator
    assert (locator.scheme, locator.id, locator.version, locator.path) == fields
    assert locator.text == text[:-6] and locator.record_id == f"{fields[0]}:{fields[1]}"
    assert locator == _precise_handle(text).locator
