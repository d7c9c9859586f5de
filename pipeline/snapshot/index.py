"""The passage search index: BM25 over words, in plain SQL, built batch by batch.

Why not DuckDB's ``PRAGMA create_fts_index``: it rebuilds the whole index at the end of every
build, needs memory that grows with the corpus (a 50,000-record build ran out of memory at a
128 MB limit) and cannot reuse the parent's work. This index is filled while the passages of
each batch are inserted (in the writer process, overlapping the next batch's parsing), so the
memory it needs is that of one batch, and a child copies its parent's rows instead of
re-tokenising them.

Tables (migrations 2 and 4)::

    search_docs (docid, record_id, version, path, length)   one row per passage version
    search_vocab (term_id, term)                           one row per term
    search_terms (docid, term_id, tf)                      one row per (passage, term)

At the end of a build :func:`pipeline.snapshot.works.store_works` copies ``search_terms`` in
term order into ``search_postings`` (migration 6), with what ranking needs, for the fast path
of :mod:`pipeline.snapshot.ranked`.

Snapshots from before migration 4 hold the term itself in ``search_terms.term`` (no
``search_vocab``): :func:`search_sql` reads both layouts, and a child numbers the terms of
such a parent when it copies them (:func:`pipeline.snapshot.lineage.carry_parent`).

Tokens: the text lower-cased, accents stripped, split on every run of characters outside
``[a-z0-9]`` (so numbers are searchable), Porter-stemmed (the fts extension's ``stem``), and
:data:`STOPWORDS` left out. The query goes through the same steps. For an all-ASCII passage
(most of them) the harvest process marks the word boundaries itself (:func:`ascii_words`:
one byte-table pass in Python, where DuckDB's regular-expression split was the most
expensive step of indexing), so the writer process splits on spaces, counts and stems.
Ranking is Okapi BM25 (``k1`` = 1.2, ``b`` = 0.75) with document frequencies over every
passage version held, rounded to :data:`SCORE_DIGITS` decimals.
:data:`INDEX_VERSION` is recorded in ``meta.search_index``; change it whenever a rule changes.
"""

from __future__ import annotations

import duckdb

from pipeline.snapshot.store import table_names

INDEX_VERSION = "bm25-1"
K1 = 1.2
B = 0.75
SCORE_DIGITS = 9
"""Scores are rounded to this many decimals: a sum of floats depends on the order DuckDB adds
its terms in, which differs between plans and runs, so two passages of equal score could
differ in the last bit and break their tie either way; rounded, they tie, and the record id
then the passage order decide, the same on every plan."""

_STOP_TEXT = """a about above after again against all am an and any are as at be because been
before being below between both but by can could did do does doing down during each few for
from further had has have having he her here hers herself him himself his how i if in into is
it its itself just me more most my myself no nor not of off on once only or other our ours
ourselves out over own same she should so some such than that the their theirs them themselves
then there these they this those through to too under until up very was we were what when where
which while who whom why will with would you your yours yourself yourselves"""
STOPWORDS = frozenset(_STOP_TEXT.split())
_STOP_IN = ", ".join(f"'{w}'" for w in sorted(STOPWORDS))  # an IN list is hashed: fast


def words_sql(source: str, text: str, key: str) -> str:
    """``SELECT key, w`` for every word of ``text`` in ``source`` that is not a stop word."""
    words = f"unnest(string_split_regex(lower(strip_accents({text})), '[^a-z0-9]+'))"
    return (
        f"SELECT {key}, w FROM (SELECT {key}, {words} AS w FROM {source}) "  # noqa: S608
        f"WHERE w <> '' AND w NOT IN ({_STOP_IN})"
    )


_SEPARATE = bytes(c if 48 <= c <= 57 or 97 <= c <= 122 else 32 for c in range(256))


def ascii_words(text: str) -> str | None:
    """The index words of an all-ASCII ``text`` as one string (None: not all ASCII).

    The text lower-cased with every character outside ``[a-z0-9]`` turned into a space (one
    C-level pass: accents cannot occur in ASCII); :func:`batch_words_sql` splits it on single
    spaces and drops the empty strings and stop words, which leaves exactly the words of
    :func:`words_sql`.
    """
    if not text.isascii():
        return None
    return text.encode("ascii").lower().translate(_SEPARATE).decode("ascii")


def batch_words_sql(batch: str) -> str:
    """``SELECT docid, w`` for the passages of ``batch``: from its ``words`` column where the
    harvest separated them (:func:`ascii_words`), else :func:`words_sql` over its ``text``."""
    split = (
        "SELECT docid, w FROM (SELECT docid, unnest(string_split(words, ' ')) AS w "  # noqa: S608
        f"FROM {batch} WHERE words IS NOT NULL) WHERE w <> '' AND w NOT IN ({_STOP_IN})"
    )
    others = f"(SELECT docid, text FROM {batch} WHERE words IS NULL)"  # noqa: S608
    return f"{split} UNION ALL {words_sql(others, 'text', 'docid')}"


def next_docid(con: duckdb.DuckDBPyConnection) -> int:
    """The first free document id."""
    row = con.execute("SELECT coalesce(max(docid), 0) + 1 FROM search_docs").fetchone()
    return int(row[0]) if row else 1


def index_batch(con: duckdb.DuckDBPyConnection, batch: str) -> None:
    """Index the passages of ``batch``, a table with docid, record_id, version, path, text and
    words (:func:`ascii_words` of the text, or NULL).

    Each distinct word of the batch is stemmed once (stemming every occurrence costs three
    times more); stems not yet in ``search_vocab`` get the next numbers; then occurrences are
    counted per passage and term number in one aggregation (a count per word first, summed
    per term after, cost a fifth more).
    """
    words = batch_words_sql(batch)
    # one pass over the term list (it grows with the corpus) finds the numbers of known
    # stems; the new ones are numbered after the highest
    con.execute(
        "CREATE OR REPLACE TEMP TABLE batch_ids AS "  # noqa: S608
        "WITH stems AS (SELECT w, stem(w, 'porter') AS term "
        f"FROM (SELECT DISTINCT w FROM ({words}))), "
        "known AS (SELECT s.w, s.term, v.term_id FROM stems s "
        "LEFT JOIN search_vocab v USING (term)), "
        "top AS (SELECT coalesce(max(term_id), 0) AS n FROM search_vocab), "
        "fresh AS (SELECT u.term, (top.n + row_number() OVER (ORDER BY u.term))::INTEGER "
        "AS term_id FROM (SELECT DISTINCT term FROM known WHERE term_id IS NULL) u, top) "
        "SELECT k.w, k.term, coalesce(k.term_id, f.term_id) AS term_id, "
        "k.term_id IS NULL AS new FROM known k LEFT JOIN fresh f USING (term)"
    )
    con.execute("INSERT INTO search_vocab SELECT DISTINCT term_id, term FROM batch_ids WHERE new")
    con.execute(
        "INSERT INTO search_terms "  # noqa: S608
        f"WITH words AS ({words}) "
        "SELECT docid, term_id, count(*)::INTEGER FROM words JOIN batch_ids USING (w) "
        "GROUP BY docid, term_id"
    )
    con.execute("DROP TABLE batch_ids")
    bounds = con.execute(f"SELECT min(docid), max(docid) FROM {batch}").fetchone()  # noqa: S608
    low, high = bounds if bounds else (None, None)
    # literal bounds (not subqueries) let DuckDB skip the older row groups of search_terms
    con.execute(
        "INSERT INTO search_docs SELECT b.docid, b.record_id, b.version, b.path, "  # noqa: S608
        f"coalesce(t.n, 0)::INTEGER FROM {batch} b LEFT JOIN "
        "(SELECT docid, sum(tf) AS n FROM search_terms WHERE docid BETWEEN $1 AND $2 "
        "GROUP BY docid) t USING (docid)",
        [low, high],
    )


def index_unindexed(con: duckdb.DuckDBPyConnection) -> int:
    """Index every passage that has no document yet (a parent built before the index)."""
    start = next_docid(con)
    con.execute(
        "CREATE OR REPLACE TEMP TABLE batch_docs AS "
        "SELECT $1 + row_number() OVER (ORDER BY p.record_id, p.version, p.path) - 1 AS docid, "
        "p.record_id, p.version, p.path, p.text, NULL::VARCHAR AS words FROM passages p "
        "ANTI JOIN search_docs d USING (record_id, version, path)",
        [start],
    )
    row = con.execute("SELECT count(*) FROM batch_docs").fetchone()
    index_batch(con, "batch_docs")
    con.execute("DROP TABLE batch_docs")
    return int(row[0]) if row else 0


def numbered(con: duckdb.DuckDBPyConnection) -> bool:
    """Whether the index of ``con``'s database numbers its terms (migration 4)."""
    return "search_vocab" in table_names(con)


def scored_sql(*, numbered: bool = True) -> str:
    """The CTEs ``q, stats, df, scored``: the BM25 score of every passage version that holds
    a term of the query (parameter $query), as ``scored(docid, score)``.

    ``numbered``: the index holds term numbers (``search_vocab``, migration 4); False for an
    older snapshot whose ``search_terms`` hold the terms themselves."""
    stems = f"""SELECT DISTINCT stem(w, 'porter') AS term
    FROM ({words_sql("(SELECT 1 AS one)", "$query", "one")})"""  # noqa: S608
    if numbered:
        key = "term_id"
        query_terms = f"SELECT v.term_id FROM ({stems}) s JOIN search_vocab v USING (term)"  # noqa: S608
    else:
        key = "term"
        query_terms = stems
    return f"""q AS ({query_terms}),
stats AS (SELECT count(*) AS n, avg(length) AS avgdl FROM search_docs),
df AS (
    SELECT {key}, count(*) AS df FROM search_terms JOIN q USING ({key}) GROUP BY {key}
),
scored AS (
    SELECT t.docid,
           round(sum(ln(1 + (stats.n - df.df + 0.5) / (df.df + 0.5))
               * t.tf * ({K1} + 1)
               / (t.tf + {K1} * (1 - {B} + {B} * d.length / stats.avgdl))), {SCORE_DIGITS}) AS score
    FROM search_terms t
    JOIN df USING ({key})
    JOIN search_docs d USING (docid)
    CROSS JOIN stats
    GROUP BY t.docid
)"""  # noqa: S608


HITS_FROM = """FROM scored
JOIN search_docs d USING (docid)
JOIN record_state s ON s.record_id = d.record_id AND s.current_version = d.version
JOIN passages p ON p.record_id = d.record_id AND p.version = d.version AND p.path = d.path
JOIN records r ON r.record_id = d.record_id AND r.version = d.version
WHERE NOT s.withdrawn"""
"""The scored passages of the current, non-withdrawn version of each record, with the
passage (``p``), its record version (``r``) and the record's state (``s``)."""


def search_sql(*, sources: bool, numbered: bool = True) -> str:
    """BM25 over the current, non-withdrawn passage versions; parameters $query, $limit
    (and $sources, a string of source names joined by the store's separator).

    ``numbered``: see :func:`scored_sql`. Filtered, paged search is
    :func:`pipeline.snapshot.search.search_page`."""
    where = "AND list_contains(string_split($sources, $sep), s.source)" if sources else ""
    return f"""
WITH {scored_sql(numbered=numbered)}
SELECT p.record_id, p.version, p.path, p.section, p.text, scored.score, s.source, r.title,
       r.retracted, r.expression_of_concern, r.preprint, r.status
{HITS_FROM} {where}
ORDER BY scored.score DESC, p.record_id, p.seq
LIMIT $limit
"""
