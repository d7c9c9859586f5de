"""The audit bench's handle and one-answer figures (never the whole bench: it generates
1,000,000 passages)."""

from __future__ import annotations

import sys
from datetime import UTC, datetime
from pathlib import Path

import duckdb
import pytest

from audit import engine
from audit.citations import parse_answer
from audit.engine import AuditInput, audit_many
from audit.keys import DEMO_KEY, Keyring
from pipeline.bench import bench_audit, bench_handles
from pipeline.bench.bench_audit import one_answer_figures
from pipeline.bench.bench_handles import PEER_HANDLES, handle_figures
from pipeline.bench.bench_peer import PEER_PYTHON_ENV, PeerUnavailable, peer_python
from pipeline.snapshot.store import index_record_ids
from tests.audit.planted import KEYRING, h, make_corpus, write_snapshot
from tests.audit.test_engine_assemble import ANSWER


def test_without_the_peer_the_handle_figures_keep_their_goals_and_say_why(
    tmp_path: Path,
) -> None:
    figures = handle_figures(tmp_path, Keyring.demo_keyring(), count=200, environ={})
    assert [f.name for f in figures] == [
        "handle parse from a string",
        "  parse + its locator built",
        "handle verify from a string (parse + HMAC)",
        "  verify with hmac.new(key).copy() per message",
        "  hand-built HMAC pads over it",
        "handle mint (a locator in, the string out)",
        "  mint with hmac.new(key).copy() per message",
        "  hand-built HMAC pads over it",
        "reference: hmac.digest, same messages",
        "  (7 rounds of 200 handles; slowest verify round)",
        f"  side by side skipped: set {PEER_PYTHON_ENV} to the peer's python",
    ]
    assert [f.goal for f in figures if not f.name.startswith(" ")][:3] == [
        2 * PEER_HANDLES[n] for n in ("parse", "verify", "mint")
    ]
    assert figures[4].goal == 1.1
    assert figures[4].value == pytest.approx(figures[2].value / figures[3].value)
    assert figures[7].value == pytest.approx(figures[5].value / figures[6].value)
    assert all(f.value > 0 for f in figures[:10])
    assert figures[-1].line() == figures[-1].name
    assert (tmp_path / "handles.txt").read_text(encoding="utf-8").count("\n") == 200


def test_the_plain_hmac_the_pads_are_measured_against_makes_the_same_check_codes() -> None:
    plain = bench_handles.plain_check_code(DEMO_KEY)
    for message in ("pmid:99000001/title", "nct:NCT99000001@2025-06-02/trial.arms.2", "é"):
        assert plain(message) == Keyring.demo_keyring().check_code(message)


# A stand-in for the peer's package: the same check codes (25 bits of HMAC-SHA256 of the
# locator text), its API's shapes (parse_handle -> (locator, check); verify -> the locator).
FAKE_PEER = """
import hmac
ALPHABET = "0123456789abcdefghjkmnpqrstvwxyz"
def _check(key, locator):
    bits = int.from_bytes(hmac.digest(key, locator.encode(), "sha256")[:4], "big") >> 7
    return "".join(ALPHABET[bits >> shift & 31] for shift in (20, 15, 10, 5, 0))
def parse_handle(text):
    locator, _, check = text.partition("~")
    return locator, check
class HandleCodec:
    def __init__(self, key):
        self.key = key
    def issue(self, locator):
        return f"{locator}~{_check(self.key, locator)}"
    def verify(self, text):
        locator, check = parse_handle(text)
        return locator if hmac.compare_digest(_check(self.key, locator), check) else None
"""


def test_with_a_peer_each_handle_figure_has_the_peers_beside_it_and_the_ratio(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    package = tmp_path / "peer" / "tekmeria" / "contract"
    package.mkdir(parents=True)
    for folder in (package.parent, package):
        (folder / "__init__.py").write_text("")
    (package / "handles.py").write_text(FAKE_PEER)
    monkeypatch.setenv("PYTHONPATH", str(tmp_path / "peer"))
    monkeypatch.setattr(bench_handles, "HANDLE_ROUNDS", 3)
    environ = {PEER_PYTHON_ENV: sys.executable}
    figures = handle_figures(tmp_path, Keyring.demo_keyring(), count=100, environ=environ)
    named = {f.name: f for f in figures}
    for name in ("parse", "verify", "mint"):
        peer = named[f"  peer (Tekmeria 0.1.1): {name}"]
        ratio = named[f"  ratio to the peer: {name}"]
        ours = next(f for f in figures if f.name.startswith(f"handle {name}"))
        assert ours.goal == 2 * peer.value
        assert (ratio.value, ratio.goal) == (pytest.approx(ours.value / peer.value), 2)
    assert not any(f.note for f in figures)
    assert len(figures) == 16  # 3 figures × 3 and 7 of ours beside them


def test_a_peer_that_does_not_run_is_a_note_and_our_figures_stay(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("PYTHONPATH", str(tmp_path))  # no tekmeria there
    monkeypatch.setattr(bench_handles, "HANDLE_ROUNDS", 1)
    environ = {PEER_PYTHON_ENV: sys.executable}
    figures = handle_figures(tmp_path, Keyring.demo_keyring(), count=10, environ=environ)
    assert figures[-1].note
    assert figures[-1].name == (
        "  side by side skipped: the peer did not run "
        "(ModuleNotFoundError: No module named 'tekmeria')"
    )
    assert figures[0].goal == 2 * PEER_HANDLES["parse"]


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
    monkeypatch.setattr(bench_audit, "ONE_ANSWER_ROUNDS", 2)
    monkeypatch.setattr(bench_audit, "ONE_ANSWER_BATCH", 1)
    monkeypatch.setattr(bench_audit, "OLDER_ANSWERS", 1)
    monkeypatch.setattr(bench_audit, "ROUND_TRIPS", 10)
    # every design audits answers it never saw: 6 per round (the look-up cache's again)
    answers = [
        f"Farrow syndrome {n} [{h(f'pmid:99000001/abstract.{n % 4 + 1}')}] [pmid:1-bad].\n"
        for n in range(12)
    ]
    audited: list[str] = []
    real = bench_audit.parse_answer

    def parse(text: str) -> object:
        audited.append(text)
        return real(text)

    monkeypatch.setattr(bench_audit, "parse_answer", parse)
    figures = one_answer_figures(path, KEYRING, answers, older)
    assert [f.name for f in figures] == [
        "one answer per call (2 citations; open, audit, close)",
        "one answer, kept open, each a statement (cold)",
        "  per CPU-second",
        "one answer, kept open, look-ups kept: first sight",
        "  the same answers again (look-ups kept: warm)",
        "one answer, kept warm (records and passages)",
        "  per CPU-second",
        "  kept warm over each a statement, same rounds",
        "one answer, only the records kept warm",
        "  over each a statement, same rounds",
        "  kept open on the snapshot without its record_id indexes",
        "  reference: DuckDB round trips (SELECT 1), same rounds",
        "  (2 interleaved rounds of 1 answers never audited before per design; citations/s)",
        "open and keep the records and passages warm",
        "  estimate of what it holds (budget 1,024 MiB)",
        "  RSS it added (DuckDB's cached blocks included)",
        "open and keep the records warm",
        "  estimate of what it holds (budget 0 MiB)",
        "  RSS it added (DuckDB's cached blocks included)",
    ]
    goal = 5 * bench_audit.PEER_ONE_ANSWER
    assert [f.goal for f in figures[:8]] == [goal, goal, None, None, None, goal, None, 1.1]
    assert all(f.value > 0 for f in figures[:12])
    # every answer audited by one design only, the look-up cache's twice (and each parsed
    # once more to count its citations)
    assert sorted(audited.count(a) for a in answers) == [2] * 10 + [3] * 2


def test_report_assembly_is_timed_against_model_construct_building_the_same_reports(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    corpus, now = make_corpus(), datetime(2025, 6, 2, tzinfo=UTC)
    inputs = [AuditInput("a.md", parse_answer(ANSWER))]
    assembled = [r.model_dump_json() for r in audit_many(inputs, corpus, KEYRING, now=now)]
    original = engine.assemble
    with bench_audit.assembled_by(bench_audit.constructed):
        assert engine.assemble is bench_audit.constructed
        built = [r.model_dump_json() for r in audit_many(inputs, corpus, KEYRING, now=now)]
    assert engine.assemble is original
    assert built == assembled
    monkeypatch.setattr(bench_audit, "ASSEMBLY_ROUNDS", 1)
    figures = bench_audit.assembly_figures(inputs, corpus, KEYRING)
    assert [f.name for f in figures] == [
        "  audit citations (16), models by model_construct",
        "  report.assemble over it",
    ]
    assert (figures[1].goal, figures[0].value > 0, figures[1].value > 0) == (1.1, True, True)


def test_parse_and_audit_is_timed_with_the_collector_paced_and_at_its_default_pace(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setattr(bench_audit, "END_TO_END_ROUNDS", 1)
    answers = [ANSWER] * 3
    citations = 3 * sum(len(s.citations) for s in parse_answer(ANSWER).sentences)
    figures = bench_audit.end_to_end_figures(answers, citations, make_corpus(), KEYRING)
    assert [f.name for f in figures] == [
        "parse + audit citations",
        "  per CPU-second",
        "  parse + audit, the collector at its default pace",
        "  per CPU-second",
        "  fewer_collections over it, per CPU-second",
        "  (1 interleaved rounds; slowest paced round)",
    ]
    assert [f.goal for f in figures] == [20_000, None, None, None, 1.1, None]
    assert figures[4].value == pytest.approx(figures[1].value / figures[3].value)
    assert figures[5].value == figures[0].value  # one round: its slowest is its median
    assert all(f.value > 0 for f in figures)
