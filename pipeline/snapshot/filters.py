"""Search filters: one typed model, parsed with exact errors, turned into SQL in one place.

:class:`SearchFilters` is what ``citeseal search`` and the MCP search tools hand to
:func:`pipeline.snapshot.search.search_page`. Every filter is *three-valued* per record: it
admits the record (1), rejects it (0), or cannot decide (NULL: the value it needs is
unknown). Search returns only records every active filter admits; a record no filter rejects
but some filter cannot decide is left out and *counted* under that filter's name
(``excluded_unknown``), so nothing is dropped silently. :func:`filter_states` is the one place
that writes the SQL of a filter: each one is a ``CASE`` expression over the columns of
``records`` (alias ``r``) and ``record_state`` (alias ``s``) with bound parameters, never a
value written into the SQL text. A new filter is a field here, a parser, its names in
:data:`MCP_NAMES` / :data:`CLI_NAMES`, its meaning in :data:`UNDECIDED_MEANINGS` when it can be
undecided, and one entry in :func:`filter_states`.

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
``designs``                 study designs from publication types (:mod:`pipeline.snapshot.designs`)
``open_access``             ``include`` | ``exclude`` | ``only``; ``phases``, ``has_results``,
``phases``, ``has_results`` ``condition``, ``intervention``, ``drug``: see
``condition``,              :mod:`pipeline.snapshot.facets`
``intervention``, ``drug``
``started_from``,           a trial's start date (``started_*``) or completion date
``started_to``,             (``completed_*``), actual or anticipated as the registry gives it,
``completed_from``,         against a range decided like the publication date; records of other
``completed_to``            sources are rejected
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
from pipeline.snapshot import designs as design_table
from pipeline.snapshot import facets
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
    designs: tuple[str, ...] = ()
    open_access: Inclusion = "include"
    phases: tuple[str, ...] = ()
    has_results: facets.YesNo | None = None
    condition: str | None = None
    intervention: str | None = None
    drug: str | None = None
    started_from: DateBound | None = None
    started_to: DateBound | None = None
    completed_from: DateBound | None = None
    completed_to: DateBound | None = None

    def canonical(self) -> dict[str, object]:
        """The filters as plain JSON values (what a paging cursor binds)."""
        out: dict[str, object] = {
            "sources": list(self.sources),
            "retracted": self.retracted,
            "expression_of_concern": self.expression_of_concern,
            "preprint": self.preprint,
            "statuses": list(self.statuses),
            "designs": list(self.designs),
            "open_access": self.open_access,
            "phases": list(self.phases),
            "has_results": self.has_results,
            "condition": self.condition,
            "intervention": self.intervention,
            "drug": self.drug,
        }
        for name in DATE_FIELDS:
            bound: DateBound | None = getattr(self, name)
            out[name] = bound.text if bound else None
        return out


DATE_RANGES = {
    "published": ("published_from", "published_to"),
    "started": ("started_from", "started_to"),
    "completed": ("completed_from", "completed_to"),
}
"""Each date filter (its ``excluded_unknown`` name) and its two bounds."""
DATE_FIELDS = tuple(bound for pair in DATE_RANGES.values() for bound in pair)
TRIAL_DATES = {
    "started": "json_extract_string(metadata, '$.start_date')",
    "completed": "json_extract_string(metadata, '$.completion_date')",
}
"""The trial dates the ``started``/``completed`` ranges compare (other sources: rejected)."""


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


_NAMED = (
    "retracted",
    "expression_of_concern",
    "preprint",
    *DATE_FIELDS,
    "designs",
    "open_access",
    "phases",
    "has_results",
    "condition",
    "intervention",
    "drug",
)
MCP_NAMES = {name: name for name in _NAMED} | {"designs": "design", "phases": "phase"}
"""How the errors name each filter: the MCP tools' argument names."""
CLI_NAMES = {name: "--" + name.replace("_", "-") for name in _NAMED} | {
    "published_from": "--from",
    "published_to": "--to",
    "designs": "--design",
    "phases": "--phase",
}
"""How the errors name each filter: ``citeseal search``'s options."""

UNDECIDED_MEANINGS = {
    "retracted": "whose retraction status is unknown",
    "expression_of_concern": "whose expression-of-concern status is unknown",
    "preprint": "whose preprint status is unknown",
    "published": "whose publication date is unknown or not precise enough for the range",
    "statuses": "whose trial overall status is unknown",
    "designs": "whose publication types do not tell whether they are of that study design",
    "open_access": "whose open-access status is unknown",
    "phases": "whose trial phase is unknown",
    "has_results": "whose trial does not say whether results are posted",
    "condition": "whose trial lists no conditions",
    "intervention": "whose trial lists no interventions",
    "drug": "whose label names no brand, generic or substance",
    "started": "whose trial start date is unknown or not precise enough for the range",
    "completed": "whose trial completion date is unknown or not precise enough for the range",
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


def _range(
    names: Mapping[str, str], low_name: str, high_name: str, low: str | None, high: str | None
) -> tuple[DateBound | None, DateBound | None]:
    start, stop = names[low_name], names[high_name]
    first = parse_date_bound(start, low, end=False) if low else None
    last = parse_date_bound(stop, high, end=True) if high else None
    if first and last and first.day > last.day:
        raise InputError(
            f"{start} {first.text} is after {stop} {last.text}; the range holds no date"
        )
    return first, last


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
    designs: Iterable[str] = (),
    open_access: str = "include",
    phases: Iterable[str] = (),
    has_results: str | None = None,
    condition: str | None = None,
    intervention: str | None = None,
    drug: str | None = None,
    started_from: str | None = None,
    started_to: str | None = None,
    completed_from: str | None = None,
    completed_to: str | None = None,
    allowed_sources: Sequence[str] | None = None,
    names: Mapping[str, str] = MCP_NAMES,
) -> SearchFilters:
    """Parse the filters as a person or a model gives them; errors call each filter by
    ``names`` (:data:`MCP_NAMES` or :data:`CLI_NAMES`)."""
    published = _range(names, "published_from", "published_to", published_from, published_to)
    started = _range(names, "started_from", "started_to", started_from, started_to)
    completed = _range(names, "completed_from", "completed_to", completed_from, completed_to)
    return SearchFilters(
        sources=parse_sources(sources, allowed_sources),
        retracted=parse_inclusion(names["retracted"], retracted),
        expression_of_concern=parse_inclusion(
            names["expression_of_concern"], expression_of_concern
        ),
        preprint=parse_inclusion(names["preprint"], preprint),
        published_from=published[0],
        published_to=published[1],
        statuses=parse_statuses(statuses, held_statuses),
        designs=design_table.parse_designs(names["designs"], designs),
        open_access=parse_inclusion(names["open_access"], open_access),
        phases=facets.parse_phases(names["phases"], phases),
        has_results=(
            facets.parse_yes_no(names["has_results"], has_results)
            if has_results is not None
            else None
        ),
        condition=facets.parse_term(names["condition"], condition),
        intervention=facets.parse_term(names["intervention"], intervention),
        drug=facets.parse_term(names["drug"], drug),
        started_from=started[0],
        started_to=started[1],
        completed_from=completed[0],
        completed_to=completed[1],
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


def _date_state(column: str, key: str, low: DateBound | None, high: DateBound | None) -> str:
    first = _covered_sql(column, last=False)
    last = _covered_sql(column, last=True)
    inside = [f"{first} >= ${key}_from"] if low else []
    inside += [f"{last} <= ${key}_to"] if high else []
    outside = [f"{last} < ${key}_from"] if low else []
    outside += [f"{first} > ${key}_to"] if high else []
    # a NULL (no date) makes both tests NULL: the CASE gives NULL, undecided
    return f"CASE WHEN {' AND '.join(inside)} THEN 1 WHEN {' OR '.join(outside)} THEN 0 END"


def _date_states(
    filters: SearchFilters, states: list[tuple[str, str]], params: dict[str, object]
) -> None:
    for key, (low_name, high_name) in DATE_RANGES.items():
        low: DateBound | None = getattr(filters, low_name)
        high: DateBound | None = getattr(filters, high_name)
        if not (low or high):
            continue
        column = TRIAL_DATES.get(key, "published")
        state = _date_state(column, key, low, high)
        if key in TRIAL_DATES:
            state = f"CASE WHEN source <> 'clinicaltrials' THEN 0 ELSE {state} END"
        states.append((key, state))
        if low:
            params[f"{key}_from"] = low.day
        if high:
            params[f"{key}_to"] = high.day


def filter_states(filters: SearchFilters, *, sep: str) -> FilterSQL:
    """The SQL of every active filter (module docstring) over a hit's facts: the columns
    ``source``, ``retracted``, ``expression_of_concern``, ``preprint``, ``status``,
    ``metadata``, ``publication_types``, ``licence`` and ``published`` (:data:`PUBLISHED_SQL`)
    of the relation aliased ``h`` (the fielded trial filters read its passages through it);
    ``sep`` joins list parameters (the store's separator). A NULL fact makes a comparison
    NULL, which is what "undecided" is."""
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
    _date_states(filters, states, params)
    if filters.statuses:
        states.append(
            (
                "statuses",
                "CASE WHEN source <> 'clinicaltrials' THEN 0 WHEN status IS NULL THEN NULL "
                "WHEN list_contains(string_split($statuses, $sep), status) THEN 1 ELSE 0 END",
            )
        )
        params.update(statuses=sep.join(filters.statuses), sep=sep)
    if filters.designs:
        terms = design_table.design_terms(filters.designs)
        sql, design_params = design_table.design_state(terms, "publication_types", sep=sep)
        states.append(("designs", sql))
        params.update(design_params, sep=sep)
    if filters.open_access != "include":
        states.append(("open_access", facets.open_access_state(filters.open_access)))
    if filters.phases:
        states.append(("phases", facets.PHASES_SQL))
        params.update(phases=sep.join(filters.phases), sep=sep)
    if filters.has_results is not None:
        states.append(("has_results", facets.HAS_RESULTS_SQL))
        params["has_results"] = "true" if filters.has_results == "yes" else "false"
    for name in facets.TRIAL_FIELDS:
        value: str | None = getattr(filters, name)
        if value is not None:
            states.append((name, facets.trial_field_state(name)))
            params[name] = value
    if filters.drug is not None:
        states.append(("drug", facets.DRUG_SQL))
        params["drug"] = filters.drug
    return FilterSQL(tuple(states), params)


UNDECIDABLE = frozenset(
    {*FLAGS, *DATE_RANGES, "statuses", "designs", "open_access", "phases", "has_results"}
    | {*facets.TRIAL_FIELDS, "drug"}
)
"""The filters that can leave a record undecided (every one but ``sources``)."""


@dataclass(frozen=True)
class StateColumns:
    """How a search statement applies :func:`filter_states`' states to a relation of hits:
    ``columns`` adds one 0/1/NULL column per filter (``f0``, ``f1`` … in ``names``), ``kept``
    is the condition every filter admits (``TRUE`` without filters)."""

    names: list[str]
    columns: str
    kept: str

    def undecided(self, count: str = "count(*)", relation: str = "states") -> list[str]:
        """One count per filter, ``u0``, ``u1`` …: the rows of ``relation`` that filter cannot
        decide and no other filter rejects (what ``excluded_unknown`` reports)."""
        return [
            f"(SELECT {count} FROM {relation} WHERE {name} IS NULL"  # noqa: S608
            + "".join(f" AND {other} IS DISTINCT FROM 0" for other in self.names if other != name)
            + f") AS u{n}"
            for n, name in enumerate(self.names)
        ]


def state_columns(states: Sequence[tuple[str, str]]) -> StateColumns:
    """The columns and the keep condition of ``states`` (:func:`filter_states`)."""
    names = [f"f{n}" for n in range(len(states))]
    columns = "".join(f", {sql} AS {name}" for name, (_, sql) in zip(names, states, strict=True))
    return StateColumns(names, columns, " AND ".join(f"{name} = 1" for name in names) or "TRUE")
