"""What a build's harvest reported, kept for the snapshot: failures, refusals, steps, answers.

:class:`HarvestLog` is the bookkeeping half of the build's :class:`~pipeline.harvest.Sink`
(the other half, records, goes to :mod:`pipeline.snapshot.ingest`): per source, the failed
requests, the answered ones, the records enriched and those refused by reason; the
``harvest_log`` rows and the raw responses waiting to be written (:meth:`HarvestLog.take`);
and from all of it each source's status and summary for the manifest and the ``sources``
table. No I/O: the build stages and writes what it takes.

Failures reach it already redacted (:mod:`pipeline.harvest` passes every error through the
client's redactor before reporting it); responses are stored as the client hands them over.
"""

from __future__ import annotations

from collections.abc import Collection, Iterator, Mapping, Sequence
from dataclasses import dataclass, field

from pipeline.errors import HarvestError, ParseError
from pipeline.harvest import Progress
from pipeline.http import Exchange
from pipeline.records import Refusal, refusal_counts
from pipeline.snapshot.ingest import SourceCounts
from pipeline.snapshot.manifest import FailedRequest, SourceSummary
from pipeline.snapshot.store import ResponseRow, now_text
from pipeline.sources import names

ENRICHMENT_SOURCES = frozenset({"pubtator3", "crossref"})
RESPONSE_FLUSH_BYTES = 16 << 20
RESPONSE_FLUSH_COUNT = 64
DETAIL_CHARS = 2000  # of a source's failures in the ``sources`` table

LogRow = tuple[object, ...]


@dataclass
class SourceState:
    failures: int = 0
    answered: int = 0  # requests that got a final answer below 500
    steps: int = 0  # steps that delivered (a local source's files are read, not requested)
    enriched: int = 0  # records annotated (PubTator3) or DOIs checked (Crossref)
    refused: dict[str, int] = field(default_factory=dict)  # records refused, by reason


@dataclass
class HarvestLog:
    """The reports of one harvest (module docstring); ``harvested`` are the spec's sources."""

    harvested: Collection[str]
    progress: Progress
    failed: list[FailedRequest] = field(default_factory=list)
    refused_ids: set[str] = field(default_factory=set)
    refusals: list[str] = field(default_factory=list)  # each refused id, in order (harvest.py)
    state: dict[str, SourceState] = field(default_factory=dict)
    _refusals_seen: set[tuple[str, str, str]] = field(default_factory=set)
    _rows: list[LogRow] = field(default_factory=list)
    _responses: list[ResponseRow] = field(default_factory=list)
    _response_bytes: int = 0
    _response_id: int = 0

    def of(self, source: str) -> SourceState:
        return self.state.setdefault(source, SourceState())

    # -- what the harvest reports -------------------------------------------------------------
    def failure(self, source: str, step: str, error: HarvestError | ParseError) -> None:
        self.of(source).failures += 1
        self.failed.append(FailedRequest(source=source, step=step, error=error.message))
        self._rows.append((now_text(), source, step, None, None, False, None, error.message))
        self.progress.note(f"{source}: {step} failed: {error.message}")

    def refused(self, source: str, refusals: Sequence[Refusal]) -> None:
        """Records a parser refused (see :mod:`pipeline.sources.citable`): counted per
        source and reason for the manifest; a refused record that upstream still has (a bad
        version label) is not withdrawn."""
        counts = self.of(source).refused
        fresh = []  # a record refused again (the refresh asks for it once more) counts once
        for refusal in refusals:
            key = (source, refusal.reason, refusal.record_id or refusal.value)
            if key not in self._refusals_seen:
                self._refusals_seen.add(key)
                fresh.append(refusal)
        for reason, count in refusal_counts(fresh).items():
            counts[reason] = counts.get(reason, 0) + count
            self._rows.append((now_text(), source, "refused", None, None, False, count, reason))
            self.progress.note(
                f"{source}: refused {count} record(s) that cannot be cited: {reason}"
            )
        ids = [r.record_id for r in refusals if r.record_id]
        self.refused_ids.update(ids)
        self.refusals.extend(ids)

    def step(self, source: str, step: str, count: int, detail: str | None = None) -> None:
        self._rows.append((now_text(), source, step, None, None, True, count, detail))
        self.of(source).steps += 1
        if source in ENRICHMENT_SOURCES:
            self.of(source).enriched += count

    def exchange(self, exchange: Exchange) -> bool:
        """Keep one answered request; True when the responses kept are due to be written."""
        source = exchange.source or "unknown"
        if exchange.status < 500:
            self.of(source).answered += 1
        self._response_id += 1
        row = ResponseRow(
            source=exchange.source,
            method=exchange.method,
            url=exchange.url,
            status=exchange.status,
            content_type=exchange.content_type,
            body=exchange.body,
            fetched_at=now_text(),
            request_body=exchange.request_body,
        )
        self._responses.append(row)
        self._response_bytes += len(exchange.body)
        ok = exchange.status < 400
        self._rows.append(
            (row.fetched_at, source, "request", exchange.url, exchange.status, ok, None, None)
        )
        return (
            len(self._responses) >= RESPONSE_FLUSH_COUNT
            or self._response_bytes >= RESPONSE_FLUSH_BYTES
        )

    def take(self) -> tuple[Iterator[tuple[object, ...]], list[LogRow]]:
        """The ``responses`` rows (numbered, packed as they are read) and the ``harvest_log``
        rows kept so far, each handed over once."""
        kept, rows = self._responses, self._rows
        first = self._response_id - len(kept) + 1
        self._responses, self._rows, self._response_bytes = [], [], 0
        return (r.row(first + i) for i, r in enumerate(kept)), rows

    # -- summary ------------------------------------------------------------------------------
    def status(self, source: str) -> str:
        if source not in self.harvested:
            return "not_harvested"
        state = self.state.get(source, SourceState())
        if not state.failures:
            return "ok"
        return "partial" if state.answered or state.steps else "failed"

    def summaries(self, counts: Mapping[str, SourceCounts]) -> dict[str, SourceSummary]:
        """Each source's summary, given what each contributed (the ingest's counts)."""
        out: dict[str, SourceSummary] = {}
        for source in names():
            c = counts.get(source)
            state = self.state.get(source, SourceState())
            out[source] = SourceSummary(
                status=self.status(source),
                records=state.enriched if source in ENRICHMENT_SOURCES else c.records if c else 0,
                passages=c.passages if c else 0,
                new_versions=c.new_versions if c else 0,
                failed_requests=state.failures,
                refused=dict(state.refused),
            )
        return out

    def source_rows(self, counts: Mapping[str, SourceCounts]) -> list[tuple[object, ...]]:
        """The rows of the ``sources`` table."""
        rows: list[tuple[object, ...]] = []
        for source, summary in self.summaries(counts).items():
            detail = "; ".join(f.step + ": " + f.error for f in self.failed if f.source == source)
            rows.append(
                (
                    source,
                    summary.status,
                    summary.records,
                    summary.passages,
                    summary.failed_requests,
                    detail[:DETAIL_CHARS] or None,
                )
            )
        return rows
