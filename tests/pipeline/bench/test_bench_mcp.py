"""The MCP bench's generated answer is what its figures say it is, and its parts add up."""

from __future__ import annotations

from pathlib import Path

import pytest

from audit.keys import Keyring
from audit.report import Report
from pipeline.bench import bench_mcp
from pipeline.bench.bench_mcp import GENERATED_CITATIONS, all_passages, generated_answer
from pipeline.bench.bench_peer import PEER_PYTHON_ENV
from pipeline.serve import calls, service
from pipeline.serve.service import Served
from pipeline.snapshot.trust import trust_snapshot
from tests.conftest import TRUST

DEMO = Keyring.demo_keyring()


def test_the_generated_answer_cites_every_passage_and_every_citation_is_ok(
    demo_pair: tuple[Path, Path],
) -> None:
    trusted = trust_snapshot(demo_pair[1], TRUST)
    con = trusted.search_connection()
    try:
        passages = all_passages(con, DEMO)
    finally:
        con.close()
    answer = generated_answer(passages, GENERATED_CITATIONS)
    with Served(trusted, DEMO) as served:
        report = service.audit(served, answer=answer).value
    assert isinstance(report, Report)
    verdicts = [c.verdict for s in report.sentences for c in s.citations]
    quoted = [c for s in report.sentences for c in s.citations if c.quote is not None]
    cited = {c.handle for s in report.sentences for c in s.citations}
    assert len(passages) < GENERATED_CITATIONS  # so every passage is cited at least once
    assert (len(verdicts), set(verdicts)) == (GENERATED_CITATIONS, {"ok"})
    assert report.metrics.fabricated == 0  # the overall verdict is warn: some records are flagged
    long_enough = [
        len(passages[i % len(passages)][1].split()) >= 8 for i in range(0, GENERATED_CITATIONS, 2)
    ]
    assert len(quoted) == sum(long_enough) > GENERATED_CITATIONS // 4
    assert cited == {handle for handle, _ in passages}


def test_the_parts_of_a_call_are_timed_beside_it_and_the_ceiling_is_their_sum(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv(PEER_PYTHON_ENV, raising=False)
    monkeypatch.setattr(bench_mcp, "ROUNDS", 1)
    monkeypatch.setattr(bench_mcp, "SECONDS_PER_ROUND", 0.01)
    named = {f.name: f for f in bench_mcp.run(tmp_path)}
    no_work = named["MCP round trip with no work (unknown tool, in memory)"].value
    check = named["  client's schema check of the report (demo answer)"].value
    direct = named["  same audit without MCP (demo answer)"].value
    ceiling = named["  ceiling with an audit that cost nothing (demo answer)"]
    parts = named["  parts in series: no work + check + audit (demo answer)"]
    assert (ceiling.value, ceiling.goal) == (pytest.approx(1 / (1 / no_work + 1 / check)), 565)
    assert parts.value == pytest.approx(1 / (1 / no_work + 1 / check + 1 / direct))
    for label in ("demo answer", "generated answer"):  # beside the wall clock, per CPU-second
        assert named[f"  per CPU-second of this process, client and server ({label})"].value > 0
        assert named[f"  same audit without MCP, per CPU-second ({label})"].value > 0
    assert not calls.log.disabled  # the refusals' log lines are silenced while timed only
