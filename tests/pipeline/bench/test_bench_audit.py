"""The audit bench's handle and one-answer figures (never the whole bench: it generates
1,000,000 passages)."""

from __future__ import annotations

from pathlib import Path

import duckdb
import pytest

from audit.keys import Keyring
from pipeline.bench import bench_audit
from pipeline.bench.bench_audit import PEER_HANDLES, handle_figures, one_answer_figures
from pipeline.bench.bench_peer import PEER_PYTHON_ENV, PeerUnavailable, peer_python
from pipeline.snapshot.store import index_record_ids
from tests.audit.planted import KEYRING, h, make_corpus, write_snapshot


def test_without_the_peer_the_handle_figures_keep_their_goals_and_say_why(
    tmp_path: Path,
) -> None:
    figures = handle_figures(tmp_path, Keyring.demo_keyring(), count=200, environ={})
    assert [f.name for f in figures] == [
        "handle parse from a string",
        "handle verify from a string (parse + HMAC)",
        "handle mint (a locator in, the string out)",
        "reference: hmac.digest, same messages",
        "  (7 rounds of 200 handles; slowest verify round)",
        f"  side by side skipped: set {PEER_PYTHON_ENV} to the peer's python",
    ]
    assert [f.goal for f in figures[:3]] == [
        2 * PEER_HANDLES[n] for n in ("parse", "verify", "mint")
    ]
    assert all(f.value > 0 for f in figures[:5])
    assert figures[-1].line() == figures[-1].name
    assert (tmp_path / "handles.txt").read_text(encoding="utf-8").count("\n") == 200


def test_a_peer_python_that_is_no_file_is_named_in_the_note(tmp_path: Path) -> None:
    missing = tmp_path / "no-python"
    with pytest.raises(PeerUnavailable) as caught:
        peer_python({PEER_PYTHON_ENV: str(missing)})
    assert str(caught.value) == f"side by side skipped: {PEER_PYTHON_ENV}={missing} is not a file"
    python = tmp_path / "python"
    python.write_text("")
    assert peer_python({PEER_PYTHON_ENV: f" {python} "}) == python


def test_one_answer_is_timed_on_the_snapshot_and_on_its_copy_without_indexes(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    path = write_snapshot(make_corpus(), tmp_path / "planted.duckdb", seal=None)
    con = duckdb.connect(str(path))
    index_record_ids(con)
    con.close()
    older = bench_audit.without_indexes(path, tmp_path / "older.duckdb")
    con = duckdb.connect(str(older), read_only=True)
    try:
        assert con.execute("SELECT count(*) FROM duckdb_indexes()").fetchall() == [(0,)]
        rows = con.execute("SELECT count(*) FROM passages").fetchall()
    finally:
        con.close()
    assert rows == [(len(make_corpus().all_passages()),)]
    monkeypatch.setattr(bench_audit, "ONE_ANSWER_ROUNDS", 1)
    monkeypatch.setattr(bench_audit, "ROUND_TRIPS", 10)
    answer = f"Farrow syndrome was seen [{h('pmid:99000001/abstract.2')}] [pmid:1-bad].\n"
    figures = one_answer_figures(path, KEYRING, [answer], older)
    assert [f.name for f in figures] == [
        "one answer per call (2 citations; open, audit, close): citations",
        "one answer, corpus kept open: citations",
        "one answer seen before, look-ups kept: citations",
        "  the same on the snapshot without its record_id indexes (before)",
        "  reference: DuckDB round trips (SELECT 1), same rounds",
    ]
    assert [f.goal for f in figures] == [5 * bench_audit.PEER_ONE_ANSWER] * 3 + [None] * 2
    assert all(f.value > 0 for f in figures)
