"""Build progress: plain log lines off a terminal, Rich bars on one."""

from __future__ import annotations

import io

from pipeline.snapshot.progress import LogProgress, RichProgress


def test_log_progress_writes_a_few_plain_lines() -> None:
    lines: list[str] = []
    now = [0.0]
    progress = LogProgress(lines.append, every=5.0, clock=lambda: now[0])
    progress.start("pubmed", 1000)
    for _ in range(4):
        now[0] += 2.0
        progress.advance("pubmed", 250)
    progress.finish("pubmed", "ok")
    progress.finish("crossref", "partial")
    progress.note("pubmed: re-checking 3 earlier record(s)")
    assert lines == [
        "pubmed: harvesting 1000 records",
        "pubmed: 750/1000 records",
        "pubmed: ok, 1000 records",
        "crossref: partial",
        "pubmed: re-checking 3 earlier record(s)",
    ]


def test_rich_progress_draws_one_bar_per_source() -> None:
    stream = io.StringIO()
    with RichProgress(stream) as progress:
        progress.start("pubmed", 10)
        progress.advance("pubmed", 10)
        progress.finish("pubmed", "ok")
        progress.start("openfda", None)
        progress.advance("openfda", 1)
        progress.finish("openfda", "failed")
    text = stream.getvalue()
    assert "pubmed" in text and "10/10" in text and "ok" in text
    assert "openfda" in text and "failed" in text
