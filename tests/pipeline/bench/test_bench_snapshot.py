"""The snapshot bench's generated corpus: a replay folder a build reads offline."""

from __future__ import annotations

from pathlib import Path

from pipeline.bench.bench_snapshot import build_in_child, generate_pubmed_replay


def test_a_generated_replay_builds_offline_with_ten_passages_per_record(tmp_path: Path) -> None:
    spec = generate_pubmed_replay(tmp_path, 700, name="tiny")
    replay = tmp_path / "tiny-replay" / "pubmed"
    names = sorted(p.name.split("-")[0] for p in replay.iterdir())
    assert names == ["efetch", "efetch", "esearch", "esearch"]  # 500 + 200 ids; 2 pages
    out = build_in_child(spec)
    assert (out["records"], out["passages"]) == (700, 7_000)
    assert out["seconds"] > 0 and out["rss_kb"] > 0
    assert out["writer_rss_kb"] > 20_000  # the writer process (DuckDB alone is more)
    assert len(list((tmp_path / "tiny").glob("tiny-*.duckdb"))) == 1
