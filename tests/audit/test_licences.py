"""The licence vocabulary: what each source's raw value becomes, and what may be republished."""

from __future__ import annotations

import pytest

from audit.licences import (
    CC0,
    PUBLIC_DOMAIN,
    RAW_MAX,
    UNKNOWN,
    cut,
    in_vocabulary,
    normalise,
    republishable,
)


@pytest.mark.parametrize(
    ("raw", "name"),
    [
        # licence URLs (JATS xlink:href / ali:license_ref, Crossref license[].URL)
        ("https://creativecommons.org/licenses/by/4.0/", "CC-BY-4.0"),
        ("http://creativecommons.org/licenses/by/4.0", "CC-BY-4.0"),
        ("https://creativecommons.org/licenses/by-nc-nd/3.0/igo/", "CC-BY-NC-ND-3.0"),
        ("https://creativecommons.org/licenses/by-sa/4.0/legalcode", "CC-BY-SA-4.0"),
        ("https://creativecommons.org/licenses/by-nc/4.0/deed.en", "CC-BY-NC-4.0"),
        ("https://creativecommons.org/publicdomain/zero/1.0/", CC0),
        ("https://creativecommons.org/publicdomain/mark/1.0/", PUBLIC_DOMAIN),
        # Europe PMC's license field: no version
        ("cc by", "CC-BY"),
        ("cc by-nc-nd", "CC-BY-NC-ND"),
        ("CC BY-SA", "CC-BY-SA"),
        ("cc0", CC0),
        # SPDX ids and our own names round-trip
        ("CC-BY-4.0", "CC-BY-4.0"),
        ("CC-BY-NC-SA-4.0", "CC-BY-NC-SA-4.0"),
        ("public-domain", PUBLIC_DOMAIN),
        # a publisher's own licence, and what cannot be read as one
        (
            "https://www.elsevier.com/tdm/userlicense/1.0/",
            "other:https://www.elsevier.com/tdm/userlicense/1.0/",
        ),
        (
            "https://creativecommons.org/licenses/by-xx/4.0/",
            "other:https://creativecommons.org/licenses/by-xx/4.0/",
        ),
        ("Synthetic demo content, CC0.", UNKNOWN),
        ("This is an open access article under the CC BY licence.", UNKNOWN),
        ("All rights reserved", UNKNOWN),
        ("", UNKNOWN),
        (None, UNKNOWN),
    ],
)
def test_a_raw_licence_value_normalises_to_its_vocabulary_name(raw: str | None, name: str) -> None:
    assert normalise(raw) == name
    assert in_vocabulary(name)


@pytest.mark.parametrize(
    ("name", "allowed"),
    [
        (CC0, True),
        (PUBLIC_DOMAIN, True),
        ("CC-BY", True),
        ("CC-BY-4.0", True),
        ("CC-BY-SA-3.0", True),
        ("CC-BY-NC-4.0", False),
        ("CC-BY-ND", False),
        ("CC-BY-NC-ND-4.0", False),
        ("CC-BY-NC-SA", False),
        ("other:https://publisher.example.org/licence", False),
        (UNKNOWN, False),
        ("cc by", False),  # not a vocabulary name: never trusted
        ("CC-BY-4.0-extra", False),
    ],
)
def test_only_licences_that_let_anyone_republish_verbatim_allow_the_whole_passage(
    name: str, allowed: bool
) -> None:
    assert republishable(name) is allowed


def test_names_outside_the_vocabulary_are_not_in_it() -> None:
    assert not in_vocabulary("cc by")
    assert not in_vocabulary("other:not a url")
    assert not in_vocabulary("CC-BY-4.0 ")


def test_a_raw_value_is_kept_with_its_whitespace_collapsed_and_bounded() -> None:
    assert cut("  cc\n by ") == "cc by"
    assert cut("x" * (RAW_MAX + 50)) == "x" * RAW_MAX
    assert cut("   ") is None
    assert cut(None) is None


@pytest.mark.parametrize(
    ("raw", "name"),
    [
        ("cc0", "CC0-1.0"),
        ("CC0-1.0", "CC0-1.0"),
        ("CC0 1.0", "CC0-1.0"),
        ("cc0 1.0", "CC0-1.0"),
        ("CC-Zero", "CC0-1.0"),
        ("cc-zero", "CC0-1.0"),
        ("public-domain", "public-domain"),
        ("Public Domain", "public-domain"),
        ("public domain", "public-domain"),
        ("PD", "public-domain"),
        ("pd", "public-domain"),
    ],
)
def test_each_spelling_of_cc0_and_public_domain_is_named_in_any_case(raw: str, name: str) -> None:
    assert normalise(f"  {raw} ") == name
