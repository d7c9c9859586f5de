"""A drug's labels without a query: every label the filters keep, newest first.

``citeseal search --drug NAME`` (no query) and the MCP tool ``search_drug_labels`` with
``drug`` and no ``query`` list the current, not withdrawn openFDA labels that pass every filter
(the ``drug`` filter among them: :mod:`pipeline.snapshot.facets`), newest first by the label
version's effective date (``version_date``; a label without one comes last), then by set id:
a total order, so pages never repeat or skip a label. Each label is shown as its first passage
with its handle (which pins the set id and the label version); a label holding no passage has
nothing to cite and is not listed. Undecided records are counted per filter exactly as a
search counts them (:class:`~pipeline.snapshot.search.SearchPage`). A label is its own work:
labels share no identifier.
"""

from __future__ import annotations

from collections.abc import Sequence

import duckdb

from audit.errors import InputError
from audit.keys import Keyring
from pipeline.errors import SnapshotError
from pipeline.snapshot.filters import (
    PUBLISHED_SQL,
    UNDECIDABLE,
    SearchFilters,
    filter_states,
    state_columns,
)
from pipeline.snapshot.search import (
    MAX_LIMIT,
    MAX_OFFSET,
    PassageView,
    SearchPage,
    check_query,
    handle_for,
    search_page,
)
from pipeline.snapshot.store import SEP, first_line

NO_QUERY = "give a query, or a drug name to list that drug's labels"
"""The error of a search with neither a query nor a drug to list."""


def listing_sql(states: Sequence[tuple[str, str]]) -> str:
    """Every current label's first passage, filtered, newest first; each row carries
    ``total`` and one undecided count per filter (one row of NULL label columns when the page
    is empty). Parameters: $limit, $offset and the filters' own."""
    applied = state_columns(states)
    columns, kept = applied.columns, applied.kept
    undecided = applied.undecided()
    summary = ", ".join(["(SELECT count(*) FROM kept) AS total", *undecided])
    order = "version_date DESC NULLS LAST, record_id"
    return f"""
WITH firsts AS (
    SELECT p.record_id, p.version, min(p.seq) AS seq FROM passages p
    JOIN record_state s ON s.record_id = p.record_id AND s.current_version = p.version
    WHERE NOT s.withdrawn AND s.source = 'openfda' GROUP BY p.record_id, p.version),
hits AS (
    SELECT p.record_id, p.version, p.path, p.seq, p.section, p.text, s.source, r.title,
           r.retracted, r.expression_of_concern, r.preprint, r.status, r.metadata,
           r.version_date, r.year, r.publication_types, r.licence
    FROM firsts f
    JOIN passages p ON p.record_id = f.record_id AND p.version = f.version AND p.seq = f.seq
    JOIN record_state s ON s.record_id = f.record_id
    JOIN records r ON r.record_id = f.record_id AND r.version = f.version),
dated AS (SELECT *, {PUBLISHED_SQL} AS published FROM hits),
states AS MATERIALIZED (SELECT *{columns} FROM dated h),
kept AS MATERIALIZED (SELECT * FROM states WHERE {kept}),
paged AS (SELECT * FROM kept ORDER BY {order} LIMIT $limit OFFSET $offset),
summary AS (SELECT {summary})
SELECT summary.*, paged.record_id, paged.version, paged.path, paged.section, paged.text,
       paged.source, paged.title, paged.retracted, paged.expression_of_concern,
       paged.preprint, paged.status, paged.published
FROM summary LEFT JOIN paged ON TRUE
ORDER BY paged.{order.replace(", ", ", paged.")}
"""  # noqa: S608


def label_page(
    con: duckdb.DuckDBPyConnection,
    keyring: Keyring,
    filters: SearchFilters,
    *,
    limit: int = 10,
    offset: int = 0,
) -> SearchPage:
    """The ``limit`` newest labels passing ``filters`` from position ``offset`` (module
    docstring); ``filters.drug`` is required (a listing of every label is no search)."""
    if filters.drug is None:
        raise InputError(f"the search query is empty; {NO_QUERY}")
    if not 1 <= limit <= MAX_LIMIT:
        raise InputError(f"--limit must be between 1 and {MAX_LIMIT}, got {limit}")
    if not 0 <= offset <= MAX_OFFSET:
        raise InputError(f"the offset must be between 0 and {MAX_OFFSET}, got {offset}")
    compiled = filter_states(filters, sep=SEP)
    params: dict[str, object] = {"limit": limit, "offset": offset, **compiled.params}
    try:
        rows = con.execute(listing_sql(compiled.states), params).fetchall()
    except duckdb.Error as error:
        raise SnapshotError(f"label listing failed: {first_line(error)}") from None
    width = 1 + len(compiled.states)
    first = rows[0] if rows else (0, *([0] * (width - 1)))
    excluded = {name: int(first[1 + n]) for n, (name, _) in enumerate(compiled.states)}
    hits = [_view(keyring, row[width:]) for row in rows if row[width] is not None]
    return SearchPage(
        hits=hits,
        offset=offset,
        total=int(first[0]),
        excluded_unknown={k: v for k, v in excluded.items() if k in UNDECIDABLE},
        passages=int(first[0]),  # one passage per label
    )


def _view(keyring: Keyring, row: Sequence[object]) -> PassageView:
    rid, version, path, section, text, source, title, ret, eoc, pre, status, published = row
    return PassageView(
        record_id=str(rid),
        version=str(version),
        path=str(path),
        section=section if isinstance(section, str) else None,
        text=str(text),
        handle=handle_for(keyring, str(rid), str(version), str(path)),
        source=str(source),
        title=title if isinstance(title, str) else None,
        flags={
            "retracted": _flag(ret),
            "expression_of_concern": _flag(eoc),
            "preprint": _flag(pre),
        },
        status=status if isinstance(status, str) else None,
        published=published if isinstance(published, str) else None,
        work=str(rid),
    )


def _flag(value: object) -> bool | None:
    return value if isinstance(value, bool) else None


def find_page(
    con: duckdb.DuckDBPyConnection,
    query: str | None,
    keyring: Keyring,
    filters: SearchFilters,
    *,
    limit: int = 10,
    offset: int = 0,
) -> SearchPage:
    """A search for ``query``, or without one (None or blank) the labels of ``filters.drug``
    newest first; neither is an error."""
    if query is not None and query.strip():
        check_query(query)
        return search_page(con, query, keyring, filters, limit=limit, offset=offset)
    return label_page(con, keyring, filters, limit=limit, offset=offset)
