"""The BM25 passage index in plain SQL: tokens, incremental indexing, ranking."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import duckdb
import pytest

from pipeline.snapshot.index import index_unindexed, search_sql, words_sql
from pipeline.snapshot.store import apply_migrations, connect, load_fts


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
