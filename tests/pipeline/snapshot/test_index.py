"""The BM25 passage index in plain SQL: tokens, incremental indexing, ranking."""

from __future__ import annotations

from collections.abc import Iterator
from functools import cache
from pathlib import Path

import duckdb
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from pipeline.snapshot.index import (
    ascii_words,
    batch_words_sql,
    index_batch,
    index_unindexed,
    search_sql,
    words_sql,
)
from pipeline.snapshot.store import apply_migrations, connect, load_fts
from tests.pipeline.snapshot.conftest import index_terms_as_text


@pytest.fixture
def con(tmp_path: Path) -> Iterator[duckdb.DuckDBPyConnection]:
    connection = connect(tmp_path / "i.duckdb")
    apply_migrations(connection)
    load_fts(connection)
    yield connection
    connection.close()


def terms(con: duckdb.DuckDBPyConnection, text: str) -> list[str]:
    words = words_sql("(SELECT $t AS text, 1 AS k)", "text", "k")
    rows = con.execute(f"SELECT stem(w, 'porter') FROM ({words})", {"t": text}).fetchall()  # noqa: S608
    return [r[0] for r in rows]


def test_tokens_are_stemmed_lower_case_words_and_numbers_without_stop_words(
    con: duckdb.DuckDBPyConnection,
) -> None:
    assert terms(con, "Zentravir REDUCED the flares by 48.2% in naïve children—aged 6–17") == [
        "zentravir",
        "reduc",
        "flare",
        "48",
        "2",
        "naiv",
        "children",
        "ag",
        "6",
        "17",
    ]


def add_record(con: duckdb.DuckDBPyConnection, rid: str, texts: list[str]) -> None:
    con.execute(
        "INSERT INTO record_state VALUES (?, 'pubmed', '1', FALSE, NULL)",
        [rid],
    )
    con.execute(
        "INSERT INTO records (record_id, version, source, content_hash, title) "
        "VALUES (?, '1', 'pubmed', 'h', 't')",
        [rid],
    )
    for i, text in enumerate(texts, start=1):
        con.execute(
            "INSERT INTO passages VALUES (?, '1', ?, ?, 'Abstract', ?, ?)",
            [rid, f"abstract.{i}", i, text, text],
        )


def test_unindexed_passages_are_indexed_once_and_ranked_by_bm25(
    con: duckdb.DuckDBPyConnection,
) -> None:
    add_record(con, "pmid:99000001", ["Farrow flares were rare.", "Nothing about it here."])
    add_record(con, "pmid:99000002", ["Farrow flares, flares and more flares in children."])
    add_record(con, "pmid:99000003", ["Zentravir was well tolerated."])
    assert index_unindexed(con) == 4
    assert index_unindexed(con) == 0
    docs = con.execute("SELECT record_id, path, length FROM search_docs ORDER BY docid")
    assert docs.fetchall() == [
        ("pmid:99000001", "abstract.1", 3),
        ("pmid:99000001", "abstract.2", 1),
        ("pmid:99000002", "abstract.1", 5),
        ("pmid:99000003", "abstract.1", 3),
    ]
    hits = con.execute(search_sql(sources=False), {"query": "flare", "limit": 10}).fetchall()
    assert [(h[0], h[2]) for h in hits] == [
        ("pmid:99000002", "abstract.1"),
        ("pmid:99000001", "abstract.1"),
    ]
    assert hits[0][5] > hits[1][5] > 0
    none = con.execute(search_sql(sources=False), {"query": "the and of", "limit": 10})
    assert none.fetchall() == []


_ascii = st.text(alphabet=st.characters(min_codepoint=0, max_codepoint=127), max_size=200)


@cache
def _scratch() -> duckdb.DuckDBPyConnection:
    """One in-memory database for every example (a connection per example was most of the
    test's time)."""
    return duckdb.connect()


@settings(max_examples=300, deadline=None)
@given(
    text=st.one_of(
        _ascii,
        st.lists(
            st.sampled_from(["The", "zentravir", "IN", "48.2%", "a", "--", "\t", "x9", "of"]),
            max_size=30,
        ).map(" ".join),
    )
)
def test_the_harvest_separates_ascii_words_exactly_as_the_sql_does(text: str) -> None:
    con = _scratch()
    by_sql = words_sql("(SELECT $t AS text, 1 AS docid)", "text", "docid")
    by_harvest = batch_words_sql("(SELECT $t AS text, 1 AS docid, $w AS words)")
    expected = con.execute(f"SELECT w FROM ({by_sql})", {"t": text}).fetchall()  # noqa: S608
    words = ascii_words(text)
    assert words is not None
    got = con.execute(f"SELECT w FROM ({by_harvest})", {"t": text, "w": words}).fetchall()  # noqa: S608
    assert got == expected


def test_text_that_is_not_all_ascii_is_left_to_the_sql() -> None:
    assert ascii_words("naïve children") is None
    assert ascii_words("Zentravir, in 48-children.") == "zentravir  in 48 children "


def test_an_index_from_harvest_split_words_equals_one_from_the_sql_split(
    con: duckdb.DuckDBPyConnection,
) -> None:
    texts = [
        "Zentravir REDUCED the flares by 48.2% in children aged 6-17.",
        "Of the 12 children, none had a flare.",
        "naïve participants: zentravir 10 mg",  # not ASCII: split by the SQL in both
        "The of and.",  # only stop words: a document of length 0
        "",
    ]
    rows = [(i + 1, "pmid:99000001", "1", f"p{i}", t) for i, t in enumerate(texts)]

    def index(split: bool) -> tuple[list[tuple[object, ...]], list[tuple[object, ...]]]:
        con.execute("DELETE FROM search_terms")
        con.execute("DELETE FROM search_docs")
        con.execute(
            "CREATE OR REPLACE TEMP TABLE b (docid BIGINT, record_id VARCHAR, "
            "version VARCHAR, path VARCHAR, text VARCHAR, words VARCHAR)"
        )
        con.executemany(
            "INSERT INTO b VALUES (?, ?, ?, ?, ?, ?)",
            [(*r, ascii_words(r[4]) if split else None) for r in rows],
        )
        index_batch(con, "b")
        return (
            con.execute("SELECT * FROM search_terms ORDER BY ALL").fetchall(),
            con.execute("SELECT * FROM search_docs ORDER BY ALL").fetchall(),
        )

    by_sql, by_harvest = index(split=False), index(split=True)
    assert by_harvest == by_sql
    assert (4, "pmid:99000001", "1", "p3", 0) in by_sql[1]


def test_term_frequencies_count_every_word_that_stems_alike(
    con: duckdb.DuckDBPyConnection,
) -> None:
    con.execute(
        "CREATE TEMP TABLE b (docid BIGINT, record_id VARCHAR, version VARCHAR, path VARCHAR, "
        "text VARCHAR, words VARCHAR)"
    )
    texts = ["Flares, flare and flared; flares again.", "Naïve flares: 2 flare-ups in 2 weeks."]
    con.executemany(
        "INSERT INTO b VALUES (?, 'pmid:99000001', '1', ?, ?, ?)",
        [(i + 1, f"p{i}", t, ascii_words(t)) for i, t in enumerate(texts)],
    )
    index_batch(con, "b")
    got = con.execute(
        "SELECT docid, term, tf FROM search_terms JOIN search_vocab USING (term_id) ORDER BY ALL"
    ).fetchall()
    assert got == [
        (1, "flare", 4),  # "and", "again": stop words
        (2, "2", 2),
        (2, "flare", 2),
        (2, "naiv", 1),
        (2, "up", 1),
        (2, "week", 1),
    ]
    lengths = con.execute("SELECT docid, length FROM search_docs ORDER BY 1").fetchall()
    assert lengths == [(1, 4), (2, 7)]


def test_terms_are_numbered_once_and_later_batches_reuse_the_numbers(
    con: duckdb.DuckDBPyConnection,
) -> None:
    con.execute(
        "CREATE TEMP TABLE b (docid BIGINT, record_id VARCHAR, version VARCHAR, path VARCHAR, "
        "text VARCHAR, words VARCHAR)"
    )
    batches = [
        ["Zentravir flares", "flare zentravir"],
        ["Zentravir cohort", "naïve cohort flares"],  # one new ASCII term, one by the SQL
    ]
    docid = 0
    for texts in batches:
        con.execute("DELETE FROM b")
        for text in texts:
            docid += 1
            con.execute(
                "INSERT INTO b VALUES (?, 'pmid:99000001', '1', ?, ?, ?)",
                [docid, f"p{docid}", text, ascii_words(text)],
            )
        index_batch(con, "b")
    vocab = con.execute("SELECT term_id, term FROM search_vocab ORDER BY term_id").fetchall()
    assert vocab == [(1, "flare"), (2, "zentravir"), (3, "cohort"), (4, "naiv")]
    terms = con.execute(
        "SELECT docid, term, tf FROM search_terms JOIN search_vocab USING (term_id) ORDER BY ALL"
    ).fetchall()
    assert terms == [
        (1, "flare", 1),
        (1, "zentravir", 1),
        (2, "flare", 1),
        (2, "zentravir", 1),
        (3, "cohort", 1),
        (3, "zentravir", 1),
        (4, "cohort", 1),
        (4, "flare", 1),
        (4, "naiv", 1),
    ]


def test_search_reads_an_index_of_terms_as_text_like_a_numbered_one(
    con: duckdb.DuckDBPyConnection,
) -> None:
    """Snapshots from before migration 4 keep their terms as text in search_terms."""
    con.execute(
        "CREATE TEMP TABLE b (docid BIGINT, record_id VARCHAR, version VARCHAR, path VARCHAR, "
        "text VARCHAR, words VARCHAR)"
    )
    texts = ["Zentravir reduced flares in children.", "Farrow syndrome in children.", "Other."]
    con.executemany(
        "INSERT INTO b VALUES (?, 'pmid:99000001', '1', ?, ?, ?)",
        [(i + 1, f"p{i}", t, ascii_words(t)) for i, t in enumerate(texts)],
    )
    con.executemany(
        "INSERT INTO passages VALUES ('pmid:99000001', '1', ?, ?, NULL, ?, NULL)",
        [(f"p{i}", i + 1, t) for i, t in enumerate(texts)],
    )
    con.execute(
        "INSERT INTO records (record_id, version, source, content_hash, content_type) "
        "VALUES ('pmid:99000001', '1', 'pubmed', 'h', 'abstract')"
    )
    con.execute(
        "INSERT INTO record_state (record_id, source, current_version, withdrawn) "
        "VALUES ('pmid:99000001', 'pubmed', '1', false)"
    )
    index_batch(con, "b")
    params = {"query": "children flares", "limit": 10}
    numbered = con.execute(search_sql(sources=False), params).fetchall()
    index_terms_as_text(con)
    as_text = con.execute(search_sql(sources=False, numbered=False), params).fetchall()
    assert [r[2] for r in numbered] == ["p0", "p1"]
    assert as_text == numbered
