"""Search filters: one typed model, parsed with exact errors, turned into SQL in one place.

:class:`SearchFilters` is what ``citeseal search`` and the MCP search tools hand to
:func:`pipeline.snapshot.search.search_page`. Every filter is *three-valued* per record: it
admits the record (1), rejects it (0), or cannot decide (NULL: the value it needs is
unknown). Search returns only records every active filter admits; a record no filter rejects
but some filter cannot decide is left out and *counted* under that filter's name
(``excluded_unknown``), so nothing is dropped silently. :func:`filter_states` is the one place
that writes the SQL of a filter: each one is a ``CASE`` expression over the columns of
``records`` (alias ``r``) and ``record_state`` (alias ``s``) with bound parameters, never a
value written into the SQL text. A new filter (issue 21: study design, open access, phase…)
is a field here, a parser, and one entry in :func:`filter_states`.

Filters (defaults admit everything):

==========================  ===================================================================
``sources``                 only records of these sources
``retracted``,              ``include`` (default: no filter; results still carry the flag),
``expression_of_concern``,  ``exclude`` (only records known not to be flagged), ``only`` (only
``preprint``                flagged records); a flag that is unknown (NULL) cannot be decided
``published_from``,         a publication date range, bounds included; ``YYYY``, ``YYYY-MM`` or
``published_to``            ``YYYY-MM-DD`` (``from 2021`` = from 2021-01-01, ``to 2021-06`` =
                            to the end of June 2021). A record is admitted when its whole date
                            (a year, a month or a day, as precise as its source gives it) lies
                            in the range, rejected when it lies wholly outside, and undecided
                            when its date is unknown or straddles a bound (a record dated
                            ``2021`` against ``from 2021-06``)
``statuses``                ClinicalTrials.gov overall statuses (:data:`TRIAL_STATUSES`, or any
                            status a trial in the snapshot holds); records of other sources are
                            rejected, a trial without a status is undecided
==========================  ===================================================================

A record's publication date (:data:`PUBLISHED_SQL`): Europe PMC's first publication date,
ClinicalTrials.gov's first-posted date, an openFDA label version's effective date, else the
record's year (PubMed, Crossref, PubTator3 give a year). A value that is not an ISO date of
one of the three forms counts as unknown.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from datetime import date
from typing import Literal, get_args

from audit.errors import InputError
from pipeline.sources import names as source_names

Inclusion = Literal["include", "exclude", "only"]
INCLUSIONS: tuple[str, ...] = get_args(Inclusion)
FLAGS = ("retracted", "expression_of_concern", "preprint")

TRIAL_STATUSES = (
    "ACTIVE_NOT_RECRUITING",
    "COMPLETED",
    "ENROLLING_BY_INVITATION",
    "NOT_YET_RECRUITING",
    "RECRUITING",
    "SUSPENDED",
    "TERMINATED",
    "WITHDRAWN",
    "AVAILABLE",
    "NO_LONGER_AVAILABLE",
    "TEMPORARILY_NOT_AVAILABLE",
    "APPROVED_FOR_MARKETING",
    "WITHHELD",
    "UNKNOWN",
)
"""ClinicalTrials.gov API v2 ``overallStatus`` values."""
MAX_STATUSES = len(TRIAL_STATUSES)

_DATE = re.compile(r"(\d{4})(?:-(\d{2})(?:-(\d{2}))?)?")

PUBLISHED_SQL = (
    "coalesce(json_extract_string(metadata, '$.first_publication_date'), "
    "CASE WHEN source = 'clinicaltrials' THEN json_extract_string(metadata, '$.first_posted') END, "
    "CASE WHEN source = 'openfda' THEN version_date END, "
    "CAST(year AS VARCHAR))"
)
"""A record's publication date as its sources give it (module docstring), a string or NULL,
over the ``records`` columns ``metadata``, ``source``, ``version_date`` and ``year``."""

_FORMS = ("\\d{4}", "\\d{4}-\\d{2}", "\\d{4}-\\d{2}-\\d{2}")


def _covered_sql(column: str, *, last: bool) -> str:
    """The first (or ``last``) day the date in ``column`` covers, as an ISO string; NULL when
    it is no date of the three forms. The last day of a month is written -31 whatever the
    month: comparisons are on strings, where YYYY-MM-31 sorts after every real day of that
    month and before the next month."""
    ends = ("-12-31", "-31", "") if last else ("-01-01", "-01", "")
    cases = " ".join(
        f"WHEN regexp_full_match({column}, '{form}') THEN {column} || '{end}'"
        for form, end in zip(_FORMS, ends, strict=True)
    )
    return f"CASE {cases} END"


@dataclass(frozen=True)
class DateBound:
    """One end of a date range as given (``text``) and as the day it stands for (``day``,
    ISO; the last day of a month is ``-31``, see the module's SQL)."""

    text: str
    day: str


@dataclass(frozen=True)
class SearchFilters:
    """What a search keeps (module docstring); the defaults keep everything."""

    sources: tuple[str, ...] = ()
    retracted: Inclusion = "include"
    expression_of_concern: Inclusion = "include"
    preprint: Inclusion = "include"
    published_from: DateBound | None = None
    published_to: DateBound | None = None
    statuses: tuple[str, ...] = field(default=())

    def canonical(self) -> dict[str, object]:
        """The filters as plain JSON values (what a paging cursor binds)."""
        return {
            "sources": list(self.sources),
            "retracted": self.retracted,
            "expression_of_concern": self.expression_of_concern,
            "preprint": self.preprint,
            "published_from": self.published_from.text if self.published_from else None,
            "published_to": self.published_to.text if self.published_to else None,
            "statuses": list(self.statuses),
        }


def parse_inclusion(name: str, value: str) -> Inclusion:
    """``include`` | ``exclude`` | ``only`` (case-insensitive)."""
    folded = value.strip().lower()
    for choice in get_args(Inclusion):
        if folded == choice:
            return choice
    raise InputError(
        f"{name} must be one of {', '.join(INCLUSIONS)}, got {value!r}",
    )


def parse_date_bound(name: str, value: str, *, end: bool) -> DateBound:
    """A range bound: ``YYYY``, ``YYYY-MM`` or ``YYYY-MM-DD`` (a real day); ``end`` picks the
    last day it covers instead of the first."""
    text = value.strip()
    found = _DATE.fullmatch(text)
    expected = "expected YYYY, YYYY-MM or YYYY-MM-DD"
    if not found:
        raise InputError(f"{name} is not a date: got {value!r}, {expected}")
    year, month, day = found.groups()
    if month is not None and not 1 <= int(month) <= 12:
        raise InputError(f"{name} has no month {month}: got {value!r}, {expected}")
    if day is not None:
        try:
            date.fromisoformat(text)
        except ValueError:
            raise InputError(f"{name} is not a day of the calendar: got {value!r}") from None
        return DateBound(text, text)
    if month is not None:
        return DateBound(text, f"{text}-31" if end else f"{text}-01")
    return DateBound(text, f"{year}-12-31" if end else f"{year}-01-01")


def parse_statuses(values: Iterable[str], held: Iterable[str] = ()) -> tuple[str, ...]:
    """Trial overall statuses, upper-cased (``recruiting`` → ``RECRUITING``, spaces and dashes
    as ``_``), each one of :data:`TRIAL_STATUSES` or a status the snapshot holds (``held``)."""
    known = dict.fromkeys([*TRIAL_STATUSES, *sorted(set(held) - set(TRIAL_STATUSES))])
    chosen: list[str] = []
    for value in values:
        status = re.sub(r"[\s-]+", "_", value.strip()).upper()
        if status not in known:
            raise InputError(
                f"unknown trial status {value!r}; expected one of {', '.join(known)}",
            )
        chosen.append(status)
    if len(chosen) > MAX_STATUSES:
        raise InputError(f"at most {MAX_STATUSES} trial statuses, got {len(chosen)}")
    return tuple(dict.fromkeys(chosen))


def parse_sources(values: Iterable[str], allowed: Sequence[str] | None = None) -> tuple[str, ...]:
    """Source names, each one of ``allowed`` (default: every registered source), duplicates
    dropped."""
    allowed = source_names() if allowed is None else allowed
    chosen = tuple(dict.fromkeys(values))
    unknown = [s for s in chosen if s not in allowed]
    if unknown:
        raise InputError(f"unknown source {unknown[0]!r}; expected one of {', '.join(allowed)}")
    return chosen


MCP_NAMES = {
    "retracted": "retracted",
    "expression_of_concern": "expression_of_concern",
    "preprint": "preprint",
    "published_from": "published_from",
    "published_to": "published_to",
}
"""How the errors name each filter: the MCP tools' argument names."""
CLI_NAMES = {
    "retracted": "--retracted",
    "expression_of_concern": "--expression-of-concern",
    "preprint": "--preprint",
    "published_from": "--from",
    "published_to": "--to",
}
"""How the errors name each filter: ``citeseal search``'s options."""

UNDECIDED_MEANINGS = {
    "retracted": "whose retraction status is unknown",
    "expression_of_concern": "whose expression-of-concern status is unknown",
    "preprint": "whose preprint status is unknown",
    "published": "whose publication date is unknown or not precise enough for the range",
    "statuses": "whose trial overall status is unknown",
}
"""Why a record counted under ``excluded_unknown[name]`` was left out."""


def undecided_lines(excluded: dict[str, int]) -> list[str]:
    """One line per filter that left records out undecided (none when it left none). No
    line starts with a digit, so none reads like a numbered search hit."""
    return [
        f"left out: {count} record{'s' if count != 1 else ''} {UNDECIDED_MEANINGS[name]}"
        for name, count in excluded.items()
        if count
    ]


WORK_MEANINGS = {
    "retracted": "another record of which is retracted",
    "expression_of_concern": "another record of which has an expression of concern",
}
"""Why a work counted under ``excluded_by_work[name]`` was left out (pipeline.snapshot.works)."""


def work_lines(excluded: dict[str, int]) -> list[str]:
    """One line per excluded work flag that left works out (none when it left none)."""
    return [
        f"left out: {count} work{'s' if count != 1 else ''} {WORK_MEANINGS[name]}"
        for name, count in excluded.items()
        if count
    ]


def make_filters(
    *,
    sources: Iterable[str] = (),
    retracted: str = "include",
    expression_of_concern: str = "include",
    preprint: str = "include",
    published_from: str | None = None,
    published_to: str | None = None,
    statuses: Iterable[str] = (),
    held_statuses: Iterable[str] = (),
    allowed_sources: Sequence[str] | None = None,
    names: Mapping[str, str] = MCP_NAMES,
) -> SearchFilters:
    """Parse the filters as a person or a model gives them; errors call each filter by
    ``names`` (:data:`MCP_NAMES` or :data:`CLI_NAMES`)."""
    start, stop = names["published_from"], names["published_to"]
    low = parse_date_bound(start, published_from, end=False) if published_from else None
    high = parse_date_bound(stop, published_to, end=True) if published_to else None
    if low and high and low.day > high.day:
        raise InputError(f"{start} {low.text} is after {stop} {high.text}; the range holds no date")
    return SearchFilters(
        sources=parse_sources(sources, allowed_sources),
        retracted=parse_inclusion(names["retracted"], retracted),
        expression_of_concern=parse_inclusion(
            names["expression_of_concern"], expression_of_concern
        ),
        preprint=parse_inclusion(names["preprint"], preprint),
        published_from=low,
        published_to=high,
        statuses=parse_statuses(statuses, held_statuses),
    )


@dataclass(frozen=True)
class FilterSQL:
    """Each active filter as ``(name, SQL expression giving 1, 0 or NULL)``, and the values
    its parameters are bound to."""

    states: tuple[tuple[str, str], ...]
    params: dict[str, object]


def _flag_state(column: str, mode: Inclusion) -> str:
    admitted = "FALSE" if mode == "exclude" else "TRUE"
    return f"CASE WHEN {column} IS NULL THEN NULL WHEN {column} = {admitted} THEN 1 ELSE 0 END"


def _date_state(low: DateBound | None, high: DateBound | None) -> str:
    first = _covered_sql("published", last=False)
    last = _covered_sql("published", last=True)
    inside = [f"{first} >= $published_from"] if low else []
    inside += [f"{last} <= $published_to"] if high else []
    outside = [f"{last} < $published_from"] if low else []
    outside += [f"{first} > $published_to"] if high else []
    # a NULL (no date) makes both tests NULL: the CASE gives NULL, undecided
    return f"CASE WHEN {' AND '.join(inside)} THEN 1 WHEN {' OR '.join(outside)} THEN 0 END"


def filter_states(filters: SearchFilters, *, sep: str) -> FilterSQL:
    """The SQL of every active filter (module docstring) over a hit's facts: the columns
    ``source``, ``retracted``, ``expression_of_concern``, ``preprint``, ``status`` and
    ``published`` (:data:`PUBLISHED_SQL`); ``sep`` joins list parameters (the store's
    separator). A NULL fact makes a comparison NULL, which is what "undecided" is."""
    states: list[tuple[str, str]] = []
    params: dict[str, object] = {}
    if filters.sources:
        states.append(
            (
                "sources",
                "CASE WHEN list_contains(string_split($sources, $sep), source) THEN 1 ELSE 0 END",
            )
        )
        params.update(sources=sep.join(filters.sources), sep=sep)
    for name in FLAGS:
        mode: Inclusion = getattr(filters, name)
        if mode != "include":
            states.append((name, _flag_state(name, mode)))
    if filters.published_from or filters.published_to:
        states.append(("published", _date_state(filters.published_from, filters.published_to)))
        if filters.published_from:
            params["published_from"] = filters.published_from.day
        if filters.published_to:
            params["published_to"] = filters.published_to.day
    if filters.statuses:
        states.append(
            (
                "statuses",
                "CASE WHEN source <> 'clinicaltrials' THEN 0 WHEN status IS NULL THEN NULL "
                "WHEN list_contains(string_split($statuses, $sep), status) THEN 1 ELSE 0 END",
            )
        )
        params.update(statuses=sep.join(filters.statuses), sep=sep)
    return FilterSQL(tuple(states), params)
