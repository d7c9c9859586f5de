"""Refuse, at parse time, the records that cannot be cited.

A record enters a snapshot only if a handle can address it: its ``scheme:id`` must match the
scheme's id grammar and its version label (when it has one) the handle version grammar —
the rules of :mod:`audit.handles` (``pmid`` 1 to 10 digits, ``nct`` NCT + 8 digits, a
version of letters, digits, ``.`` and ``-``…). A Europe PMC result whose ``pmid`` is
``Health Literacy``, or an openFDA label whose version is ``4 rev``, would otherwise be
stored under an id no handle can name, or minted into handles that never parse.

:func:`refusal` checks one record, and :func:`partition` splits what a parser read into
the records it keeps and those it refuses; the refused ones go to ``ParseResult.refused``,
whose reasons are counted (:func:`pipeline.records.refusal_counts`) per source in the build's
manifest and shown by ``citeseal parse``. Enrichment-only ids (``doi:``) are not handle
schemes and are not checked.

:func:`pmcid` applies the same grammar to the ``pmcid`` field of a record that is not itself
a ``pmcid:`` record (a PubMed article, a Europe PMC result): the harvest puts that field into
the URL of the full text it fetches, so a value such as ``PMC1/../../x?y=`` would steer the
request elsewhere. A value that breaks the grammar is dropped (the record is kept without it,
and no full text is fetched for it).
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from typing import TypeVar

from audit.errors import CitationSyntaxError
from audit.handles import PINNED_SCHEMES, SCHEMES, parse_locator
from pipeline.records import Record, Refusal

_T = TypeVar("_T")

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


def of_record(record: Record) -> Refusal | None:
    """:func:`refusal` of a parsed record (its id and its version label)."""
    return refusal(record.record_id, record.version)


def partition(
    candidates: Iterable[_T | Refusal], check: Callable[[_T], Refusal | None] | None = None
) -> tuple[list[_T], list[Refusal]]:
    """``(kept, refused)``: each candidate that ``check`` finds nothing wrong with is kept, in
    order; a candidate ``check`` refuses, or one a parser already refused before building it
    (a :class:`Refusal`: an id so bad the record could not be built), is refused. Without a
    ``check`` the candidates were checked as they were built: what is not a Refusal is kept."""
    kept: list[_T] = []
    refused: list[Refusal] = []
    for candidate in candidates:
        if isinstance(candidate, Refusal):
            refused.append(candidate)
            continue
        found = check(candidate) if check is not None else None
        if found is None:
            kept.append(candidate)
        else:
            refused.append(found)
    return kept, refused


def pmcid(value: str | None) -> str | None:
    """``value`` when it is a PMCID a handle can carry (``PMC`` and 1 to 10 digits without a
    leading zero), else None: the field is dropped (see the module docstring)."""
    if not value or refusal(f"pmcid:{value}") is not None:
        return None
    return value
