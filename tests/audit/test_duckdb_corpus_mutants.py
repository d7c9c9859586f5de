"""The DuckDB corpus where the lineage orders versions its own way, where a record has no
version rows, where a relation carries a detail, where the warm tiers meet their budget, and
where DuckDB's error has no message or several lines (the survivors of a mutation run)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import duckdb
import pytest

from audit import duckdb_corpus
from audit.corpus import PathRef, StoredRelation
from audit.duckdb_corpus import DuckDBCorpus
from audit.errors import CorpusError
from audit.warm import PASSAGE_BYTES, RECORD_BYTES
from tests.audit.test_duckdb_corpus import _write_snapshot

# pmid:7: versions z (no lineage row), b (seq 2) and c (seq 1): oldest first is z, c, b,
# neither the versions' nor the rows' order. pmid:8: a state and no version row at all.
LINEAGE = (
    "INSERT INTO record_state VALUES ('pmid:7', 'pubmed', 'b', FALSE, NULL),"
    " ('pmid:8', 'pubmed', 'v', FALSE, NULL);"
    "INSERT INTO records (record_id, version, source, content_hash, title) VALUES"
    " ('pmid:7', 'b', 'pubmed', 'h', 'B'), ('pmid:7', 'z', 'pubmed', 'h', 'Z'),"
    " ('pmid:7', 'c', 'pubmed', 'h', 'C');"
    "INSERT INTO record_versions VALUES ('pmid:7', 'b', 2, 'h', 'x', 'x', 'harvest'),"
    " ('pmid:7', 'c', 1, 'h', 'x', 'x', 'harvest');"
    "INSERT INTO passages (record_id, version, path, seq, section, text, folded) VALUES"
    " ('pmid:7', 'b', 'abstract.1', 1, 'abstract', 'text b', 'text b'),"
    " ('pmid:7', 'z', 'abstract.1', 1, 'abstract', 'text z', 'text z'),"
    " ('pmid:7', 'c', 'abstract.1', 1, 'abstract', 'text c', 'text c');"
    "INSERT INTO relations VALUES ('pmid:7', 'comment_in', 'pmid:70', 'pubmed',"
    " 'a letter on the dose', '2024-02-02', NULL)"
)
OLDEST_FIRST = ["z", "c", "b"]

# 20,000 more passages of 300 characters: their count alone is over 2 MiB at PASSAGE_BYTES
# each, and with their text the first batch loaded (10,000 rows) is already past 4 MiB.
MANY = 20_000
MANY_SQL = (
    "INSERT INTO passages (record_id, version, path, seq, section, text, folded)"
    " SELECT 'pmid:99000002', '1', 'body.' || i, i, 'body', repeat('x', 300), repeat('x', 300)"
    " FROM range(2, 20002) t(i)"
)


@pytest.fixture
def lineage(tmp_path: Path) -> Path:
    path = tmp_path / "lineage.duckdb"
    _write_snapshot(path, extra_sql=LINEAGE)
    return path


@pytest.fixture(scope="module")
def many(tmp_path_factory: pytest.TempPathFactory) -> Path:
    path = tmp_path_factory.mktemp("many") / "many.duckdb"
    _write_snapshot(path, extra_sql=MANY_SQL)
    return path


def _counts(path: Path) -> tuple[int, int]:
    con = duckdb.connect(str(path), read_only=True)
    try:
        ((records,),) = con.execute("SELECT count(*) FROM record_state").fetchall()
        ((passages,),) = con.execute("SELECT count(*) FROM passages").fetchall()
    finally:
        con.close()
    return records, passages


# -- versions in the lineage's order ---------------------------------------------------------


def test_a_records_versions_follow_the_lineage_and_one_without_a_row_comes_first(
    lineage: Path,
) -> None:
    with DuckDBCorpus(lineage) as corpus:
        record = corpus.records(["pmid:7"])["pmid:7"]
        assert record.versions == tuple(OLDEST_FIRST)
        assert record.title == "B"


def test_a_paths_passages_follow_the_lineage_and_one_without_a_row_comes_first(
    lineage: Path,
) -> None:
    ref = PathRef("pmid:7", "abstract.1")
    with DuckDBCorpus(lineage) as corpus:
        held = corpus.passage_versions([ref])[ref]
        assert [p.version for p in held] == OLDEST_FIRST
        assert [p.text for p in held] == ["text z", "text c", "text b"]


def test_the_passages_kept_warm_follow_the_lineage_too(lineage: Path) -> None:
    ref = PathRef("pmid:7", "abstract.1")
    with DuckDBCorpus(lineage) as corpus:
        warmth = corpus.keep_warm()
        assert warmth.passages is not None
        assert [p.version for p in warmth.passages["pmid:7"]] == OLDEST_FIRST
        assert [p.version for p in corpus.passage_versions([ref])[ref]] == OLDEST_FIRST
        assert corpus.records(["pmid:7"])["pmid:7"].versions == tuple(OLDEST_FIRST)


def test_a_record_without_any_version_row_has_no_versions_and_no_fields(lineage: Path) -> None:
    with DuckDBCorpus(lineage) as corpus:
        record = corpus.records(["pmid:8"])["pmid:8"]
        assert (record.current_version, record.versions, record.title) == ("v", (), None)
        assert record.licence == "unknown"


def test_a_relations_detail_is_read(lineage: Path) -> None:
    with DuckDBCorpus(lineage) as corpus:
        assert corpus.records(["pmid:7"])["pmid:7"].relations == (
            StoredRelation(
                kind="comment_in",
                target="pmid:70",
                source="pubmed",
                detail="a letter on the dose",
                date="2024-02-02",
            ),
        )


# -- the warm tiers at their budget ----------------------------------------------------------


def test_records_whose_estimate_is_the_budget_exactly_are_kept_warm(lineage: Path) -> None:
    records, passages = _counts(lineage)
    budget = records * RECORD_BYTES
    with DuckDBCorpus(lineage) as corpus:
        warmth = corpus.keep_warm(budget)
        assert warmth.records is not None and warmth.passages is None
        assert (warmth.estimate, warmth.budget) == (budget, budget)
        assert warmth.note == (
            f"records kept warm; {passages} passages would take ~0 MiB, over the budget of 0 MiB"
        )


def test_cold_and_warm_tiers_report_their_budget_and_what_they_hold(lineage: Path) -> None:
    records, _ = _counts(lineage)
    with DuckDBCorpus(lineage) as corpus:
        cold = corpus.keep_warm(records * RECORD_BYTES - 1)
        assert (cold.records, cold.budget) == (None, records * RECORD_BYTES - 1)
        warm = corpus.keep_warm(10 << 20)
        assert warm.passages is not None and warm.budget == 10 << 20
        # the records' estimate plus that of the passages held
        assert warm.estimate > records * RECORD_BYTES + len(warm.passages) * PASSAGE_BYTES


def test_passages_whose_count_alone_is_over_the_room_are_named_by_that_count(many: Path) -> None:
    records, passages = _counts(many)
    assert passages > MANY
    budget = records * RECORD_BYTES + passages * PASSAGE_BYTES - 1
    with DuckDBCorpus(many) as corpus:
        warmth = corpus.keep_warm(budget)
        assert warmth.records is not None and warmth.passages is None
        assert warmth.estimate == records * RECORD_BYTES
        assert warmth.note == (
            f"records kept warm; {passages:,} passages would take ~2 MiB, over the budget of 2 MiB"
        )


def test_passages_whose_count_fits_the_room_exactly_are_named_by_their_text(many: Path) -> None:
    records, passages = _counts(many)
    budget = records * RECORD_BYTES + passages * PASSAGE_BYTES
    with DuckDBCorpus(many) as corpus:
        warmth = corpus.keep_warm(budget)
        assert warmth.records is not None and warmth.passages is None
        # the estimate named is that of the passages loaded when it went over
        assert warmth.note == (
            f"records kept warm; {passages:,} passages would take ~4 MiB, over the budget of 2 MiB"
        )


# -- DuckDB's errors named -------------------------------------------------------------------


def test_a_file_that_is_not_a_database_is_refused_with_duckdbs_first_line(
    tmp_path: Path,
) -> None:
    path = tmp_path / "not.duckdb"
    path.write_bytes(b"not a database\n" * 1000)
    with pytest.raises(duckdb.Error) as raised:
        duckdb.connect(str(path), read_only=True)
    first = str(raised.value).splitlines()[0]
    with pytest.raises(CorpusError) as error:
        DuckDBCorpus(path)
    assert str(error.value) == f"cannot open snapshot {path}: {first}"


def test_an_error_without_a_message_is_named_by_its_kind_on_opening(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    path = tmp_path / "any.duckdb"
    path.write_bytes(b"")

    def refuse(_: Any) -> duckdb.DuckDBPyConnection:
        raise duckdb.IOException()

    monkeypatch.setattr(duckdb_corpus, "read_only_connection", refuse)
    with pytest.raises(CorpusError) as error:
        DuckDBCorpus(path)
    assert str(error.value) == f"cannot open snapshot {path}: IOException"


class _Failing:
    """A connection that raises ``error`` on a statement holding ``where``."""

    def __init__(self, con: duckdb.DuckDBPyConnection, where: str, error: duckdb.Error) -> None:
        self._con, self._where, self._error = con, where, error

    def execute(self, sql: str, params: Any = None) -> Any:
        if self._where in sql:
            raise self._error
        return self._con.execute(sql, params)

    def close(self) -> None:
        self._con.close()


def _failing(path: Path, where: str, error: duckdb.Error) -> DuckDBCorpus:
    con = duckdb.connect(str(path), read_only=True)
    return DuckDBCorpus(path, connection=_Failing(con, where, error))  # type: ignore[arg-type]


def test_an_error_without_a_message_is_named_by_its_kind_on_reading(lineage: Path) -> None:
    with (
        _failing(lineage, "FROM sources", duckdb.IOException()) as corpus,
        pytest.raises(CorpusError) as error,
    ):
        corpus.source_status()
    assert str(error.value) == f"cannot read snapshot {lineage}: IOException"


@pytest.mark.parametrize(
    ("error", "named"),
    [
        (duckdb.IOException("disk gone\nmore detail"), "disk gone"),
        (duckdb.IOException(), "IOException"),
    ],
)
def test_an_error_while_keeping_passages_warm_is_named(
    lineage: Path, error: duckdb.Error, named: str
) -> None:
    with (
        _failing(lineage, "nullif(folded, text)\nFROM passages \n", error) as corpus,
        pytest.raises(CorpusError) as raised,
    ):
        corpus.keep_warm()
    assert str(raised.value) == f"cannot read snapshot {lineage}: {named}"
