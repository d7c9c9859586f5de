"""Passage search (BM25) and the passages of one record, with minted handles.

The index is built into every snapshot (:mod:`pipeline.snapshot.index`: words lower-cased,
accent-free, Porter-stemmed, English stop words left out). Search ranks the passages of the
*current* version of each record that is not withdrawn. Handles are minted here, from the
caller's keyring; the snapshot holds no key and no handle. nct, setid and ppr handles pin
``@version``; pmid and pmcid handles do not (see docs/contract.md).
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import duckdb

from audit.errors import CitationSyntaxError, InputError, NotInSnapshot
from audit.handles import PINNED_SCHEMES, SCHEMES, Locator, mint, parse_locator
from audit.keys import Keyring
from audit.terminal import one_line
from pipeline.errors import SnapshotError
from pipeline.snapshot.filters import (
    PUBLISHED_SQL,
    UNDECIDABLE,
    SearchFilters,
    filter_states,
    parse_sources,
    state_columns,
)
from pipeline.snapshot.index import HITS_FROM, INDEX_VERSION, numbered, scored_sql
from pipeline.snapshot.ranked import (
    best_passages,
    ranking_sql,
    record_facts,
    records_of,
    term_ids,
)
from pipeline.snapshot.store import SEP, connect, first_line, load_fts, read_meta
from pipeline.snapshot.works import WORK_FLAGS, stored_works, works_sql

MAX_QUERY_CHARS = 1_000
MAX_LIMIT = 1_000
MAX_OFFSET = 1_000_000
RECORD_ID_MARKS = ("@", "/", "~")
"""What follows the id in a handle (``@version``, ``/path``, ``~check``): never in a record id."""


@dataclass(frozen=True)
class AlsoRecord:
    """Another record of a search result's work: its best passage's handle and score for the
    query among the passages the filters keep (both None when it has none: it matches no word
    of the query, or a filter left it out; the handle is also None for a passage no handle
    scheme covers)."""

    record_id: str
    source: str
    handle: str | None
    score: float | None


def also_text(other: AlsoRecord) -> str:
    """Another record of a result's work as the text outputs name it (terminal-safe)."""
    if other.handle is not None:
        return f"{one_line(other.handle)} ({one_line(other.source)})"
    if other.score is not None:
        return f"{one_line(other.record_id)} ({one_line(other.source)}; no handle scheme)"
    return f"{one_line(other.record_id)} ({one_line(other.source)}; no passage kept)"


@dataclass(frozen=True)
class PassageView:
    record_id: str
    version: str
    path: str
    section: str | None
    text: str
    handle: str | None  # None for records no handle scheme covers (doi:)
    score: float | None = None
    source: str | None = None
    title: str | None = None
    flags: dict[str, bool | None] = field(default_factory=dict)
    status: str | None = None  # the record's status (registry status, publication status…)
    published: str | None = None  # the record's date as its source gives it (filters.py)
    work: str | None = None  # search results: the work's id (pipeline.snapshot.works)
    also: list[AlsoRecord] = field(default_factory=list)  # search results: the work's others


@dataclass(frozen=True)
class RecordView:
    record_id: str
    source: str
    version: str
    current_version: str
    versions: list[str]
    withdrawn: bool
    withdrawn_since: str | None
    title: str | None
    status: str | None
    flags: dict[str, bool | None]
    relations: list[dict[str, str | None]]
    passages: list[PassageView]


def locator_for(record_id: str, version: str, path: str) -> Locator | None:
    """The locator of a passage (version pinned for nct/setid/ppr), None for other schemes;
    :class:`CitationSyntaxError` when the id, version or path breaks the grammar."""
    scheme, _, ident = record_id.partition(":")
    if scheme not in SCHEMES:
        return None
    return Locator(scheme, ident, path, version if scheme in PINNED_SCHEMES else None)


def handle_for(keyring: Keyring, record_id: str, version: str, path: str) -> str | None:
    """The handle of a passage, or None when its id or path cannot form one."""
    try:
        locator = locator_for(record_id, version, path)  # a Locator checks its grammar
    except CitationSyntaxError:
        return None
    return None if locator is None else mint(keyring, locator)


def open_snapshot(path: Path) -> duckdb.DuckDBPyConnection:
    """A read-only connection with the fts extension loaded (for ``stem``)."""
    con = connect(path, read_only=True)
    load_fts(con)
    try:
        index = read_meta(con).get("search_index")
    except duckdb.Error as error:
        con.close()
        raise SnapshotError(f"cannot read snapshot {path}: {first_line(error)}") from None
    if index != INDEX_VERSION:
        con.close()
        raise SnapshotError(
            f"snapshot {path} has search index {index!r}; this citeseal searches {INDEX_VERSION!r}",
            advice="rebuild it: citeseal snapshot rebuild PATH",
        )
    return con


@dataclass(frozen=True)
class SearchPage:
    """One page of a filtered search: ``hits`` (best first), one per *work*
    (:mod:`pipeline.snapshot.works`), from position ``offset`` of the ``total`` works that have
    a passage matching the query and passing every filter (``passages`` such passages in
    all). ``excluded_unknown`` counts, per active filter that can be undecided, the *records*
    matching the query that no filter rejected but this one could not decide (its value
    unknown): left out, never silently (see :mod:`pipeline.snapshot.filters`).
    ``excluded_by_work`` counts, per work flag set to ``exclude``, the works left out because
    another record of the work carries the flag (the kept record did not)."""

    hits: list[PassageView]
    offset: int
    total: int
    excluded_unknown: dict[str, int]
    passages: int = 0
    excluded_by_work: dict[str, int] = field(default_factory=dict)


def check_query(query: str) -> None:
    """Raise unless ``query`` is a search query within bounds."""
    if not query.strip():
        raise InputError("the search query is empty")
    if len(query) > MAX_QUERY_CHARS:
        raise InputError(f"the search query is {len(query)} characters; at most {MAX_QUERY_CHARS}")


_ALSO = (
    "{'record_id': m.record_id, 'source': st.source, 'version': st.current_version, "
    "'path': bp.path, 'score': b.score}"
)


def page_sql(
    states: Sequence[tuple[str, str]],
    *,
    numbered: bool = True,
    excluded_work_flags: Sequence[str] = (),
) -> str:
    """The paged, filtered search, one result per work: one row per work of the page (its
    best passage, the other records of the work in ``also``), each carrying ``total`` (works),
    ``passages``, one undecided count per filter and one count per excluded work flag (one row
    of NULL hit columns when the page is empty). Filters decide per record *before* grouping;
    a work whose flag in ``excluded_work_flags`` is True (any record of it flagged) is left
    out. Parameters: $query, $limit, $offset and the filters' own (:func:`filter_states`)."""
    facts = (
        "p.record_id, p.version, p.path, p.seq, scored.score, s.source, "
        "r.title, r.retracted, r.expression_of_concern, r.preprint, r.status, r.metadata, "
        "r.version_date, r.year, r.publication_types, r.licence"
    )
    # the date is worked out for every hit only when a filter needs it; else for the page
    dated = PUBLISHED_SQL if any(name == "published" for name, _ in states) else "NULL::VARCHAR"
    applied = state_columns(states)
    columns, kept = applied.columns, applied.kept
    undecided = applied.undecided("count(DISTINCT record_id)")
    dropped = [
        f"(SELECT count(*) FROM best WHERE w_{flag} IS TRUE) AS x{n}"  # noqa: S608
        for n, flag in enumerate(excluded_work_flags)
    ]
    shown = " AND ".join(f"w_{flag} IS NOT TRUE" for flag in excluded_work_flags) or "TRUE"
    summary = ", ".join(
        [
            "(SELECT count(*) FROM shown) AS total",
            "(SELECT count(*) FROM kept) AS passages",
            *undecided,
            *dropped,
        ]
    )
    order = "score DESC, record_id, seq"
    # windows and sorts run over narrow rows: one per record, then one per work; the wide
    # facts of a hit are read for the page only
    return f"""
WITH RECURSIVE {scored_sql(numbered=numbered)},
hits AS (SELECT {facts} {HITS_FROM}),
dated AS (SELECT *, {dated} AS published FROM hits),
states AS MATERIALIZED (SELECT *{columns} FROM dated h),
kept AS MATERIALIZED (SELECT record_id, version, path, seq, score FROM states WHERE {kept}),
{works_sql("kept")},
record_top AS (SELECT record_id, max(score) AS score FROM kept GROUP BY record_id),
record_best AS MATERIALIZED (
    SELECT k.record_id, k.version, k.score, min(k.seq) AS seq, w.work
    FROM kept k JOIN record_top t ON t.record_id = k.record_id AND k.score = t.score
    JOIN work_of w ON w.record_id = k.record_id
    GROUP BY k.record_id, k.version, k.score, w.work),
best AS (
    SELECT b.*, f.retracted AS w_retracted, f.expression_of_concern AS w_expression_of_concern
    FROM record_best b JOIN work_flags f USING (work)
    QUALIFY row_number() OVER (PARTITION BY b.work ORDER BY {order}) = 1),
shown AS (SELECT * FROM best WHERE {shown}),
paged AS (SELECT * FROM shown ORDER BY {order} LIMIT $limit OFFSET $offset),
also AS (
    SELECT paged.work, list({_ALSO} ORDER BY b.score DESC NULLS LAST, m.record_id) AS also
    FROM paged
    JOIN work_members m ON m.work = paged.work AND m.record_id <> paged.record_id
    JOIN record_state st ON st.record_id = m.record_id
    LEFT JOIN record_best b ON b.record_id = m.record_id
    LEFT JOIN passages bp ON bp.record_id = b.record_id AND bp.version = b.version
         AND bp.seq = b.seq
    GROUP BY paged.work),
facts AS (
    SELECT paged.*, t.path, t.section, t.text, s.source, r.title, r.preprint, r.status,
           r.metadata, r.version_date, r.year, also.also
    FROM paged
    JOIN passages t ON t.record_id = paged.record_id AND t.version = paged.version
         AND t.seq = paged.seq
    JOIN record_state s ON s.record_id = paged.record_id
    JOIN records r ON r.record_id = paged.record_id AND r.version = paged.version
    LEFT JOIN also USING (work)),
page AS (SELECT *, {PUBLISHED_SQL} AS published FROM facts),
summary AS (SELECT {summary})
SELECT summary.*, page.record_id, page.version, page.path, page.section, page.text,
       page.score, page.source, page.title, page.w_retracted, page.w_expression_of_concern,
       page.preprint, page.status, page.published, page.work, page.also
FROM summary LEFT JOIN page ON TRUE
ORDER BY page.{order.replace(", ", ", page.")}
"""  # noqa: S608


def search_page(
    con: duckdb.DuckDBPyConnection,
    query: str,
    keyring: Keyring,
    filters: SearchFilters = SearchFilters(),  # noqa: B008 (frozen: never mutated)
    *,
    limit: int = 10,
    offset: int = 0,
) -> SearchPage:
    """The ``limit`` best works for ``query`` (BM25) that have a passage passing ``filters``,
    from position ``offset`` of the ranking, each as its best passage with a handle and the
    work's other records in ``also``. The ranking is a total order (the best passage's score,
    then its record id, then its passage order), so consecutive pages never repeat or skip a
    work. A snapshot that holds its works (schema 6) takes the fast path of
    :mod:`pipeline.snapshot.ranked`; any other the single statement of :func:`page_sql`: the
    same pages and counts."""
    check_query(query)
    if not 1 <= limit <= MAX_LIMIT:
        raise InputError(f"--limit must be between 1 and {MAX_LIMIT}, got {limit}")
    if not 0 <= offset <= MAX_OFFSET:
        raise InputError(f"the offset must be between 0 and {MAX_OFFSET}, got {offset}")
    compiled = filter_states(filters, sep=SEP)
    excluded_flags = [flag for flag in WORK_FLAGS if getattr(filters, flag) == "exclude"]
    params: dict[str, object] = {"query": query, "limit": limit, "offset": offset}
    params.update(compiled.params)
    try:
        terms_numbered = numbered(con)  # one look at the catalog, not one per use
        if terms_numbered and stored_works(con):
            return _fast_page(con, query, keyring, compiled.states, params, excluded_flags)
        sql = page_sql(compiled.states, numbered=terms_numbered, excluded_work_flags=excluded_flags)
        rows = con.execute(sql, params).fetchall()
    except duckdb.Error as error:
        raise SnapshotError(f"search failed: {first_line(error)}") from None
    n_states = len(compiled.states)
    width = 2 + n_states + len(excluded_flags)
    first = rows[0] if rows else (0, 0, *([0] * (width - 2)))
    excluded = {name: int(first[2 + n]) for n, (name, _) in enumerate(compiled.states)}
    hits = [_view(keyring, row[width:]) for row in rows if row[width] is not None]
    return SearchPage(
        hits=hits,
        offset=offset,
        total=int(first[0]),
        excluded_unknown={k: v for k, v in excluded.items() if k in UNDECIDABLE},
        passages=int(first[1]),
        excluded_by_work={
            flag: int(first[2 + n_states + n]) for n, flag in enumerate(excluded_flags)
        },
    )


def _fast_page(
    con: duckdb.DuckDBPyConnection,
    query: str,
    keyring: Keyring,
    states: Sequence[tuple[str, str]],
    params: dict[str, object],
    excluded_flags: Sequence[str],
) -> SearchPage:
    """:func:`search_page` over stored works (:mod:`pipeline.snapshot.ranked`)."""
    offset = int(str(params["offset"]))
    ids = term_ids(con, query)
    width = 2 + len(states) + len(excluded_flags)
    rows: list[tuple[Any, ...]]
    if ids:
        sql = ranking_sql(ids, states, excluded_work_flags=excluded_flags)
        rows = con.execute(sql, {k: v for k, v in params.items() if k != "query"}).fetchall()
    else:  # no term of the query is held: nothing matches
        rows = [(0,) * width + (None,) * 7]
    first = rows[0]
    page = [row[width:] for row in rows if row[width] is not None]
    members = [entry for row in page for entry in row[6] or ()]
    numbers = [int(row[0]) for row in page] + [int(e["record_no"]) for e in members]
    records = records_of(con, numbers)
    docids = [d for row in page for d in row[5] or ()]
    docids += [d for e in members for d in e["docids"] or ()]
    passages = best_passages(con, docids)
    facts = record_facts(con, [records[int(row[0])][:2] for row in page])
    hits = []
    for number, score, _, w_ret, w_eoc, _, also in page:
        rid, version, work, _ = records[int(number)]
        path, _, section, text = passages[rid]
        source, title, pre, status, published = facts[rid]
        others = []
        for entry in also or ():
            other, other_version, _, other_source = records[int(entry["record_no"])]
            held = entry["score"] is not None
            others.append(
                {
                    "record_id": other,
                    "source": other_source,
                    "version": other_version,
                    "path": passages[other][0] if held else None,
                    "score": entry["score"],
                }
            )
        view = (rid, version, path, section, text, score, source, title, w_ret, w_eoc, pre)
        hits.append(_view(keyring, (*view, status, published, work, others)))
    named = [name for name, _ in states]
    return SearchPage(
        hits=hits,
        offset=offset,
        total=int(first[0]),
        excluded_unknown={
            name: int(first[2 + n]) for n, name in enumerate(named) if name in UNDECIDABLE
        },
        passages=int(first[1]),
        excluded_by_work={
            flag: int(first[2 + len(states) + n]) for n, flag in enumerate(excluded_flags)
        },
    )


def _also(keyring: Keyring, entry: dict[str, Any]) -> AlsoRecord:
    rid, version, path, score = entry["record_id"], entry["version"], entry["path"], entry["score"]
    return AlsoRecord(
        record_id=rid,
        source=entry["source"],
        handle=handle_for(keyring, rid, version, path) if path is not None else None,
        score=round(float(score), 4) if score is not None else None,
    )


def _view(keyring: Keyring, row: Sequence[Any]) -> PassageView:
    rid, version, path, section, text, score, source, title, ret, eoc, pre, status, pub = row[:13]
    work, also = row[13:15]
    return PassageView(
        record_id=rid,
        version=version,
        path=path,
        section=section,
        text=text,
        handle=handle_for(keyring, rid, version, path),
        score=round(float(score), 4),
        source=source,
        title=title,
        flags={"retracted": ret, "expression_of_concern": eoc, "preprint": pre},
        status=status,
        published=pub,
        work=work,
        also=[_also(keyring, entry) for entry in also or ()],
    )


def search_passages(
    con: duckdb.DuckDBPyConnection,
    query: str,
    keyring: Keyring,
    *,
    sources: Sequence[str] = (),
    limit: int = 10,
) -> list[PassageView]:
    """The ``limit`` best passages for ``query`` (BM25), best first, with handles."""
    check_query(query)
    if not 1 <= limit <= MAX_LIMIT:
        raise InputError(f"--limit must be between 1 and {MAX_LIMIT}, got {limit}")
    filters = SearchFilters(sources=parse_sources(sources))
    return search_page(con, query, keyring, filters, limit=limit).hits


def held_statuses(con: duckdb.DuckDBPyConnection) -> list[str]:
    """The overall statuses the snapshot's trials hold (current versions)."""
    try:
        rows = con.execute(
            "SELECT DISTINCT r.status FROM records r JOIN record_state s "
            "ON s.record_id = r.record_id AND s.current_version = r.version "
            "WHERE s.source = 'clinicaltrials' AND r.status IS NOT NULL ORDER BY 1"
        ).fetchall()
    except duckdb.Error as error:
        raise SnapshotError(f"cannot read trial statuses: {first_line(error)}") from None
    return [str(row[0]) for row in rows]


def _check_record_id(record_id: str) -> None:
    """Raise when ``record_id`` is no ``scheme:id`` a handle can carry (so a typo is called
    what it is, not a record missing from the snapshot).

    Every message is about the text given: a handle's ``@version``, ``/path`` or ``~check``
    after the id is named as such, never the parser's view of the locator built here to check
    the id (``record_id`` + a pin + ``/title``)."""
    scheme, _, ident = record_id.partition(":")
    if scheme in SCHEMES and any(mark in ident for mark in RECORD_ID_MARKS):
        raise InputError(
            f"{record_id} is not a record id: a record id is SCHEME:ID, "
            "without @version, /path or ~check"
        )
    pin = "@1" if scheme in PINNED_SCHEMES else ""  # the id alone, whatever its scheme
    try:
        parse_locator(f"{record_id}{pin}/title")
    except CitationSyntaxError as error:
        raise InputError(f"{record_id} is not a record id: {error.message}") from None


def record_passages(
    con: duckdb.DuckDBPyConnection, record_id: str, keyring: Keyring, *, version: str | None = None
) -> RecordView:
    """Every passage of one version of a record (the current one by default), with handles."""
    state = con.execute(
        "SELECT source, current_version, withdrawn, withdrawn_since FROM record_state "
        "WHERE record_id = ?",
        [record_id],
    ).fetchone()
    if state is None:
        _check_record_id(record_id)
        raise NotInSnapshot(f"{record_id} is not in this snapshot")
    source, current, withdrawn, since = state
    versions = [
        str(v[0])
        for v in con.execute(
            "SELECT version FROM record_versions WHERE record_id = ? ORDER BY seq", [record_id]
        ).fetchall()
    ]
    chosen = version or current
    if chosen not in versions:
        raise InputError(
            f"{record_id} has no version {chosen!r} in this snapshot; "
            f"it holds {', '.join(versions)}"
        )
    record = con.execute(
        "SELECT title, status, retracted, expression_of_concern, preprint FROM records "
        "WHERE record_id = ? AND version = ?",
        [record_id, chosen],
    ).fetchone()
    title, status, ret, eoc, pre = record or (None, None, None, None, None)
    relations = [
        {"kind": k, "target": t, "source": s, "date": d}
        for k, t, s, d in con.execute(
            "SELECT kind, target, source, date FROM relations WHERE record_id = ? "
            "ORDER BY kind, target",
            [record_id],
        ).fetchall()
    ]
    passages = [
        PassageView(
            record_id=record_id,
            version=chosen,
            path=path,
            section=section,
            text=text,
            handle=handle_for(keyring, record_id, chosen, path),
        )
        for path, section, text in con.execute(
            "SELECT path, section, text FROM passages WHERE record_id = ? AND version = ? "
            "ORDER BY seq",
            [record_id, chosen],
        ).fetchall()
    ]
    return RecordView(
        record_id=record_id,
        source=source,
        version=chosen,
        current_version=current,
        versions=versions,
        withdrawn=bool(withdrawn),
        withdrawn_since=since,
        title=title,
        status=status,
        flags={"retracted": ret, "expression_of_concern": eoc, "preprint": pre},
        relations=relations,
        passages=passages,
    )


def to_json(value: Any) -> str:
    """JSON for ``--json`` output (dataclasses included)."""
    from dataclasses import asdict, is_dataclass

    def default(obj: Any) -> Any:
        if is_dataclass(obj) and not isinstance(obj, type):
            return asdict(obj)
        raise TypeError(type(obj).__name__)

    return json.dumps(value, default=default, ensure_ascii=False, indent=2)
