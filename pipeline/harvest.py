"""Harvest a corpus spec: call each source's harvest functions, enrich, hand batches on.

For each source of the spec (in the order PubMed, Europe PMC, ClinicalTrials.gov, openFDA):
queries first, then explicit ids, fetched in chunks of :data:`CHUNK` so memory does not grow
with the corpus. Every chunk is enriched before it is handed to the :class:`Sink`:

* PubMed records get their PubTator3 annotations (``[pubmed] annotations = true``);
* every record with a DOI gets Crossref's update notices as relations and flags
  (``[crossref] updates = true``, via :func:`pipeline.sources.crossref.apply_relations`);
* every PMCID met gets its Europe PMC open-access full text as a ``pmcid:`` record
  (``[europepmc] full_text = true``).

A failed request (a :class:`~pipeline.errors.HarvestError` once the retry policy gives up,
or a body its parser rejects) is reported to the sink and the harvest goes on, unless
``strict``. :func:`refresh` re-fetches records of the lineage that this harvest did not meet,
so a record gone upstream can be told from one that merely fell out of a query.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Iterator, Sequence
from dataclasses import dataclass, field
from typing import Protocol, TypeVar

from pipeline.errors import HarvestError, ParseError
from pipeline.http import HttpClient
from pipeline.records import Annotation, Record, Relation
from pipeline.snapshot.spec import CorpusSpec
from pipeline.sources import clinicaltrials, crossref, europepmc, openfda, pubmed, pubtator3

CHUNK = 1000  # records fetched, enriched and written together
EPMC_ID_CHUNK = 25  # preprint ids OR-ed into one Europe PMC query
DOI_CACHE = 4096  # DOIs whose Crossref notices are remembered (a pmid and its pmcid share one)
T = TypeVar("T")


class Sink(Protocol):
    """Where a harvest delivers what it found."""

    def records(self, source: str, records: Sequence[Record]) -> None: ...

    def failure(self, source: str, step: str, error: HarvestError | ParseError) -> None: ...

    def step(self, source: str, step: str, count: int, detail: str | None = None) -> None: ...


class Progress(Protocol):
    """Progress display: one bar (or log line series) per source."""

    def start(self, source: str, total: int | None) -> None: ...

    def advance(self, source: str, count: int) -> None: ...

    def finish(self, source: str, status: str) -> None: ...

    def note(self, message: str) -> None: ...


@dataclass
class HarvestOutcome:
    """Record ids that were asked for by id and that upstream did not return."""

    missing: set[str] = field(default_factory=set)


def chunks(items: Sequence[T], size: int) -> Iterator[list[T]]:
    for start in range(0, len(items), size):
        yield list(items[start : start + size])


def ncbi_date(value: str | None) -> str | None:
    """``2020-01-15`` → ``2020/01/15`` (E-utilities date syntax)."""
    return value.replace("-", "/") if value else None


class Harvester:
    """One harvest of one spec through one client (see the module docstring)."""

    def __init__(
        self,
        spec: CorpusSpec,
        client: HttpClient,
        sink: Sink,
        progress: Progress,
        *,
        strict: bool = False,
    ) -> None:
        self.spec = spec
        self.client = client
        self.sink = sink
        self.progress = progress
        self.strict = strict
        self.outcome = HarvestOutcome()
        self._full_text_done: set[str] = set()
        self._doi_cache: dict[str, list[Relation] | None] = {}  # recent DOIs' notices

    # -- plumbing -----------------------------------------------------------------------------
    def _call(self, source: str, step: str, call: Callable[[], T]) -> T | None:
        """Run one request-level call; report a failure instead of raising (unless strict)."""
        try:
            return call()
        except (HarvestError, ParseError) as error:
            self.sink.failure(source, step, error)
            if self.strict:
                raise
            return None

    def _deliver(self, source: str, records: Sequence[Record]) -> None:
        if records:
            self.sink.records(source, self._enrich(records))

    # -- the whole spec ------------------------------------------------------------------------
    def run(self) -> HarvestOutcome:
        spec = self.spec
        if spec.pubmed is not None:
            self._pubmed()
        if spec.europepmc is not None:
            self._europepmc()
        if spec.clinicaltrials is not None:
            self._clinicaltrials()
        if spec.openfda is not None:
            self._openfda()
        return self.outcome

    def _deliver_search(self, source: str, query: str, records: Sequence[Record] | None) -> None:
        """Deliver the records a query found, in chunks (None: the search failed, logged)."""
        if records is None:
            return
        self.sink.step(source, "search", len(records), query)
        for chunk in chunks(records, CHUNK):
            self._deliver(source, chunk)
            self.progress.advance(source, len(chunk))

    def _deliver_fetched(
        self, source: str, scheme: str, asked: Sequence[str], records: Sequence[Record] | None
    ) -> None:
        """Deliver records fetched by id; the ids upstream did not return are noted missing."""
        if records is None:
            return
        got = {r.record_id for r in records}
        self.outcome.missing.update(f"{scheme}:{i}" for i in asked if f"{scheme}:{i}" not in got)
        self._deliver(source, records)
        self.progress.advance(source, len(records))

    def _pubmed(self) -> None:
        assert self.spec.pubmed is not None
        ids: dict[str, None] = {}
        for q in self.spec.pubmed.queries:
            found = self._call(
                "pubmed",
                f"search {q.term!r}",
                lambda q=q: pubmed.search_ids(
                    self.client,
                    q.term,
                    limit=q.limit,
                    mindate=ncbi_date(q.mindate),
                    maxdate=ncbi_date(q.maxdate),
                ),
            )
            if found is not None:
                self.sink.step("pubmed", "search", len(found), q.term)
                ids.update(dict.fromkeys(found))
        ids.update(dict.fromkeys(self.spec.pubmed.ids))
        self.fetch_pubmed(list(ids))

    def fetch_pubmed(self, pmids: Sequence[str]) -> None:
        """Fetch, enrich and deliver PubMed records; note the PMIDs PubMed did not return."""
        self.progress.start("pubmed", len(pmids))
        for chunk in chunks(pmids, CHUNK):
            records = self._call(
                "pubmed", "efetch", lambda chunk=chunk: pubmed.fetch_records(self.client, chunk)
            )
            if records is None:
                continue
            got = {r.pmid for r in records}
            self.outcome.missing.update(f"pmid:{p}" for p in chunk if p not in got)
            self._deliver("pubmed", records)
            self.progress.advance("pubmed", len(chunk))

    def _europepmc(self) -> None:
        assert self.spec.europepmc is not None
        self.progress.start("europepmc", None)
        for q in self.spec.europepmc.queries:
            records = self._call(
                "europepmc",
                f"search {q.query!r}",
                lambda q=q: europepmc.search_records(
                    self.client, q.effective_query(), limit=q.limit
                ),
            )
            self._deliver_search("europepmc", q.query, records)
        self.fetch_preprints(self.spec.europepmc.ids)

    def fetch_preprints(self, ppr_ids: Sequence[str]) -> None:
        """Europe PMC preprints by id (``EXT_ID:… AND SRC:PPR``)."""
        for chunk in chunks(list(ppr_ids), EPMC_ID_CHUNK):
            query = "(" + " OR ".join(f"EXT_ID:{i}" for i in chunk) + ") AND SRC:PPR"
            records = self._call(
                "europepmc",
                "preprints",
                lambda query=query, chunk=chunk: europepmc.search_records(
                    self.client, query, limit=len(chunk)
                ),
            )
            self._deliver_fetched("europepmc", "ppr", chunk, records)

    def fetch_full_texts(self, pmcids: Iterable[str]) -> None:
        """Europe PMC full text of PMCIDs (``pmcid:`` records); none upstream = missing."""
        for pmcid in pmcids:
            if pmcid in self._full_text_done:
                continue
            self._full_text_done.add(pmcid)
            try:
                record = europepmc.fetch_full_text(self.client, pmcid)
            except (HarvestError, ParseError) as error:
                self.sink.failure("europepmc", f"full text {pmcid}", error)
                if self.strict:
                    raise
                continue
            if record is None:
                self.outcome.missing.add(f"pmcid:{pmcid}")
                continue
            self.sink.records("europepmc", self._with_updates([record]))
            self.progress.advance("europepmc", 1)

    def _clinicaltrials(self) -> None:
        spec = self.spec.clinicaltrials
        assert spec is not None
        self.progress.start("clinicaltrials", None)
        for q in spec.queries:
            records = self._call(
                "clinicaltrials",
                "search",
                lambda q=q: clinicaltrials.search_records(
                    self.client,
                    term=q.term,
                    cond=q.cond,
                    intr=q.intr,
                    filters=q.filters or None,
                    limit=q.limit,
                ),
            )
            self._deliver_search("clinicaltrials", q.term or q.cond or "", records)
        self.fetch_trials(spec.ids)

    def fetch_trials(self, nct_ids: Sequence[str]) -> None:
        for chunk in chunks(list(nct_ids), CHUNK):
            records = self._call(
                "clinicaltrials",
                "fetch",
                lambda chunk=chunk: clinicaltrials.fetch_records(self.client, chunk),
            )
            self._deliver_fetched("clinicaltrials", "nct", chunk, records)

    def _openfda(self) -> None:
        spec = self.spec.openfda
        assert spec is not None
        self.progress.start("openfda", None)
        for q in spec.queries:
            records = self._call(
                "openfda",
                f"search {q.search!r}",
                lambda q=q: openfda.search_records(self.client, q.search, limit=q.limit),
            )
            self._deliver_search("openfda", q.search, records)
        self.fetch_labels(spec.set_ids)

    def fetch_labels(self, set_ids: Sequence[str]) -> None:
        for chunk in chunks(list(set_ids), CHUNK):
            records = self._call(
                "openfda",
                "fetch",
                lambda chunk=chunk: openfda.fetch_records(self.client, chunk),
            )
            self._deliver_fetched("openfda", "setid", chunk, records)

    # -- enrichment ----------------------------------------------------------------------------
    def _enrich(self, records: Sequence[Record]) -> list[Record]:
        spec = self.spec
        out = list(records)
        if spec.pubmed is not None and spec.pubmed.annotations:
            out = self._with_annotations(out)
        out = self._with_updates(out)
        if spec.europepmc is not None and spec.europepmc.full_text:
            wanted = [r.pmcid for r in out if r.pmcid and r.pmcid not in self._full_text_done]
            wanted = [p for p in dict.fromkeys(wanted) if not _is_full_text_of(out, p)]
            self.fetch_full_texts(wanted)
        return out

    def _with_annotations(self, records: list[Record]) -> list[Record]:
        pubmed_records = {r.record_id: r for r in records if r.source == "pubmed" and r.pmid}
        if not pubmed_records:
            return records
        pmids = [r.pmid for r in pubmed_records.values() if r.pmid]
        found: dict[str, list[Annotation]] | None = self._call(
            "pubtator3",
            "annotations",
            lambda: pubtator3.fetch_annotations(self.client, pmids, records=pubmed_records),
        )
        if found is None:
            return records
        annotated = [rid for rid in found if rid in pubmed_records]
        self.sink.step("pubtator3", "annotations", len(annotated), f"{len(pmids)} PMIDs asked")
        return [
            r.model_copy(update={"annotations": found[r.record_id]})
            if r.record_id in found and r.record_id in pubmed_records
            else r
            for r in records
        ]

    def _with_updates(self, records: list[Record]) -> list[Record]:
        spec = self.spec
        if spec.crossref is None or not spec.crossref.updates:
            return records
        cache = self._doi_cache
        if len(cache) > DOI_CACHE:
            cache.clear()
        out: list[Record] = []
        for record in records:
            doi = record.doi
            if not doi:
                out.append(record)
                continue
            key = doi.lower()
            if key not in cache:
                cache[key] = self._call(
                    "crossref",
                    f"updates {doi}",
                    lambda doi=doi: crossref.fetch_update_relations(self.client, doi),
                )
                if cache[key] is not None:
                    self.sink.step("crossref", "updates", 1, doi)
            relations = cache[key]
            out.append(crossref.apply_relations(record, relations) if relations else record)
        return out

    # -- refresh ------------------------------------------------------------------------------
    def refresh(self, unseen: dict[str, list[str]]) -> HarvestOutcome:
        """Re-fetch records of the lineage this harvest did not meet, by id.

        Records found again are delivered like any other; those upstream no longer returns
        end up in ``outcome.missing``. Records of a scheme with no by-id look-up are left as
        they are.
        """
        for source, record_ids in unseen.items():
            by_scheme: dict[str, list[str]] = {}
            for rid in record_ids:
                scheme, _, ident = rid.partition(":")
                by_scheme.setdefault(scheme, []).append(ident)
            self.progress.note(f"{source}: re-checking {len(record_ids)} earlier record(s)")
            for scheme, idents in by_scheme.items():
                self._refresh_scheme(source, scheme, idents)
        return self.outcome

    def _refresh_scheme(self, source: str, scheme: str, idents: list[str]) -> None:
        if source == "pubmed" and scheme == "pmid":
            self.fetch_pubmed(idents)
        elif source == "europepmc" and scheme == "ppr":
            self.fetch_preprints(idents)
        elif source == "europepmc" and scheme == "pmcid":
            self.fetch_full_texts(idents)
        elif source == "clinicaltrials" and scheme == "nct":
            self.fetch_trials(idents)
        elif source == "openfda" and scheme == "setid":
            self.fetch_labels(idents)


def _is_full_text_of(records: Sequence[Record], pmcid: str) -> bool:
    return any(r.record_id == f"pmcid:{pmcid}" for r in records)
