"""Bench: site build throughput (pages/s) on 1,000 generated reports (goal ≥ 200 pages/s).

The reports are generated here (synthetic text about the invented drug zentravir): every
verdict, flags with details, quotes checked against a changed passage (so the word diff runs)
and misquotes with a closest match. No snapshot is given, so the figure measures loading,
checking and rendering; the re-audit (one audit per report) is measured by the audit bench.
"""

from __future__ import annotations

import time
from pathlib import Path

import audit
from audit.report import (
    ByStatus,
    ByVerdict,
    CitationResult,
    Flag,
    KeyInfo,
    Metrics,
    PassageView,
    RecordView,
    Report,
    SentenceResult,
    SnapshotInfo,
)
from pipeline.bench import Figure

REPORTS = 1_000
GOAL_PAGES_PER_SECOND = 200.0

_ISSUED = (
    "Zentravir was given once daily for 12 weeks to 240 adults with Farrow syndrome; "
    "the primary outcome was the change in symptom score from baseline."
)
_NOW = (
    "Zentravir was given twice daily for 12 weeks to 236 adults with Farrow syndrome; "
    "the primary outcome was the change in symptom score from baseline at week 12."
)
_VERDICTS = ("ok", "ok", "ok", "quote_mismatch", "forged", "malformed", "withdrawn", "unavailable")


def make_citation(i: int, j: int) -> CitationResult:
    """One synthetic citation; ``i`` and ``j`` choose its verdict and flags."""
    verdict = _VERDICTS[(i + j) % len(_VERDICTS)]
    record_id = f"nct:NCT99{(i * 7 + j) % 1_000_000:06d}"
    handle = f"{record_id}@2025-01-15/trial.brief_summary.1~{'abcde'[j % 5]}2k4m"
    if verdict == "malformed":
        return CitationResult(
            raw=f"[{record_id}-summary]",
            handle=f"{record_id}-summary",
            verdict="malformed",
            detail="expected '/' after the id, got '-'",
        )
    if verdict in ("forged", "unavailable", "withdrawn"):
        return CitationResult(
            raw=f"[{handle}]",
            handle=handle,
            record_id=record_id,
            verdict=verdict,  # type: ignore[arg-type]
            detail=f"synthetic {verdict} case",
        )
    unique = f" Synthetic trial {i}.{j}."  # no two reports share a passage (no cache hits)
    issued = PassageView(
        record_id=record_id,
        version="2025-01-15",
        path="trial.brief_summary.1",
        text=_ISSUED + unique,
    )
    current = PassageView(
        record_id=record_id,
        version="2025-06-02",
        path="trial.brief_summary.1",
        text=_NOW + unique,
    )
    record = RecordView(
        record_id=record_id,
        source="clinicaltrials",
        current_version="2025-06-02",
        title=f"Zentravir in Farrow syndrome (synthetic trial {i})",
        status="COMPLETED",
    )
    if verdict == "quote_mismatch":
        return CitationResult(
            raw=f'[{handle} "given three times daily for 12 weeks"]',
            handle=handle,
            record_id=record_id,
            quote="given three times daily for 12 weeks",
            verdict="quote_mismatch",
            detail="the quote is not verbatim in the text as issued nor as it is now",
            closest_match="given once daily for 12 weeks",
            similarity=0.8421,
            passage=issued,
            current_passage=current,
            record=record,
        )
    flags = [Flag(name="version_changed", detail="issued 2025-01-15, current 2025-06-02")]
    if (i + j) % 5 == 0:
        flags.append(Flag(name="retracted", detail="retraction notice pmid:99000003"))
    return CitationResult(
        raw=f'[{handle} "to 240 adults with Farrow syndrome"]',
        handle=handle,
        record_id=record_id,
        quote="to 240 adults with Farrow syndrome",
        verdict="ok",
        flags=flags,
        checked_against="issued",
        passage=issued,
        current_passage=current,
        record=record,
    )


def make_report(i: int, *, sentences: int = 6, snapshot_sha256: str = "0" * 64) -> Report:
    """A synthetic report whose metrics agree with its citations."""
    results: list[SentenceResult] = []
    by_verdict: dict[str, int] = {}
    for n in range(1, sentences + 1):
        citations = [make_citation(i, n * 3 + k) for k in range(n % 3)]
        for c in citations:
            by_verdict[c.verdict] = by_verdict.get(c.verdict, 0) + 1
        valid = any(c.verdict == "ok" for c in citations)
        status = "cited" if valid else "invalid_only" if citations else "uncited"
        text = f"Sentence {n} of synthetic answer {i} about zentravir in Farrow syndrome."
        results.append(SentenceResult(index=n, text=text, status=status, citations=citations))
    cites = [c for s in results for c in s.citations]
    fabricated = by_verdict.get("malformed", 0) + by_verdict.get("forged", 0)
    quotes = [c for c in cites if c.quote is not None]
    ok = by_verdict.get("ok", 0)
    verdict = "fail" if fabricated else "warn" if len(cites) > ok else "pass"
    return Report(
        contract_version=audit.CONTRACT_VERSION,
        tool_version=audit.__version__,
        created_at=f"2025-06-{1 + i % 28:02d}T{i % 24:02d}:00:00Z",
        source=f"answer-{i:05d}.md",
        verdict=verdict,
        verdict_reasons=[f"{fabricated} fabricated citations"] if fabricated else [],
        snapshot=SnapshotInfo(name="bench", path="bench.duckdb", sha256=snapshot_sha256),
        key=KeyInfo(fingerprint="b3nchf1ngerp", demo=True),
        metrics=Metrics(
            fabricated=fabricated,
            retracted_cited=sum(1 for c in cites if any(f.name == "retracted" for f in c.flags)),
            sentences=len(results),
            cited_sentences=sum(1 for s in results if s.status == "cited"),
            quotes=len(quotes),
            verbatim_quotes=sum(1 for c in quotes if c.verdict == "ok"),
            citations=len(cites),
            valid_citations=ok,
            citation_validity=ok / len(cites) if cites else None,
            by_verdict=ByVerdict(**by_verdict),
            by_status=ByStatus(
                cited=sum(1 for s in results if s.status == "cited"),
                uncited=sum(1 for s in results if s.status == "uncited"),
                invalid_only=sum(1 for s in results if s.status == "invalid_only"),
            ),
        ),
        sentences=results,
    )


def write_reports(folder: Path, count: int) -> None:
    folder.mkdir(parents=True, exist_ok=True)
    for i in range(count):
        path = folder / f"answer-{i:05d}.json"
        path.write_text(make_report(i).model_dump_json(indent=2), encoding="utf-8")


def run(workdir: Path) -> list[Figure]:
    from pipeline.site.build import build_site

    reports = workdir / "reports"
    snapshots = workdir / "snapshots"
    snapshots.mkdir()
    write_reports(reports, REPORTS)
    env = {"SOURCE_DATE_EPOCH": "1750000000"}
    started = time.perf_counter()
    result = build_site(reports, snapshots, workdir / "public", env=env)
    elapsed = time.perf_counter() - started
    size = sum(p.stat().st_size for p in (workdir / "public").rglob("*.html"))
    return [
        Figure(
            "site build, 1,000 reports (pages/s)",
            result.pages / elapsed,
            "pages/s",
            GOAL_PAGES_PER_SECOND,
        ),
        Figure("site build, 1,000 reports (total)", elapsed, "s"),
        Figure("site size (HTML)", size / 1e6, "MB"),
    ]
