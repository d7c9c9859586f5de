"""The MCP bench's generated answer is what its figures say it is."""

from __future__ import annotations

from pathlib import Path

from audit.keys import Keyring
from audit.report import Report
from pipeline.bench.bench_mcp import GENERATED_CITATIONS, all_passages, generated_answer
from pipeline.serve import service
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
