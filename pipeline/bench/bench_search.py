"""Search relevance and latency: ``python -m pipeline.bench search`` (part of ``make bench``).

Relevance: a corpus of :data:`RELEVANCE_WORKS` generated works
(:mod:`pipeline.bench.bench_search_corpus`: their labels follow from how they were generated),
searched with its 55 labelled queries, top :data:`K`, twice: per passage (the BM25 ranking
itself, :func:`pipeline.snapshot.index.search_sql`) and one result per work
(:func:`pipeline.snapshot.search.search_page`). Both rankings are scored against the *true*
works (the generator's, not :mod:`pipeline.snapshot.works`):

    gain      a result's passage grade (0–3), or 0 when its work was already shown higher up
              (the same paper twice tells the reader nothing new)
    nDCG@10   DCG = Σ gain / log2(rank + 1) over the first 10, over the DCG of the ideal
              ranking (the relevant works' grades, best first)
    recall@10 relevant works (grade ≥ 1) shown in the first 10, over min(10, relevant works)

Latency: the same queries, plus one that matches nothing, on a generated snapshot of about
:data:`LATENCY_PASSAGES` passages (cached under the system temp folder, keyed by the
generator and schema versions and a digest of the code that writes it, so reruns skip its
generation and a change to the writer is never timed on a stale file), :data:`ROUNDS` interleaved
rounds of (physical reference, search) per query. The reference is a bare DuckDB count of
the query's postings (the ``search_postings`` rows of its terms, looked up and scanned as
the search does: the least any BM25 over this index reads).
"""

from __future__ import annotations

import hashlib
import math
import statistics
import tempfile
import time
from collections.abc import Sequence
from pathlib import Path

import duckdb

from audit.keys import Keyring
from pipeline.bench import Figure
from pipeline.bench.bench_search_corpus import (
    GENERATOR_VERSION,
    Query,
    Work,
    generate,
    labels,
    queries,
    write_snapshot,
)
from pipeline.snapshot.index import search_sql
from pipeline.snapshot.ranked import term_ids
from pipeline.snapshot.schema import SCHEMA_VERSION
from pipeline.snapshot.search import open_snapshot, search_page

K = 10
RELEVANCE_WORKS = 3_000
LATENCY_WORKS = 83_500  # about 1,000,000 passages (12 a work on average)
LATENCY_PASSAGES = 1_000_000
ROUNDS = 3
GOAL_P95_MS = 200.0
NO_MATCH = "qwzx unmatchable vlorp"
BENCH_KEYRING = Keyring([b"citeseal bench key: not a secret, bench only"])


def dcg(gains: Sequence[float]) -> float:
    """Σ gain / log2(rank + 1), ranks from 1."""
    return sum(g / math.log2(rank + 2) for rank, g in enumerate(gains))


def work_gains(ranked: Sequence[tuple[str, int]]) -> list[int]:
    """The gain of each (work, grade) result: its grade the first time its work appears, 0
    after (a repeated work adds nothing)."""
    seen: set[str] = set()
    gains = []
    for work, value in ranked:
        gains.append(0 if work in seen else value)
        seen.add(work)
    return gains


def ndcg_at(ranked: Sequence[tuple[str, int]], work_grades: dict[str, int], k: int = K) -> float:
    """nDCG@k of ``ranked`` (work, grade) results against the works' grades (0 when no work
    is relevant: nothing to find)."""
    ideal = dcg(sorted((g for g in work_grades.values() if g > 0), reverse=True)[:k])
    return dcg(work_gains(ranked[:k])) / ideal if ideal else 0.0


def recall_at(ranked: Sequence[tuple[str, int]], work_grades: dict[str, int], k: int = K) -> float:
    """Relevant works among the first ``k`` results, over min(k, relevant works)."""
    relevant = {w for w, g in work_grades.items() if g > 0}
    if not relevant:
        return 0.0
    return len({w for w, _ in ranked[:k]} & relevant) / min(k, len(relevant))


def judged(
    hits: Sequence[tuple[str, str]],
    graded: dict[tuple[str, str], tuple[str, int]],
    work_of: dict[str, str],
) -> list[tuple[str, int]]:
    """(record id, path) hits as (true work, grade) results (grade 0 for unlabelled ones)."""
    return [graded.get(hit, (work_of[hit[0]], 0)) for hit in hits]


def work_grades(graded: dict[tuple[str, str], tuple[str, int]]) -> dict[str, int]:
    out: dict[str, int] = {}
    for work, value in graded.values():
        out[work] = max(out.get(work, 0), value)
    return out


def relevance(
    con: duckdb.DuckDBPyConnection, works: list[Work], asked: list[Query]
) -> dict[str, tuple[float, float]]:
    """Mean (nDCG@K, recall@K) per passage and per work."""
    work_of = {r.record_id: w.work_id for w in works for r in w.records}
    scores: dict[str, list[tuple[float, float]]] = {"passage": [], "work": []}
    sql = search_sql(sources=False)
    for query in asked:
        graded = labels(query, works)
        grades = work_grades(graded)
        rows = con.execute(sql, {"query": query.text, "limit": K}).fetchall()
        per_passage = judged([(r[0], r[2]) for r in rows], graded, work_of)
        page = search_page(con, query.text, BENCH_KEYRING, limit=K)
        per_work = judged([(h.record_id, h.path) for h in page.hits], graded, work_of)
        for name, ranked in (("passage", per_passage), ("work", per_work)):
            scores[name].append((ndcg_at(ranked, grades), recall_at(ranked, grades)))
    return {
        name: (statistics.fmean(s[0] for s in rows), statistics.fmean(s[1] for s in rows))
        for name, rows in scores.items()
    }


WRITER_SOURCES = ("pipeline/snapshot", "pipeline/bench/bench_search_corpus.py", "audit/folding.py")
"""What writes the latency snapshot: the cache is keyed by their source, so a change to how
postings, works or passages are written builds a new one instead of timing a stale file."""


PROJECT_ROOT = Path(__file__).resolve().parents[2]


def writer_digest(root: Path = PROJECT_ROOT) -> str:
    """A short digest of every :data:`WRITER_SOURCES` file's bytes, in path order."""
    digest = hashlib.sha256()
    for name in WRITER_SOURCES:
        target = root / name
        for file in sorted(target.rglob("*.py")) if target.is_dir() else [target]:
            digest.update(file.relative_to(root).as_posix().encode() + b"\0")
            digest.update(file.read_bytes() + b"\0")
    return digest.hexdigest()[:12]


def latency_snapshot() -> Path:
    """The cached latency snapshot (written once per generator, schema and writer source)."""
    folder = Path(tempfile.gettempdir()) / "citeseal-bench-search"
    key = f"{GENERATOR_VERSION}-schema{SCHEMA_VERSION}-{writer_digest()}-{LATENCY_WORKS}"
    path = folder / f"{key}.duckdb"
    if not path.exists():
        for stale in folder.glob("*.duckdb"):  # another key's file: never read again
            stale.unlink()
        temp = path.with_suffix(".partial")
        temp.unlink(missing_ok=True)
        write_snapshot(temp, generate(LATENCY_WORKS))
        temp.rename(path)
    return path


def _postings_sql(con: duckdb.DuckDBPyConnection, text: str) -> str:
    """The physical reference of ``text``: a bare count of its terms' rows in the postings
    the search reads (``search_postings``, term order), the same integer literals."""
    ids = ", ".join(str(i) for i in term_ids(con, text)) or "NULL"
    return f"SELECT count(*), sum(tf) FROM search_postings WHERE term_id IN ({ids})"  # noqa: S608


def _ms(samples: list[float], q: float) -> float:
    ordered = sorted(samples)
    return 1000 * ordered[min(len(ordered) - 1, math.ceil(q * len(ordered)) - 1)]


def latency(con: duckdb.DuckDBPyConnection, texts: list[str]) -> tuple[list[float], list[float]]:
    """Seconds per search and per reference scan, :data:`ROUNDS` interleaved rounds."""
    searches: list[float] = []
    scans: list[float] = []
    search_page(con, texts[0], BENCH_KEYRING, limit=K)  # warm the caches once
    for _ in range(ROUNDS):
        for text in texts:
            start = time.perf_counter()
            con.execute(_postings_sql(con, text)).fetchall()
            scans.append(time.perf_counter() - start)
            start = time.perf_counter()
            search_page(con, text, BENCH_KEYRING, limit=K)
            searches.append(time.perf_counter() - start)
    return searches, scans


def run(workdir: Path) -> list[Figure]:
    works = list(generate(RELEVANCE_WORKS))
    asked = queries(works)
    small = workdir / "relevance.duckdb"
    write_snapshot(small, iter(works))
    con = open_snapshot(small)
    try:
        scores = relevance(con, works, asked)
    finally:
        con.close()
    figures = [
        Figure(
            f"{len(asked)} labelled queries, {RELEVANCE_WORKS:,} works "
            f"({sum(len(w.records) for w in works):,} records)",
            0,
            "",
            note=True,
        ),
        Figure("nDCG@10 per passage (before merging works)", 100 * scores["passage"][0], "%"),
        Figure("nDCG@10 one result per work", 100 * scores["work"][0], "%"),
        Figure("recall@10 per passage (before merging works)", 100 * scores["passage"][1], "%"),
        Figure("recall@10 one result per work", 100 * scores["work"][1], "%"),
    ]
    start = time.perf_counter()
    path = latency_snapshot()
    made = time.perf_counter() - start
    con = open_snapshot(path)
    try:
        row = con.execute("SELECT count(*) FROM passages").fetchone()
        held = int(row[0]) if row else 0
        texts = [q.text for q in asked] + [NO_MATCH]
        searches, scans = latency(con, texts)
        no_match = [t for n, t in enumerate(searches) if n % len(texts) == len(texts) - 1]
    finally:
        con.close()
    figures += [
        Figure(
            f"latency snapshot: {held:,} passages ({'cached' if made < 5 else 'generated'} "
            f"in {made:.0f} s); {ROUNDS} rounds of {len(texts)} queries",
            0,
            "",
            note=True,
        ),
        Figure("search p50", _ms(searches, 0.5), "ms"),
        Figure("search p95", _ms(searches, 0.95), "ms", GOAL_P95_MS, higher_is_better=False),
        Figure("search matching nothing, median", 1000 * statistics.median(no_match), "ms"),
        Figure("reference: postings scan p50", _ms(scans, 0.5), "ms"),
        Figure("reference: postings scan p95", _ms(scans, 0.95), "ms"),
    ]
    return figures
