"""Works: the records of one paper across sources, grouped at search time.

A PubMed record, its Europe PMC copy, its Crossref record and its preprint are four records of
one *work*. Two records belong to the same work when they share an identifier, or when one is
linked to the other by a preprint relation, and the relation is transitive (a PubMed record
that shares its PMID with a Europe PMC record that shares its DOI with a Crossref record: one
work of three). The graph::

    node        a record id (current version, not withdrawn: what search ranks), or an
                identifier: its record id itself, ``pmid:`` + pmid, ``pmcid:`` + PMCID
                (upper-cased), ``doi:`` + DOI (case-folded: DOIs are case-insensitive)
    edge        record — each identifier it carries; record — the target of each of its
                ``preprint_of`` / ``has_preprint`` relations (Europe PMC "Preprint of" /
                "Preprint in", Crossref ``is-preprint-of`` / ``has-preprint``)
    work        a connected component; its id is the smallest record id in it

The components are found in SQL by a recursive walk from each record over the identifiers
that at least two records share (an identifier only one record carries connects nothing, so
the walk skips the bulk of the graph). Since schema 6 a build walks from *every* record once,
at its end, and stores each record's work and its work's flags in ``search_works``
(:func:`store_works`); ``meta.search_works`` then names :data:`WORKS_VERSION` and the
snapshot's own id, so a table copied along with a parent's meta, or written by an older rule,
is never taken for this snapshot's (:func:`stored_works`). A snapshot without it (older ones,
or one written by a path that does not store works) is grouped at search time, walking only
from the records the search keeps (:func:`works_sql`): the same components, as the stored
table is the same walk over all records. Either way the grouping is a pure function of the
snapshot: the same snapshot and query give the same works on every run.

Flags of a work: ``retracted`` and ``expression_of_concern`` are about the paper, so a work
carries them **fail closed** over every record of the work (matching the query or not): True
when any record says True, else unknown (None) when any record does not know, else False.
``preprint`` is a property of each record (a preprint and its published version are one work),
so a result shows the flag of the record it shows.
"""

from __future__ import annotations

import duckdb

from pipeline.snapshot.store import read_meta, table_names, write_meta

WORKS_VERSION = "works-1"
"""Recorded in ``meta.search_works`` with the snapshot id; change it whenever a rule changes."""

PREPRINT_KINDS = ("preprint_of", "has_preprint")
"""Relation kinds that join a preprint and its published version into one work."""

WORK_FLAGS = ("retracted", "expression_of_concern")
"""Flags a work carries fail closed over all its records (module docstring)."""

_IDENT_SQL = "CASE WHEN starts_with({x}, 'doi:') THEN lower({x}) ELSE {x} END"


def _ident(column: str) -> str:
    return _IDENT_SQL.format(x=column)


def fold_flag_sql(column: str) -> str:
    """A work's flag over its records' ``column``: True if any True, NULL if any NULL, else
    False (an aggregate)."""
    return (
        f"CASE WHEN bool_or({column}) THEN TRUE "
        f"WHEN count({column}) < count(*) THEN NULL ELSE FALSE END"
    )


def _graph_sql() -> str:
    """CTEs ``live`` (the current, not withdrawn record versions), ``carried`` and ``shared``
    (the identifiers each record carries, and those at least two records carry)."""
    kinds = ", ".join(f"'{kind}'" for kind in PREPRINT_KINDS)
    return f"""
live AS MATERIALIZED (
    SELECT r.record_id, r.pmid, r.pmcid, r.doi, r.retracted, r.expression_of_concern
    FROM records r JOIN record_state s
      ON s.record_id = r.record_id AND s.current_version = r.version
    WHERE NOT s.withdrawn),
carried AS (
    SELECT record_id, {_ident("record_id")} AS ident FROM live
    UNION ALL SELECT record_id, 'pmid:' || trim(pmid) FROM live WHERE trim(pmid) <> ''
    UNION ALL SELECT record_id, 'pmcid:' || upper(trim(pmcid)) FROM live WHERE trim(pmcid) <> ''
    UNION ALL SELECT record_id, 'doi:' || lower(trim(doi)) FROM live WHERE trim(doi) <> ''
    UNION ALL SELECT l.record_id, {_ident("trim(l.target)")} FROM relations l
      SEMI JOIN live USING (record_id) WHERE l.kind IN ({kinds})),
shared AS MATERIALIZED (
    SELECT * FROM (SELECT DISTINCT record_id, ident FROM carried)
    QUALIFY count(*) OVER (PARTITION BY ident) > 1)"""  # noqa: S608


def _reach_sql(seeds: str) -> str:
    """The CTE ``reach (seed, record_id)``: every record the walk from ``seeds`` meets."""
    return f"""reach (seed, record_id) AS (
    SELECT DISTINCT record_id, record_id FROM {seeds}
    UNION
    SELECT reach.seed, b.record_id FROM reach
    JOIN shared a ON a.record_id = reach.record_id
    JOIN shared b ON b.ident = a.ident)"""  # noqa: S608


def store_works(con: duckdb.DuckDBPyConnection) -> int:
    """Fill ``search_works`` and ``search_postings`` (schema 6) for the snapshot as it now is:
    every current, not withdrawn record with its work, its work's flags and numbers (a record's
    ``record_no`` is its rank in record id order, so integers order as the ids do), then every
    posting in term order with the passage's length and, for a current, not withdrawn passage
    version, its record's numbers and work flags; mark it all in ``meta.search_works``. (A
    search looks up its page's passages by record id through the index the build makes
    last: :func:`pipeline.snapshot.store.index_record_ids`.) Run it last, once no record,
    state, relation or passage changes. Returns the works rows."""
    flags = ", ".join(f"{fold_flag_sql('r.' + flag)} AS {flag}" for flag in WORK_FLAGS)
    con.execute("DELETE FROM search_works")
    con.execute("DELETE FROM search_postings")
    con.execute(
        f"""INSERT INTO search_works
WITH RECURSIVE {_graph_sql()},
{_reach_sql("live")},
work_of AS MATERIALIZED (SELECT seed AS record_id, min(record_id) AS work FROM reach GROUP BY seed),
work_flags AS (SELECT w.work, {flags} FROM work_of w JOIN live r USING (record_id) GROUP BY w.work),
numbered AS (SELECT record_id, row_number() OVER (ORDER BY record_id)::INTEGER AS record_no
             FROM work_of)
SELECT w.record_id, l.current_version, w.work, f.retracted, f.expression_of_concern,
       n.record_no, k.record_no
FROM work_of w JOIN work_flags f USING (work) JOIN record_state l USING (record_id)
JOIN numbered n USING (record_id) JOIN numbered k ON k.record_id = w.work
ORDER BY n.record_no"""  # noqa: S608
    )
    store_postings(con)
    snapshot_id = read_meta(con).get("snapshot_id", "")
    write_meta(con, {"search_works": f"{WORKS_VERSION} {snapshot_id}"})
    row = con.execute("SELECT count(*) FROM search_works").fetchone()
    return int(row[0]) if row else 0


POSTINGS_CHUNK = 2_000_000
"""Postings sorted at once by :func:`store_postings`: the sort of a chunk stays within a
build's memory limit (``CITESEAL_BUILD_MEMORY``, 128 MB by default), where one sort of a
million passages' 14 million postings spilled to disk and took three to four times longer."""


def store_postings(con: duckdb.DuckDBPyConnection, chunk: int = POSTINGS_CHUNK) -> None:
    """Fill ``search_postings`` from ``search_terms``, in term order: each passage's length,
    record and work numbers and work flags looked up once per passage (a temporary table by
    docid), then the postings written range of terms by range of terms, each range holding
    about ``chunk`` postings (a term is never split) and sorted on its own; appended one
    after the other, the ranges leave the table in term order."""
    con.execute(
        "CREATE OR REPLACE TEMP TABLE posting_docs AS SELECT d.docid, d.length, w.record_no, "
        "w.work_no, w.retracted, w.expression_of_concern FROM search_docs d "
        "LEFT JOIN search_works w ON w.record_id = d.record_id AND w.version = d.version"
    )
    ends = con.execute(  # the last term of each range
        "SELECT max(term_id) FROM (SELECT term_id, sum(n) OVER (ORDER BY term_id) AS upto "
        "FROM (SELECT term_id, count(*) AS n FROM search_terms GROUP BY term_id)) "
        "GROUP BY (upto - 1) // $1 ORDER BY 1",
        [max(1, int(chunk))],
    ).fetchall()
    low = None
    for (high,) in ends:
        con.execute(
            "INSERT INTO search_postings SELECT t.term_id, t.docid, t.tf, d.length, "
            "d.record_no, d.work_no, d.retracted, d.expression_of_concern "
            "FROM search_terms t JOIN posting_docs d USING (docid) "
            "WHERE t.term_id > coalesce($1, -1) AND t.term_id <= $2 ORDER BY t.term_id, t.docid",
            [low, high],
        )
        low = high
    con.execute("DROP TABLE posting_docs")


def stored_works(con: duckdb.DuckDBPyConnection) -> bool:
    """Whether the snapshot of ``con`` holds its own works, stored by this rule (module
    docstring); False means: group at search time."""
    if "search_postings" not in table_names(con):
        return False
    meta = read_meta(con)
    return meta.get("search_works") == f"{WORKS_VERSION} {meta.get('snapshot_id', '')}"


def works_sql(kept: str, *, stored: bool = False) -> str:
    """CTEs (to follow ``WITH RECURSIVE``) that group the records of ``kept`` (a CTE with a
    ``record_id`` column) into works:

    ``work_of (record_id, work)``          each kept record and its work id
    ``work_members (work, record_id)``     every record of those works, kept or not
    ``work_flags (work, retracted, expression_of_concern)``  the works' flags, fail closed

    ``stored``: read them from ``search_works`` (:func:`stored_works`), else walk the graph.
    """
    if stored:
        return f"""
work_of AS MATERIALIZED (
    SELECT w.record_id, w.work FROM search_works w
    SEMI JOIN {kept} k ON k.record_id = w.record_id),
work_members AS MATERIALIZED (
    SELECT w.work, w.record_id FROM search_works w SEMI JOIN work_of o ON o.work = w.work),
work_flags AS MATERIALIZED (
    SELECT DISTINCT w.work, w.retracted, w.expression_of_concern FROM search_works w
    SEMI JOIN work_of o ON o.work = w.work)"""  # noqa: S608
    flags = ", ".join(f"{fold_flag_sql('r.' + flag)} AS {flag}" for flag in WORK_FLAGS)
    return f"""{_graph_sql()},
{_reach_sql(kept)},
work_of AS MATERIALIZED (SELECT seed AS record_id, min(record_id) AS work FROM reach GROUP BY seed),
work_members AS MATERIALIZED (
    SELECT DISTINCT w.work, reach.record_id FROM reach JOIN work_of w ON w.record_id = reach.seed),
work_flags AS MATERIALIZED (
    SELECT m.work, {flags} FROM work_members m JOIN live r USING (record_id) GROUP BY m.work)"""  # noqa: S608
