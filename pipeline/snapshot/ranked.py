"""The fast search path: the ranking, pages and counts of ``search.page_sql`` in three short
statements over a snapshot's stored works and postings (schema 6).

Taken where the snapshot numbers its terms (schema 4) and holds its own works
(:func:`pipeline.snapshot.works.stored_works`); any other snapshot takes the single statement
of ``page_sql``, which groups works at search time. The steps:

1. **Terms**: the query's stems looked up in ``search_vocab``: their numbers. None: the page is
   empty (nothing can match), and nothing else is read.
2. **Ranking** (one statement): the rows of those numbers in ``search_postings`` (the postings
   in term order, each with its passage's length, record and work numbers and work flags:
   :func:`pipeline.snapshot.works.store_works`), the numbers written into the SQL as integer
   literals so that DuckDB skips every row group outside them; BM25 per passage; the current,
   not withdrawn versions (those with a record number); the filters, decided once per
   *record* (a filter reads only record facts); each record's best score; each work's best
   record (score, then record number, which orders as the record id: a record's passages
   share its id, so the passage order is needed only inside a record); the page; the counts.
   One row per work of the page (the record's id, version and work id read from
   ``search_works`` for the page's works only), with its other records and the ids of each
   record's best-scoring passages. No string is joined and no table is read whole but
   ``search_docs.length`` (for the average passage length) and ``search_works``' numbers.
3. **Facts** of those few records and passages, in two statements looked up by record id
   (:func:`page_facts`): the records, their state and the paths of the best-scoring passages;
   then the records' passages, of which each record shows its lowest ``seq`` among its
   best-scoring ones, as ``page_sql`` orders them.

The ranking is the same total order: score, then record id, then passage order.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import duckdb

from pipeline.snapshot.filters import PUBLISHED_SQL, state_columns
from pipeline.snapshot.index import K1, SCORE_DIGITS, B, words_sql
from pipeline.snapshot.works import WORK_FLAGS


def term_ids(con: duckdb.DuckDBPyConnection, query: str) -> list[int]:
    """The numbers of the query's index terms held in ``search_vocab`` (sorted)."""
    stems = f"""SELECT DISTINCT stem(w, 'porter') AS term
    FROM ({words_sql("(SELECT 1 AS one)", "$query", "one")})"""  # noqa: S608
    rows = con.execute(
        f"SELECT v.term_id FROM ({stems}) s JOIN search_vocab v USING (term) ORDER BY 1",  # noqa: S608
        {"query": query},
    ).fetchall()
    return [int(row[0]) for row in rows]


def ranking_sql(
    ids: Sequence[int],
    states: Sequence[tuple[str, str]],
    *,
    excluded_work_flags: Sequence[str] = (),
) -> str:
    """Step 2 (module docstring). Parameters: $limit, $offset and the filters' own. Columns:
    the counts (total, passages, one per filter, one per excluded work flag), then per work
    of the page (NULLs when the page is empty): record_no, score, work_no, the work's flags,
    the ids of the record's best-scoring passages, and ``also`` (the work's other records:
    record_no, best score or NULL, best-scoring passage ids)."""
    literal = ", ".join(str(int(i)) for i in ids)  # integers only: nothing else enters the SQL
    applied = state_columns(states)
    columns, kept_where = applied.columns, applied.kept
    dated = PUBLISHED_SQL if any(name == "published" for name, _ in states) else "NULL::VARCHAR"
    if states:
        filtered = f""",
facts AS (
    SELECT w.record_no, w.record_id, w.version, s.source, r.retracted, r.expression_of_concern,
           r.preprint, r.status, r.metadata, r.version_date, r.year, r.publication_types,
           r.licence
    FROM search_works w SEMI JOIN hits h ON h.record_no = w.record_no
    JOIN records r ON r.record_id = w.record_id AND r.version = w.version
    JOIN record_state s ON s.record_id = w.record_id),
states AS MATERIALIZED (
    SELECT record_no{columns} FROM (SELECT *, {dated} AS published FROM facts) h),
kept AS MATERIALIZED (
    SELECT h.* FROM hits h SEMI JOIN (SELECT record_no FROM states WHERE {kept_where}) k
    ON k.record_no = h.record_no)"""  # noqa: S608
    else:
        filtered = ",\nkept AS (SELECT * FROM hits)"
    undecided = applied.undecided()
    dropped = [
        f"(SELECT count(*) FROM best WHERE {flag} IS TRUE) AS x{n}"  # noqa: S608
        for n, flag in enumerate(excluded_work_flags)
    ]
    shown = " AND ".join(f"{flag} IS NOT TRUE" for flag in excluded_work_flags) or "TRUE"
    summary = ", ".join(
        [
            "(SELECT count(*) FROM shown) AS total",
            "(SELECT count(*) FROM kept) AS passages",
            *undecided,
            *dropped,
        ]
    )
    carried = ", ".join(f"any_value({flag}) AS {flag}" for flag in WORK_FLAGS)
    return f"""
WITH post AS MATERIALIZED (SELECT * FROM search_postings WHERE term_id IN ({literal})),
stats AS (SELECT count(*) AS n, avg(length) AS avgdl FROM search_docs),
df AS (
    SELECT term_id, ln(1 + (stats.n - count(*) + 0.5) / (count(*) + 0.5)) AS idf
    FROM post CROSS JOIN stats GROUP BY term_id, stats.n),
hits AS MATERIALIZED (
    SELECT t.docid, any_value(t.record_no) AS record_no, any_value(t.work_no) AS work_no,
           {carried},
           round(sum(df.idf * t.tf * ({K1} + 1)
               / (t.tf + {K1} * (1 - {B} + {B} * t.length / stats.avgdl))), {SCORE_DIGITS}) AS score
    FROM post t JOIN df USING (term_id) CROSS JOIN stats
    WHERE t.record_no IS NOT NULL
    GROUP BY t.docid){filtered},
record_best AS MATERIALIZED (
    SELECT record_no, any_value(work_no) AS work_no, {carried}, max(score) AS score
    FROM kept GROUP BY record_no),
best AS MATERIALIZED (
    SELECT * FROM record_best
    QUALIFY row_number() OVER (PARTITION BY work_no ORDER BY score DESC, record_no) = 1),
shown AS (SELECT * FROM best WHERE {shown}),
paged AS MATERIALIZED (
    SELECT * FROM shown ORDER BY score DESC, record_no LIMIT $limit OFFSET $offset),
members AS MATERIALIZED (
    SELECT p.work_no, m.record_no, m.record_id, m.version, m.work, b.score,
           m.record_no = p.record_no AS shown
    FROM search_works m JOIN paged p ON m.work_no = p.work_no
    LEFT JOIN record_best b ON b.record_no = m.record_no),
top_docs AS (
    SELECT k.record_no, list(k.docid ORDER BY k.docid) AS docids
    FROM kept k JOIN record_best b ON b.record_no = k.record_no AND k.score = b.score
    WHERE k.record_no IN (SELECT record_no FROM members)
    GROUP BY k.record_no),
also AS (
    SELECT m.work_no,
           list({{'record_id': m.record_id, 'version': m.version, 'score': m.score,
                  'docids': t.docids}} ORDER BY m.score DESC NULLS LAST, m.record_no) AS also
    FROM members m LEFT JOIN top_docs t ON t.record_no = m.record_no
    WHERE NOT m.shown GROUP BY m.work_no),
summary AS (SELECT {summary})
SELECT summary.*, m.record_id, m.version, m.work, p.score,
       {", ".join(f"p.{flag}" for flag in WORK_FLAGS)}, t.docids, also.also
FROM summary LEFT JOIN paged p ON TRUE
LEFT JOIN members m ON m.record_no = p.record_no
LEFT JOIN top_docs t ON t.record_no = p.record_no
LEFT JOIN also ON also.work_no = p.work_no
ORDER BY p.score DESC, p.record_no
"""  # noqa: S608


def _marks(prefix: str, values: Sequence[object], params: dict[str, object]) -> str:
    names = []
    for n, value in enumerate(values):
        params[f"{prefix}{n}"] = value
        names.append(f"${prefix}{n}")
    return ", ".join(names)


@dataclass(frozen=True)
class RecordFacts:
    """Step 3: what a page shows of one record (at the version ranked) and its best passage
    (the lowest ``seq`` of its best-scoring passages; None when none matched)."""

    source: str
    title: str | None
    preprint: bool | None
    status: str | None
    published: str | None
    path: str | None
    section: str | None
    text: str | None


def page_facts(
    con: duckdb.DuckDBPyConnection, keys: Sequence[tuple[str, str]], docids: Sequence[int]
) -> dict[str, RecordFacts]:
    """Step 3: record id → :class:`RecordFacts` of each (record id, version) in ``keys``, the
    best passage chosen among ``docids`` (the page's best-scoring passages). Two statements,
    each reading its tables by record id (``record_state``'s key, the ``record_id`` indexes of
    :func:`pipeline.snapshot.store.index_record_ids`: a statement that joins ``passages``
    to anything else scans it instead) and ``search_docs`` by docid, the docids written into
    the SQL as integer literals so DuckDB skips the row groups outside them."""
    if not keys:
        return {}
    params: dict[str, object] = {}
    ids = _marks("r", sorted({k[0] for k in keys}), params)
    docs = ", ".join(str(int(d)) for d in docids) or "NULL"  # integers only
    facts = con.execute(
        f"""
WITH d AS (SELECT record_id, version, path FROM search_docs WHERE docid IN ({docs})),
f AS (
    SELECT r.record_id, r.version, s.source, r.title, r.preprint, r.status, r.metadata,
           r.version_date, r.year
    FROM records r JOIN record_state s ON s.record_id = r.record_id
    WHERE r.record_id IN ({ids}) AND s.record_id IN ({ids}))
SELECT f.record_id, f.version, f.source, f.title, f.preprint, f.status, {PUBLISHED_SQL},
       list(d.path) FILTER (WHERE d.path IS NOT NULL)
FROM f LEFT JOIN d ON d.record_id = f.record_id AND d.version = f.version
GROUP BY ALL""",  # noqa: S608
        params,
    ).fetchall()
    passages = con.execute(
        "SELECT record_id, version, path, seq, section, text FROM passages "  # noqa: S608
        f"WHERE record_id IN ({ids}) ORDER BY record_id, seq",
        params,
    ).fetchall()
    wanted = set(keys)
    best: dict[tuple[str, str], tuple[str, str | None, str]] = {}
    paths = {(row[0], row[1]): set(row[7] or ()) for row in facts if (row[0], row[1]) in wanted}
    for rid, version, path, _, section, text in passages:  # in passage order: the first wins
        if path in paths.get((rid, version), ()) and (rid, version) not in best:
            best[rid, version] = (path, section, text)
    return {
        str(row[0]): RecordFacts(*row[2:7], *best.get((row[0], row[1]), (None, None, None)))
        for row in facts
        if (row[0], row[1]) in wanted
    }
