"""Refuse, at parse time, the records that cannot be cited.

A record enters a snapshot only if a handle can address it: its ``scheme:id`` must match the
scheme's id grammar and its version label (when it has one) the handle version grammar —
the rules of :mod:`audit.handles` (``pmid`` 1 to 10 digits, ``nct`` NCT + 8 digits, a
version of letters, digits, ``.`` and ``-``…). A Europe PMC result whose ``pmid`` is
``Health Literacy``, or an openFDA label whose version is ``4 rev``, would otherwise be
stored under an id no handle can name, or minted into handles that never parse.

:func:`refusal` checks one record; the parsers drop what it refuses and list it in
``ParseResult.refused``, whose reasons are counted per source in the build's manifest and
shown by ``citeseal parse``. Enrichment-only ids (``doi:``) are not handle schemes and are
not checked.
"""

from __future__ import annotations

from audit.errors import CitationSyntaxError
from audit.handles import PINNED_SCHEMES, SCHEMES, parse_locator
from pipeline.records import Refusal

_STOPS = frozenset("@/~")  # characters that would end the id (or version) inside a locator
_NEVER_VALID = "\x00"  # stands in for a value holding a stop, to get the rule's message
VALUE_CHARS = 80


def _rule(error: CitationSyntaxError) -> str:
    """The grammar rule of an error message, without the offending value (``…, got 'x'``)."""
    rule, _, _ = error.message.partition(", got ")
    return rule


def refusal(record_id: str, version: str | None = None) -> Refusal | None:
    """None when ``record_id`` (and ``version``) can be cited by a handle, else the Refusal."""
    scheme, _, ident = record_id.partition(":")
    if scheme not in SCHEMES:
        return None
    safe = _NEVER_VALID if _STOPS.intersection(ident) or not ident else ident
    placeholder = "@1" if scheme in PINNED_SCHEMES else ""  # the id alone, whatever the version
    try:
        parse_locator(f"{scheme}:{safe}{placeholder}/title")
    except CitationSyntaxError as error:
        return Refusal(reason=_rule(error), value=ident[:VALUE_CHARS])
    if version is None:
        return None
    pin = _NEVER_VALID if _STOPS.intersection(version) or not version else version
    try:
        parse_locator(f"{scheme}:{ident}@{pin}/title")
    except CitationSyntaxError as error:
        return Refusal(reason=_rule(error), value=version[:VALUE_CHARS], record_id=record_id)
    return None
