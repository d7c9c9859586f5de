"""The fast path's regular expression of the handle grammar, built afresh (audit/handles.py).

The module compiles :func:`audit.handles._form` once at import; these build it in the test, so
the language it describes is pinned by itself (not only through the precise parser, which
accepts the same strings and hides a fast path that rejects too much).
"""

from __future__ import annotations

import re

import pytest

from audit.errors import CitationSyntaxError
from audit.handles import Locator, _form, parse_locator
from audit.quotes import closest_match

SETID = "5eed0001-0000-4000-8000-000000000001"


def locator_form(text: str) -> re.Match[str] | None:
    """``text`` matched by the locator form, built now (a mutant of ``_form`` is live only in
    a call made while a test runs, never at import)."""
    return re.fullmatch(_form(r"\Z"), text)


@pytest.mark.parametrize(
    ("text", "groups"),
    [
        ("pmid:99000001/abstract.3", ("pmid:99000001", None, "abstract.3")),
        ("pmid:1234567890@2/abstract", ("pmid:1234567890", "2", "abstract")),
        ("pmcid:PMC99000001/body.s2.p1", ("pmcid:PMC99000001", None, "body.s2.p1")),
        ("ppr:PPR990001@1/abstract.1", ("ppr:PPR990001", "1", "abstract.1")),
        (
            "nct:NCT99000001@2025-06-02/trial.arms.1",
            ("nct:NCT99000001", "2025-06-02", "trial.arms.1"),
        ),
        (
            f"setid:{SETID}@4/label.boxed_warning.1",
            (f"setid:{SETID}", "4", "label.boxed_warning.1"),
        ),
        ("pmid:9/" + "a" * 200, ("pmid:9", None, "a" * 200)),
        ("pmid:9@" + "v" * 40 + "/a", ("pmid:9", "v" * 40, "a")),
    ],
)
def test_the_fast_form_accepts_each_scheme_and_splits_it(
    text: str, groups: tuple[str, str | None, str]
) -> None:
    match = locator_form(text)
    assert match is not None and match.groups() == groups


@pytest.mark.parametrize(
    "text",
    [
        "pmid:099000001/abstract.3",  # a leading zero
        "pmid:12345678901/abstract",  # 11 digits
        "pmcid:99000001/body",  # no PMC
        "ppr:PPR990001/abstract.1",  # a pinned scheme without its version
        "nct:NCT9900000@2025/trial",  # 7 digits
        "nct:NCT99000001/trial",
        f"setid:{SETID}/label.x",
        "setid:5eed0001-0000-4000-80000-00000000001@4/label.x",  # a group of 5 where 4 go
        "setid:5EED0001-0000-4000-8000-000000000001@4/label.x",  # upper-case hex
        "pmid:9/" + "a" * 201,  # the path is over 200 characters
        "pmid:9@" + "v" * 41 + "/a",  # the version is over 40 characters
        "pmid:9@-1/a",  # a version starts with a letter or digit
        "pmid:9/Abstract",
        "pmid:9/.abstract",
        "pmid:9/abstract..1",
        "pmid:9/abstract.",
        "pmid:9/abstract\n",
        "local:notes-1@1/body",  # local ids go to the precise parser only
    ],
)
def test_the_fast_form_rejects_what_the_grammar_rejects(text: str) -> None:
    assert locator_form(text) is None


def test_the_path_limit_of_a_handle_ends_at_its_check_code() -> None:
    handle_form = _form("~") + "~.*"
    assert re.fullmatch(handle_form, "pmid:9/" + "a" * 200 + "~abcde") is not None
    assert re.fullmatch(handle_form, "pmid:9/" + "a" * 201 + "~abcde") is None


def test_a_closest_match_is_widened_to_the_whole_first_word() -> None:
    closest = closest_match("alpha beta", "xalpha beta gamma")
    assert closest is not None and closest.text == "xalpha beta"


def test_a_check_code_after_a_locator_is_an_error_spanning_the_rest() -> None:
    text = "pmid:99000001/abstract.3~awhr0"
    with pytest.raises(CitationSyntaxError) as raised:
        parse_locator(text)
    error = raised.value
    assert error.message == ("unexpected '~' after the passage path (a locator has no check code)")
    assert (error.text, error.start, error.end, error.expected) == (
        text,
        text.index("~"),
        len(text),
        "end of locator",
    )


def test_a_locator_whose_text_reads_back_as_other_fields_is_refused_whole() -> None:
    with pytest.raises(CitationSyntaxError) as raised:
        Locator(scheme="pmid", id="99000001@2", path="abstract.3")
    error = raised.value
    text = "pmid:99000001@2/abstract.3"
    assert error.message == f"locator {text!r} does not round-trip through the grammar"
    assert (error.text, error.start, error.end, error.expected) == (text, 0, len(text), "locator")
