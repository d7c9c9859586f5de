"""Named, recorded migrations, schema checks, batched writes."""

from __future__ import annotations

from pathlib import Path

import duckdb
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from pipeline.errors import SnapshotError
from pipeline.snapshot.schema import MIGRATIONS
from pipeline.snapshot.store import (
    BatchWriter,
    ResponseRow,
    applied_migrations,
    apply_migrations,
    check_schema,
    connect,
    duplicate_keys,
    unpack_body,
)
from tests.pipeline.snapshot.conftest import migrated_to


def test_migrations_are_applied_in_order_and_recorded_once(tmp_path: Path) -> None:
    con = connect(tmp_path / "s.duckdb")
    assert apply_migrations(con, now="2025-01-01T00:00:00Z") == [m.id for m in MIGRATIONS]
    assert apply_migrations(con) == []
    rows = con.execute("SELECT id, name, applied_at FROM schema_migrations ORDER BY id").fetchall()
    assert rows == [(m.id, m.name, "2025-01-01T00:00:00Z") for m in MIGRATIONS]
    check_schema(con, "s.duckdb")
    columns = [r[0] for r in con.execute("DESCRIBE responses").fetchall()]
    assert columns[-1] == "request_body"
    con.close()


def test_migration_3_keeps_the_passages_folded_only_where_it_differs_and_no_index(
    tmp_path: Path,
) -> None:
    con = connect(tmp_path / "s.duckdb")
    migrated_to(con, 2)  # a snapshot of schema 2, with two passages
    spaced = ("pmid:99000001", "1", "title", 1, "Title", "Zentravir  trial", "Zentravir trial")
    plain = ("pmid:99000001", "1", "abstract.1", 2, "Abstract", "Farrow cohort.", "Farrow cohort.")
    con.executemany("INSERT INTO passages VALUES (?, ?, ?, ?, ?, ?, ?)", [spaced, plain])
    assert apply_migrations(con) == [3, 4, 5, 6]
    assert con.execute("SELECT * FROM passages ORDER BY seq").fetchall() == [
        spaced,
        (*plain[:6], None),
    ]
    constraints = con.execute(
        "SELECT constraint_type FROM duckdb_constraints() WHERE table_name = 'passages'"
    ).fetchall()
    assert [c[0] for c in constraints] == ["NOT NULL"] * 5  # no primary key; section, folded
    con.close()


def test_migration_4_numbers_the_terms_of_an_index_held_as_text(tmp_path: Path) -> None:
    con = connect(tmp_path / "s.duckdb")
    migrated_to(con, 3)  # a snapshot of schema 3, its index terms as text
    rows = [(1, "zentravir", 2), (1, "flare", 1), (2, "flare", 3)]
    con.executemany("INSERT INTO search_terms VALUES (?, ?, ?)", rows)
    assert apply_migrations(con) == [4, 5, 6]
    assert con.execute("SELECT * FROM search_vocab ORDER BY 1").fetchall() == [
        (1, "flare"),
        (2, "zentravir"),
    ]
    assert con.execute("SELECT * FROM search_terms ORDER BY ALL").fetchall() == [
        (1, 1, 1),
        (1, 2, 2),
        (2, 1, 3),
    ]
    check_schema(con, "s.duckdb")
    con.close()


def test_a_schema_3_snapshot_passes_the_schema_check_without_the_later_table(
    tmp_path: Path,
) -> None:
    con = connect(tmp_path / "s.duckdb")
    migrated_to(con, 3)
    check_schema(con, "s.duckdb")  # no search_vocab: fine before migration 4
    assert duplicate_keys(con) == []
    con.execute("DROP TABLE search_docs")
    with pytest.raises(SnapshotError, match="lacks the table 'search_docs'"):
        check_schema(con, "s.duckdb")
    con.close()


def test_keys_held_twice_are_found(tmp_path: Path) -> None:
    con = connect(tmp_path / "s.duckdb")
    apply_migrations(con)
    passage = ("pmid:99000001", "1", "title", 1, "Title", "Zentravir", None)
    con.executemany("INSERT INTO passages VALUES (?, ?, ?, ?, ?, ?, ?)", [passage, passage])
    version = ("pmid:99000002", "1", 1, "ab", "s1", "s1", "harvest")
    con.execute("INSERT INTO record_versions VALUES (?, ?, ?, ?, ?, ?, ?)", list(version))
    assert duplicate_keys(con) == ["passages (pmid:99000001, 1, title)"]
    con.execute("DELETE FROM passages WHERE seq = 1")
    assert duplicate_keys(con) == []
    con.close()


def test_keys_held_twice_are_found_when_the_keys_are_checked_in_slices(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from pipeline.snapshot import store

    monkeypatch.setattr(store, "KEY_CHECK_ROWS", 7)  # 40 passages: six slices
    con = connect(tmp_path / "s.duckdb")
    apply_migrations(con)
    rows = [(f"pmid:990000{n:02d}", "1", "title", 1, "T", "Zentravir", None) for n in range(39)]
    rows.append(rows[23])
    con.executemany("INSERT INTO passages VALUES (?, ?, ?, ?, ?, ?, ?)", rows)
    con.executemany("INSERT INTO search_vocab VALUES (?, ?)", [(1, "flare"), (2, "flare")])
    assert duplicate_keys(con) == ["passages (pmid:99000023, 1, title)", "search_vocab (flare)"]
    con.close()


def test_a_database_that_is_not_a_snapshot_is_refused(tmp_path: Path) -> None:
    con = duckdb.connect(str(tmp_path / "other.duckdb"))
    con.execute("CREATE TABLE t (x INTEGER)")
    with pytest.raises(SnapshotError) as caught:
        check_schema(con, "other.duckdb")
    assert (
        str(caught.value) == "other.duckdb is not a citeseal snapshot (no schema_migrations table)"
    )
    con.close()


def test_a_migration_recorded_under_another_name_is_refused(tmp_path: Path) -> None:
    con = connect(tmp_path / "s.duckdb")
    apply_migrations(con)
    con.execute("UPDATE schema_migrations SET name = 'renamed' WHERE id = 2")
    with pytest.raises(SnapshotError) as caught:
        apply_migrations(con)
    assert str(caught.value) == (
        "migration 2 is recorded as 'renamed', expected 'request_bodies_and_search_index'"
    )
    assert applied_migrations(con)[1] == (2, "renamed")
    con.close()


def test_a_missing_table_is_named(tmp_path: Path) -> None:
    con = connect(tmp_path / "s.duckdb")
    apply_migrations(con)
    con.execute("DROP TABLE harvest_log")
    with pytest.raises(SnapshotError) as caught:
        check_schema(con, "s.duckdb")
    assert str(caught.value) == "s.duckdb lacks the table 'harvest_log'"
    con.close()


text = st.text(st.characters(blacklist_categories=("Cs",)), max_size=60)


@settings(max_examples=40, deadline=None)
@given(
    rows=st.lists(
        st.tuples(text, text, st.one_of(st.none(), text), st.integers(-(2**31), 2**31 - 1)),
        max_size=20,
    )
)
def test_batched_writes_round_trip_any_text(rows: list[tuple[str, str, str | None, int]]) -> None:
    con = duckdb.connect()
    con.execute(
        "CREATE TABLE passages (record_id VARCHAR, version VARCHAR, path VARCHAR, seq INTEGER, "
        "section VARCHAR, text VARCHAR, folded VARCHAR)"
    )
    import tempfile

    with tempfile.TemporaryDirectory() as tmp:
        writer = BatchWriter(Path(tmp))
        staged = [
            (a, "1", f"p{i}", n, c, b, None if i % 2 else a) for i, (a, b, c, n) in enumerate(rows)
        ]
        assert writer.insert(con, "passages", staged) == len(rows)
        assert list(Path(tmp).iterdir()) == []
    got = con.execute("SELECT * FROM passages ORDER BY seq, path").fetchall()
    expected = staged  # NULL folded stays NULL: it means "the same as the text"
    assert sorted(got, key=lambda r: (r[3], r[2])) == sorted(expected, key=lambda r: (r[3], r[2]))


def test_responses_are_stored_compressed_and_come_back_whole(tmp_path: Path) -> None:
    con = connect(tmp_path / "s.duckdb")
    apply_migrations(con)
    body = ("<PubmedArticleSet>" + "é zentravir " * 500 + "</PubmedArticleSet>").encode()
    row = ResponseRow(
        "pubmed",
        "POST",
        "https://x/efetch.fcgi",
        200,
        "text/xml",
        body,
        "2025-01-01T00:00:00Z",
        "db=pubmed&id=99000001",
    )
    BatchWriter(tmp_path / "w").insert(con, "responses", [row.row(1)])
    stored = con.execute("SELECT body, sha256, request_body, octet_length(body) FROM responses")
    blob, digest, form, size = stored.fetchone()  # type: ignore[misc]
    assert unpack_body(blob) == body
    assert size < len(body) // 4
    assert form == "db=pubmed&id=99000001"
    import hashlib

    assert digest == hashlib.sha256(body).hexdigest()
    con.close()


@pytest.mark.parametrize("read_only", [False, True])
def test_a_snapshot_connection_never_draws_a_progress_bar_on_standard_output(
    tmp_path: Path, read_only: bool
) -> None:
    """DuckDB draws its bar on stdout once a statement runs over two seconds, which would land
    inside ``--json`` output or an MCP server's protocol stream."""
    path = tmp_path / "s.duckdb"
    connect(path).close()
    con = connect(path, read_only=read_only)
    try:
        row = con.execute("SELECT current_setting('enable_progress_bar')").fetchone()
    finally:
        con.close()
    assert row == (False,)


def test_every_connection_citeseal_opens_has_the_progress_bar_off(tmp_path: Path) -> None:
    """The class of that bug: each ``duckdb.connect`` outside the benches is one of the two
    that turn the bar off (``store.connect``, ``read_only_connection``) or turns it off
    itself on its next line; and ``read_only_connection`` does turn it off."""
    import ast

    from audit.duckdb_corpus import read_only_connection

    root = Path(__file__).resolve().parents[3]
    unquiet: list[str] = []
    for file in sorted([*root.glob("audit/**/*.py"), *root.glob("pipeline/**/*.py")]):
        if "bench" in file.parts:
            continue
        lines = file.read_text(encoding="utf-8").splitlines()
        for node in ast.walk(ast.parse("\n".join(lines))):
            if (
                isinstance(node, ast.Call)
                and isinstance(node.func, ast.Attribute)
                and node.func.attr == "connect"
                and isinstance(node.func.value, ast.Name)
                and node.func.value.id == "duckdb"
            ):
                after = "\n".join(lines[node.lineno : node.lineno + 12])
                if "enable_progress_bar = false" not in after:
                    unquiet.append(f"{file.relative_to(root)}:{node.lineno}")
    assert unquiet == []
    path = tmp_path / "s.duckdb"
    connect(path).close()
    con = read_only_connection(path)
    try:
        assert con.execute("SELECT current_setting('enable_progress_bar')").fetchone() == (False,)
    finally:
        con.close()
