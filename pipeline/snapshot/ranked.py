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
   One row per work of the page, with its other records and the ids of each record's
   best-scoring passages. No string is joined and no table is read whole but
   ``search_docs.length`` (for the average passage length).
3. **Facts** of those few records and passages, looked up by id (the best passage of each:
   its lowest ``seq`` among its best-scoring passages, as ``page_sql`` orders them).

The ranking is the same total order: score, then record id, then passage order.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

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
    SELECT p.work_no, m.record_no, b.score
    FROM search_works m JOIN paged p ON m.work_no = p.work_no AND m.record_no <> p.record_no
    LEFT JOIN record_best b ON b.record_no = m.record_no),
top_docs AS (
    SELECT k.record_no, list(k.docid ORDER BY k.docid) AS docids
    FROM kept k JOIN record_best b ON b.record_no = k.record_no AND k.score = b.score
    WHERE k.record_no IN (SELECT record_no FROM paged UNION ALL SELECT record_no FROM members)
    GROUP BY k.record_no),
also AS (
    SELECT m.work_no, list({{'record_no': m.record_no, 'score': m.score, 'docids': t.docids}}
                           ORDER BY m.score DESC NULLS LAST, m.record_no) AS also
    FROM members m LEFT JOIN top_docs t ON t.record_no = m.record_no GROUP BY m.work_no),
summary AS (SELECT {summary})
SELECT summary.*, p.record_no, p.score, p.work_no,
       {", ".join(f"p.{flag}" for flag in WORK_FLAGS)}, t.docids, also.also
FROM summary LEFT JOIN paged p ON TRUE
LEFT JOIN top_docs t ON t.record_no = p.record_no
LEFT JOIN also ON also.work_no = p.work_no
ORDER BY p.score DESC, p.record_no
"""  # noqa: S608


def records_of(
    con: duckdb.DuckDBPyConnection, numbers: Sequence[int]
) -> dict[int, tuple[str, str, str, str]]:
    """Step 3: record_no → (record id, current version, work id, source)."""
    if not numbers:
        return {}
    params: dict[str, object] = {}
    marks = _marks("n", sorted(set(numbers)), params)
    rows = con.execute(
        "SELECT w.record_no, w.record_id, w.version, w.work, s.source FROM search_works w "  # noqa: S608
        f"JOIN record_state s ON s.record_id = w.record_id WHERE w.record_no IN ({marks})",
        params,
    ).fetchall()
    return {int(row[0]): (str(row[1]), str(row[2]), str(row[3]), str(row[4])) for row in rows}


def _marks(prefix: str, values: Sequence[object], params: dict[str, object]) -> str:
    names = []
    for n, value in enumerate(values):
        params[f"{prefix}{n}"] = value
        names.append(f"${prefix}{n}")
    return ", ".join(names)


def best_passages(
    con: duckdb.DuckDBPyConnection, docids: Sequence[int]
) -> dict[str, tuple[str, int, str | None, str]]:
    """Step 3: of the passages ``docids``, each record's first in passage order: record id →
    (path, seq, section, text). Looked up by id (search_docs is in docid order, and the
    record ids are constants DuckDB checks against each row group's bounds)."""
    if not docids:
        return {}
    params: dict[str, object] = {}
    marks = _marks("d", list(docids), params)
    docs = con.execute(
        f"SELECT record_id, version, path FROM search_docs WHERE docid IN ({marks})",  # noqa: S608
        params,
    ).fetchall()
    params = {}
    records = _marks("r", sorted({str(d[0]) for d in docs}), params)
    wanted = {(str(r), str(v), str(p)) for r, v, p in docs}
    rows = con.execute(
        "SELECT record_id, version, path, seq, section, text FROM passages "  # noqa: S608
        f"WHERE record_id IN ({records})",
        params,
    ).fetchall()
    out: dict[str, tuple[str, int, str | None, str]] = {}
    for rid, version, path, seq, section, text in sorted(rows, key=lambda r: (r[0], r[3])):
        if (rid, version, path) in wanted and rid not in out:
            out[rid] = (path, int(seq), section, text)
    return out


def record_facts(
    con: duckdb.DuckDBPyConnection, keys: Sequence[tuple[str, str]]
) -> dict[str, tuple[Any, ...]]:
    """Step 3: record id → (source, title, preprint, status, published) of each (record id,
    version) in ``keys``."""
    if not keys:
        return {}
    params: dict[str, object] = {}
    records = _marks("r", sorted({k[0] for k in keys}), params)
    facts = (
        "SELECT r.record_id, r.version, s.source, r.title, r.preprint, r.status, r.metadata, "  # noqa: S608
        "r.version_date, r.year FROM records r JOIN record_state s ON s.record_id = r.record_id "
        f"WHERE r.record_id IN ({records})"
    )
    rows = con.execute(
        "SELECT record_id, version, source, title, preprint, status, "  # noqa: S608
        f"{PUBLISHED_SQL} FROM ({facts})",
        params,
    ).fetchall()
    wanted = set(keys)
    return {str(row[0]): tuple(row[2:]) for row in rows if (row[0], row[1]) in wanted}
