"""The ``local:`` id codec: one spelling per file path, every other spelling refused with why."""

from __future__ import annotations

import pytest

from audit.local_ids import (
    LOCAL_ID_RULE,
    MAX_LOCAL_ID_CHARS,
    decode_local_id,
    encode_local_id,
    local_id_problem,
)


@pytest.mark.parametrize(
    ("relative", "ident"),
    [
        ("report-2024.pdf", "report-2024.pdf"),
        ("A_z.09", "A_z.09"),
        ("reports/Q1 summary.md", "reports%2FQ1%20summary.md"),
        ("café.md", "caf%C3%A9.md"),
        ("cafe\u0301.md", "caf%C3%A9.md"),
        ("a@b~c.md", "a%40b%7Ec.md"),
        ("%41.md", "%2541.md"),
        ("\x01", "%01"),
        ("\x7f", "%7F"),
    ],
)
def test_a_path_has_one_id_that_decodes_back_to_its_nfc_form(relative: str, ident: str) -> None:
    assert encode_local_id(relative) == ident
    assert local_id_problem(ident) is None
    assert decode_local_id(ident) == ("café.md" if relative.startswith("caf") else relative)


def test_decoding_reads_escapes_and_plain_characters_in_any_order() -> None:
    assert decode_local_id("%C3%A9t%C3%A9%2F%20x") == "été/ x"
    assert decode_local_id("ab%2Fcd") == "ab/cd"
    assert decode_local_id("x") == "x"


def test_decoding_a_text_that_is_no_id_raises_its_problem() -> None:
    with pytest.raises(ValueError) as raised:
        decode_local_id("%C3")
    assert str(raised.value) == "local id does not decode to UTF-8 text"


@pytest.mark.parametrize(
    ("ident", "problem"),
    [
        ("", LOCAL_ID_RULE),
        ("a b", LOCAL_ID_RULE),
        ("a%2f", LOCAL_ID_RULE),
        ("a%2", LOCAL_ID_RULE),
        ("%41", "%41 encodes 'A', which is written as is"),
        ("x%2E", "%2E encodes '.', which is written as is"),
        ("%C3", "local id does not decode to UTF-8 text"),
        ("%FF", "local id does not decode to UTF-8 text"),
        (
            "e%CC%81",
            "local id does not decode to NFC text (the same name has another spelling)",
        ),
        ("a%2F%2Fb", "local id names an empty, '.'-led or hidden path part (got '' in 'a//b')"),
        ("%2Fa", "local id names an empty, '.'-led or hidden path part (got '' in '/a')"),
        ("a%2F", "local id names an empty, '.'-led or hidden path part (got '' in 'a/')"),
        ("..", "local id names an empty, '.'-led or hidden path part (got '..' in '..')"),
        (
            "a%2F.git%2Fx",
            "local id names an empty, '.'-led or hidden path part (got '.git' in 'a/.git/x')",
        ),
    ],
)
def test_every_other_spelling_is_refused_with_why(ident: str, problem: str) -> None:
    assert local_id_problem(ident) == problem
    with pytest.raises(ValueError) as raised:
        decode_local_id(ident)
    assert str(raised.value) == problem


def test_a_part_with_a_dot_inside_or_at_its_end_is_no_hidden_file() -> None:
    assert local_id_problem("a.b%2Fc.") is None
    assert decode_local_id("a.b%2Fc.") == "a.b/c."


def test_an_id_of_the_longest_length_is_one_and_a_character_more_is_refused() -> None:
    longest = "a" * MAX_LOCAL_ID_CHARS
    assert local_id_problem(longest) is None
    assert local_id_problem(longest + "a") == "local id is 91 characters long (at most 90)"
    escaped = "a" * (MAX_LOCAL_ID_CHARS - 3) + "%20"
    assert decode_local_id(escaped) == "a" * (MAX_LOCAL_ID_CHARS - 3) + " "
