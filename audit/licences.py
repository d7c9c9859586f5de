"""Licences of records: a small vocabulary, how a source's raw value maps onto it, and which
licences allow a site to republish a whole passage.

Vocabulary (what ``records.licence`` holds; the source's own value is kept beside it in
``records.licence_raw``):

=================== =====================================================================
``CC0-1.0``         the Creative Commons public-domain dedication
``public-domain``   public-domain text (US-government registries: ClinicalTrials.gov,
                    openFDA; the Creative Commons public-domain mark)
``CC-BY[-V]``       a Creative Commons licence, SPDX spelling: ``CC-BY``, ``CC-BY-SA``,
``CC-BY-NC[-V]`` …  ``CC-BY-NC``, ``CC-BY-NC-SA``, ``CC-BY-ND``, ``CC-BY-NC-ND``, with the
                    version (``-4.0``) when the source gives one (a licence URL does; Europe
                    PMC's ``license`` field, ``cc by``, does not)
``other:<url>``     a licence named by a URL that is none of the above (a publisher's own)
``unknown``         the source says nothing we can read as a licence — never a guess
=================== =====================================================================

:func:`normalise` is the only way in: a URL or a name it does not know becomes
``other:<url>`` or ``unknown``, never a Creative Commons licence by resemblance.
:func:`republishable` is the publishing policy's test (see :mod:`audit.publish`): only
licences that let anyone copy the text verbatim for any purpose, with attribution at most
(CC0, public domain, CC BY, CC BY-SA), allow the whole passage; NonCommercial and
NoDerivatives licences, ``other:`` and ``unknown`` do not.
"""

from __future__ import annotations

import re
from typing import Final

UNKNOWN: Final = "unknown"
PUBLIC_DOMAIN: Final = "public-domain"
CC0: Final = "CC0-1.0"
LOCAL_LICENCE: Final = UNKNOWN
"""The licence of a record from the user's own documents (``local:``): unknown, so a site
shows only excerpts of them unless its build says ``--publish full``."""

RAW_MAX = 300  # characters of a raw value kept (a licence paragraph can be long)

_CC_KINDS = ("BY", "BY-SA", "BY-NC", "BY-NC-SA", "BY-ND", "BY-NC-ND")
_OPEN_KINDS = frozenset({"BY", "BY-SA"})
_CC_URL = re.compile(
    r"^https?://(?:www\.)?creativecommons\.org/licenses/"
    r"(by|by-sa|by-nc|by-nc-sa|by-nd|by-nc-nd)/(\d+(?:\.\d+)?)(?:/[a-z]{2,3}(?:-[a-z]{2})?)?/?"
    r"(?:(?:legalcode|deed)(?:\.[a-z-]+)?)?$",
    re.IGNORECASE,
)
_CC0_URL = re.compile(
    r"^https?://(?:www\.)?creativecommons\.org/publicdomain/zero/1\.0/?"
    r"(?:(?:legalcode|deed)(?:\.[a-z-]+)?)?$",
    re.IGNORECASE,
)
_PD_MARK_URL = re.compile(
    r"^https?://(?:www\.)?creativecommons\.org/publicdomain/mark/1\.0/?", re.IGNORECASE
)
# Europe PMC's license field ("cc by", "cc by-nc-nd", "cc0") and SPDX ids ("CC-BY-4.0")
_CC_NAME = re.compile(
    r"^cc[ -](by(?:-nc)?(?:-sa|-nd)?)(?:[ -](\d+(?:\.\d+)?))?$",
    re.IGNORECASE,
)
_URL = re.compile(r"^https?://\S+$", re.IGNORECASE)


def cut(raw: str | None) -> str | None:
    """``raw`` with whitespace runs made one space, at most :data:`RAW_MAX` characters; None
    for nothing."""
    if raw is None:
        return None
    text = " ".join(raw.split())
    return text[:RAW_MAX] or None


def normalise(raw: str | None) -> str:
    """The vocabulary's name for a source's licence value (a URL or a name).

    >>> normalise("https://creativecommons.org/licenses/by/4.0/")
    'CC-BY-4.0'
    >>> normalise("cc by-nc-nd")
    'CC-BY-NC-ND'
    >>> normalise("https://www.elsevier.com/tdm/userlicense/1.0/")
    'other:https://www.elsevier.com/tdm/userlicense/1.0/'
    >>> normalise("All rights reserved")
    'unknown'
    """
    text = (raw or "").strip()
    if not text:
        return UNKNOWN
    lowered = text.lower()
    if lowered in {"cc0", "cc0-1.0", "cc0 1.0", "cc-zero"} or _CC0_URL.match(text):
        return CC0
    if lowered in {PUBLIC_DOMAIN, "public domain", "pd"} or _PD_MARK_URL.match(text):
        return PUBLIC_DOMAIN
    found = _CC_URL.match(text) or _CC_NAME.match(text)
    if found:
        kind = found.group(1).upper()
        version = found.group(2)
        if kind in _CC_KINDS:
            return f"CC-{kind}-{version}" if version else f"CC-{kind}"
    if _URL.match(text):
        return f"other:{text}"
    return UNKNOWN


def republishable(licence: str) -> bool:
    """Whether ``licence`` (a vocabulary name) lets anyone republish a passage verbatim, for any
    purpose: CC0, public domain, CC BY and CC BY-SA (any version). Everything else, including
    names outside the vocabulary, is False."""
    if licence in (CC0, PUBLIC_DOMAIN):
        return True
    found = re.fullmatch(r"CC-(BY(?:-SA)?)(?:-\d+(?:\.\d+)?)?", licence)
    return bool(found) and found is not None and found.group(1) in _OPEN_KINDS


def in_vocabulary(name: str) -> bool:
    """Whether ``name`` is a vocabulary name (what :func:`normalise` can return)."""
    if name.startswith("other:"):
        return bool(_URL.match(name.removeprefix("other:")))
    return (name != UNKNOWN and normalise(name) == name) or name == UNKNOWN
