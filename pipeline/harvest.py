"""Harvest a corpus spec: call each source's harvest functions, enrich, hand batches on.

For each source of the spec (in the order PubMed, Europe PMC, ClinicalTrials.gov, openFDA,
Crossref): queries first, then explicit ids (PMIDs; preprint ids and PMCIDs; NCT ids; set ids;
DOIs), fetched in chunks of :data:`CHUNK` so memory does not grow with the corpus. Every
chunk is enriched before it is handed to the :class:`Sink`:

* PubMed records get their PubTator3 annotations (``[pubmed] annotations = true``);
* every record with a DOI gets Crossref's update notices as relations and flags
  (``[crossref] updates = true``, via :func:`pipeline.sources.crossref.apply_relations`),
  asked for :data:`~pipeline.sources.crossref.UPDATES_BATCH` DOIs at a time (one
  ``updates:`` filter request each, :func:`~pipeline.sources.crossref.fetch_update_notices`);
  a batch that fails is one listed failure naming every DOI in it, and each of its records
  is delivered incomplete (below);
* every PMCID met gets its Europe PMC open-access full text as a ``pmcid:`` record
  (``[europepmc] full_text = true``).

What a harvest talks to — the :class:`Sink` it delivers to, the :class:`Progress` display,
the :class:`LineageView` it asks, the :class:`HarvestOutcome` it returns — is in
:mod:`pipeline.harvest_protocols` (imported here, so ``pipeline.harvest.Sink`` is the same).

A failed request (a :class:`~pipeline.errors.HarvestError` once the retry policy gives up,
or a body its parser rejects) is reported to the sink and the harvest goes on, unless
``strict``. :func:`refresh` re-fetches records of the lineage that this harvest did not meet,
so a record gone upstream can be told from one that merely fell out of a query.

An outage never rewrites history (the rules the build relies on):

* a record whose enrichment failed is delivered *incomplete* (its id in ``incomplete``): the
  build carries the lineage's state of it unchanged, and a record new to the lineage is
  written with the flags the failed step decides unknown (Crossref's notices: ``retracted``
  and ``expression_of_concern`` become None unless already True), never False;
* a record is *missing* (withdrawn by the build) only on positive evidence: a by-id request
  that answered with other records of the same request but not this one (a record the
  parser refused *in that answer* came back too). Each request is judged on its own: a
  source's by-id fetch is asked for fewer ids than it sends in one request. An answer
  with none of the records asked for, where the lineage holds some of them, is asked again
  beside a *control* id of the same source and kind: one this harvest already received,
  else up to :data:`LINEAGE_CONTROLS` the lineage holds (live, not asked now); only when a
  control comes back are the others missing, otherwise the answer is a
  :class:`~pipeline.errors.SuspiciousAnswerError` (a listed failure) and nothing is
  withdrawn. An empty full text for a PMCID the lineage holds is such a failure too, and so
  is a record that comes back without a single passage where the lineage's version has
  some (it is delivered incomplete). Answers are judged the moment they arrive, before any
  other step, so the build can drop exactly the failed answer from its resume cache;
* a PMCID is answered by the Europe PMC record that carries it (a ``pmid:`` record for an
  article PubMed holds too, else ``pmcid:``): one that went missing withdraws the records of
  the lineage carrying that PMCID (:meth:`~pipeline.harvest_protocols.LineageView.
  carrying_pmcids`), a DOI by its ``doi:`` record, like any other id;
* ids whose by-id answer failed (a failed request, a suspicious answer) are *unanswered*:
  the refresh does not ask for them again (they are carried, as their failure says);
* every failure reported (to the sink, or raised when ``strict``) has its message and
  advice passed through the client's redactor first: a body that echoes the contact e-mail
  or an API key never carries it into the manifest, the log or the terminal.
"""

from __future__ import annotations

from collections.abc import Callable, Collection, Iterable, Iterator, Sequence
from typing import TypeVar

from pipeline.errors import HarvestError, ParseError, SuspiciousAnswerError
from pipeline.harvest_protocols import HarvestOutcome, LineageView, NoLineage, Progress, Sink
from pipeline.http import HttpClient
from pipeline.records import Annotation, Record, Relation
from pipeline.snapshot.spec import CorpusSpec
from pipeline.sources import clinicaltrials, crossref, europepmc, openfda, pubmed, pubtator3

CHUNK = 1000  # records fetched, enriched and written together
EPMC_ID_CHUNK = 25  # preprint ids or PMCIDs OR-ed into one Europe PMC query
DOI_CACHE = 4096  # DOIs whose Crossref notices are remembered (a pmid and its pmcid share one)
LINEAGE_CONTROLS = 3  # lineage ids asked beside an empty answer when this harvest has no control
T = TypeVar("T")


FetchByIds = Callable[[list[str]], list[Record]]
Answer = tuple[list[Record], set[str]]  # the records of one answer, the ids refused in it


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
        lineage: LineageView | None = None,
        refused: Sequence[str] = (),
    ) -> None:
        """``refused``: the ids of the records the parsers refused, one entry per refusal in
        the order they happened (a list the caller appends to as the client reports them).
        Only those refused during an answer count for that answer: upstream answered with
        them, so they are neither missing nor suspicious there."""
        self.spec = spec
        self.client = client
        self.sink = sink
        self.progress = progress
        self.strict = strict
        self.lineage: LineageView = lineage or NoLineage()
        self.outcome = HarvestOutcome()
        self._full_text_done: set[str] = set()
        self._doi_cache: dict[str, list[Relation] | None] = {}  # recent DOIs' notices
        self._controls: dict[tuple[str, str], str] = {}  # (source, scheme) → an id it returned
        self._refused = refused

    # -- plumbing -----------------------------------------------------------------------------
    def _call(self, source: str, step: str, call: Callable[[], T]) -> T | None:
        """Run one request-level call; report a failure instead of raising (unless strict)."""
        try:
            return call()
        except (HarvestError, ParseError) as error:
            self._fail(source, step, error)
            return None

    def _answer(self, source: str, step: str, fetch: FetchByIds, ids: list[str]) -> Answer | None:
        """One by-id request: its records and the ids the parsers refused during it (None: it
        failed, reported)."""
        mark = len(self._refused)
        records = self._call(source, step, lambda: fetch(ids))
        if records is None:
            return None
        return records, set(self._refused[mark:])

    def _fail(self, source: str, step: str, error: HarvestError | ParseError) -> None:
        """Report a failure, redacted (module docstring), and raise it when strict."""
        redact = self.client.redact
        error.message = redact(error.message)
        error.advice = redact(error.advice) if error.advice is not None else None
        error.args = (error.message, *error.args[1:])
        self.sink.failure(source, redact(step), error)
        if self.strict:
            raise error

    def _deliver(
        self, source: str, records: Sequence[Record], hollow: Collection[str] = ()
    ) -> None:
        if records:
            enriched, incomplete = self._enrich(records)
            self.sink.records(source, enriched, incomplete=incomplete | set(hollow))

    def _hollow(self, source: str, records: Sequence[Record]) -> set[str]:
        """Report the records that came back emptied (module docstring); their ids."""
        emptied = self.lineage.emptied(records)
        for rid, held in emptied.items():
            self._fail(
                source,
                f"record {rid}",
                SuspiciousAnswerError(
                    f"{rid} came back without a passage where the lineage's {held}; "
                    "not taken as a new version"
                ),
            )
        return set(emptied)

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
        if spec.crossref is not None and spec.crossref.dois:
            self.fetch_works(spec.crossref.dois)
        return self.outcome

    def _deliver_search(self, source: str, query: str, records: Sequence[Record] | None) -> None:
        """Deliver the records a query found, in chunks (None: the search failed, logged)."""
        if records is None:
            return
        for record in records:  # upstream returned them: controls for its empty answers
            scheme, _, ident = record.record_id.partition(":")
            self._controls.setdefault((source, scheme), ident)
        hollow = self._hollow(source, records)
        self.sink.step(source, "search", len(records), query)
        for chunk in chunks(records, CHUNK):
            self._deliver(source, chunk, hollow)
            self.progress.advance(source, len(chunk))

    def _fetch_by_id(
        self,
        source: str,
        scheme: str,
        step: str,
        asked: Sequence[str],
        fetch: FetchByIds,
        *,
        per_request: int,
        count_asked: bool = False,
    ) -> None:
        """Fetch records by id and deliver them; note the ids positively gone as missing.

        ``per_request`` is the number of ids the source puts in one HTTP request; ``fetch`` is
        asked for fewer at a time (room for the controls of a second asking), so each answer
        judged is one request's: an empty request beside answered ones is no evidence about
        its own ids. Progress advances by the records delivered, or by the ids asked
        (``count_asked``: a source whose total was announced in ids)."""
        records: list[Record] = []
        for ids in chunks(asked, per_request - LINEAGE_CONTROLS):
            records.extend(self._judged(source, scheme, step, ids, fetch))
        self._deliver(source, records, self._hollow(source, records))
        self.progress.advance(source, len(asked) if count_asked else len(records))

    def _judged(
        self, source: str, scheme: str, step: str, asked: list[str], fetch: FetchByIds
    ) -> list[Record]:
        """The records of one by-id answer, its evidence noted (module docstring)."""
        wanted = {f"{scheme}:{i}": i for i in asked}
        answer = self._answer(source, step, fetch, asked)
        if answer is None:
            self.outcome.unanswered.update(self._held_as(source, scheme, wanted))
            return []
        records, refused = answer
        answers = _ANSWERS.get((source, scheme), _record_id)
        got = [r for r in records if answers(r) in wanted]
        answered = {answers(r) for r in got} | (refused & wanted.keys())  # refused: came back
        absent = [rid for rid in wanted if rid not in answered]
        if got:
            self._controls[(source, scheme)] = wanted[answers(got[0])]
        if answered:  # the same answer held the others
            self.outcome.missing.update(self._held_as(source, scheme, absent))
        elif absent:
            return self._confirm_absent(source, scheme, step, wanted, fetch)
        return records

    def _confirm_absent(
        self, source: str, scheme: str, step: str, wanted: dict[str, str], fetch: FetchByIds
    ) -> list[Record]:
        """An answer with none of ``wanted``: evidence only if a control id comes back with them.

        Returns what the second asking found of ``wanted`` (an answer that came back empty
        once and whole the second time is delivered). When nothing is proven, every id of
        ``wanted`` is unanswered.
        """
        standing = self._held_as(source, scheme, wanted)  # the ids the asked ones stand for
        held = self.lineage.live(standing)
        if not held:
            return []  # the lineage holds none of them: there is nothing to withdraw
        shown = ", ".join(sorted(held)[:3]) + (", …" if len(held) > 3 else "")
        said = (
            f"answered none of the {len(wanted)} records asked for by id, {len(held)} of which "
            f"the lineage holds ({shown})"
        )
        controls, whose = self._control_ids(source, scheme, wanted)
        if not controls:
            self.outcome.unanswered.update(standing)
            self._fail(
                source,
                step,
                SuspiciousAnswerError(
                    f"{said}; not taken as withdrawal: no other {scheme} record answered in "
                    "this harvest or is held by the lineage to check the answer against"
                ),
            )
            return []
        named = ", ".join(f"{scheme}:{c}" for c in controls)
        answer = self._answer(
            source, f"{step} (asked again with {named})", fetch, [*controls, *wanted.values()]
        )
        if answer is None:
            self.outcome.unanswered.update(standing)
            return []
        again, refused = answer
        answers = _ANSWERS.get((source, scheme), _record_id)
        returned = {answers(r) for r in again} | refused
        back = [c for c in controls if f"{scheme}:{c}" in returned]
        if back:
            self._controls.setdefault((source, scheme), back[0])
        else:
            self.outcome.unanswered.update(standing)
            self._fail(
                source,
                step,
                SuspiciousAnswerError(
                    f"{said}, nor {'any of ' if len(controls) > 1 else ''}{named}, {whose}; "
                    "not taken as withdrawal"
                ),
            )
            return []
        gone = [rid for rid in wanted if rid not in returned]
        self.outcome.missing.update(self._held_as(source, scheme, gone))
        return [r for r in again if answers(r) in wanted]

    def _held_as(self, source: str, scheme: str, keys: Collection[str]) -> set[str]:
        """The record ids that stand for asked ``keys`` (``scheme:id``): the keys themselves,
        and for PMCIDs also the lineage's records carrying them (module docstring)."""
        ids = set(keys)
        if (source, scheme) == ("europepmc", "pmcid") and ids:
            ids |= self.lineage.carrying_pmcids(source, [k.partition(":")[2] for k in ids])
        return ids

    def _control_ids(
        self, source: str, scheme: str, wanted: dict[str, str]
    ) -> tuple[list[str], str]:
        """Ids (without the scheme) to ask beside ``wanted``, and where they come from: one
        this harvest received from ``source``, else some the lineage holds (module doc)."""
        control = self._controls.get((source, scheme))
        if control is not None:
            return [control], "which it returned earlier in this harvest"
        exclude = wanted.keys() | self.outcome.missing | self.outcome.unanswered
        held = self.lineage.controls(source, scheme, exclude, LINEAGE_CONTROLS)
        return [rid.partition(":")[2] for rid in held], "which the lineage holds"

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
            self._fetch_by_id(
                "pubmed",
                "pmid",
                "efetch",
                chunk,
                lambda ids: pubmed.fetch_records(self.client, ids),
                per_request=pubmed.EFETCH_BATCH,
                count_asked=True,
            )

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
        self.fetch_pmcids(self.spec.europepmc.pmcids)

    def fetch_preprints(self, ppr_ids: Sequence[str]) -> None:
        """Europe PMC preprints by id (``EXT_ID:… AND SRC:PPR``)."""

        def fetch(ids: list[str]) -> list[Record]:
            query = "(" + " OR ".join(f"EXT_ID:{i}" for i in ids) + ") AND SRC:PPR"
            return europepmc.search_records(self.client, query, limit=len(ids))

        for chunk in chunks(list(ppr_ids), EPMC_ID_CHUNK):
            self._fetch_by_id(
                "europepmc", "ppr", "preprints", chunk, fetch, per_request=EPMC_ID_CHUNK
            )

    def fetch_pmcids(self, pmcids: Sequence[str]) -> None:
        """Europe PMC works by PMCID (``PMCID:… OR …``): the record carrying each PMCID."""

        def fetch(ids: list[str]) -> list[Record]:
            query = " OR ".join(f"PMCID:{i}" for i in ids)
            return europepmc.search_records(self.client, query, limit=len(ids))

        for chunk in chunks(list(pmcids), EPMC_ID_CHUNK):
            self._fetch_by_id(
                "europepmc", "pmcid", "pmcids", chunk, fetch, per_request=EPMC_ID_CHUNK
            )

    def fetch_works(self, dois: Sequence[str]) -> None:
        """Crossref works by DOI (``filter=doi:…,doi:…``, ORed) as ``doi:`` records."""
        self.progress.start("crossref", len(dois))
        for chunk in chunks(list(dois), CHUNK):
            self._fetch_by_id(
                "crossref",
                "doi",
                "works",
                chunk,
                lambda ids: crossref.fetch_works(self.client, ids),
                per_request=crossref.DOI_BATCH,
                count_asked=True,
            )

    def fetch_full_texts(self, pmcids: Iterable[str]) -> None:
        """Europe PMC full text of PMCIDs (``pmcid:`` records). No text is never a withdrawal:
        for a PMCID the lineage holds it is a suspicious answer (module docstring)."""
        for pmcid in pmcids:
            if pmcid in self._full_text_done:
                continue
            self._full_text_done.add(pmcid)
            step = f"full text {pmcid}"
            answer = self._call(
                "europepmc", step, lambda p=pmcid: (europepmc.fetch_full_text(self.client, p),)
            )
            if answer is None:
                continue  # the request failed (reported)
            record = answer[0]
            if record is None:
                # Europe PMC answers 404 or an empty body alike when it has no open-access
                # text, so its silence about a text the lineage holds proves nothing
                if f"pmcid:{pmcid}" in self.lineage.live([f"pmcid:{pmcid}"]):
                    self._fail(
                        "europepmc",
                        step,
                        SuspiciousAnswerError(
                            f"no full text for {pmcid}, which the lineage holds; not taken as "
                            "withdrawal"
                        ),
                    )
                continue
            hollow = self._hollow("europepmc", [record])
            updated, incomplete = self._with_updates([record])
            self.sink.records("europepmc", updated, incomplete=incomplete | hollow)
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
            self._fetch_by_id(
                "clinicaltrials",
                "nct",
                "fetch",
                chunk,
                lambda ids: clinicaltrials.fetch_records(self.client, ids),
                per_request=clinicaltrials.ID_BATCH,
            )

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
            self._fetch_by_id(
                "openfda",
                "setid",
                "fetch",
                chunk,
                lambda ids: openfda.fetch_records(self.client, ids),
                per_request=openfda.ID_BATCH,
            )

    # -- enrichment ----------------------------------------------------------------------------
    def _enrich(self, records: Sequence[Record]) -> tuple[list[Record], set[str]]:
        """The records enriched, and the ids of those whose enrichment failed."""
        spec = self.spec
        out = list(records)
        incomplete: set[str] = set()
        if spec.pubmed is not None and spec.pubmed.annotations:
            out = self._with_annotations(out, incomplete)
        out, failed = self._with_updates(out)
        incomplete |= failed
        if spec.europepmc is not None and spec.europepmc.full_text:
            wanted = [r.pmcid for r in out if r.pmcid and r.pmcid not in self._full_text_done]
            wanted = [p for p in dict.fromkeys(wanted) if not _is_full_text_of(out, p)]
            self.fetch_full_texts(wanted)
        return out, incomplete

    def _with_annotations(self, records: list[Record], incomplete: set[str]) -> list[Record]:
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
            incomplete.update(pubmed_records)
            return records
        annotated = [rid for rid in found if rid in pubmed_records]
        self.sink.step("pubtator3", "annotations", len(annotated), f"{len(pmids)} PMIDs asked")
        return [
            r.model_copy(update={"annotations": found[r.record_id]})
            if r.record_id in found and r.record_id in pubmed_records
            else r
            for r in records
        ]

    def _with_updates(self, records: list[Record]) -> tuple[list[Record], set[str]]:
        """Crossref's notices merged in; the ids whose notices could not be fetched."""
        spec = self.spec
        if spec.crossref is None or not spec.crossref.updates:
            return records, set()
        cache = self._doi_cache
        if len(cache) > DOI_CACHE:
            cache.clear()
        dois = dict.fromkeys(r.doi.lower() for r in records if r.doi)
        asked = [d for d in dois if d not in cache]
        plain = [d for d in asked if "," not in d]
        odd = [[d] for d in asked if "," in d]  # no filter can name it: it fails on its own
        for batch in [*chunks(plain, crossref.UPDATES_BATCH), *odd]:
            found = self._call(
                "crossref",
                f"updates {', '.join(batch)}",
                lambda batch=batch: crossref.fetch_update_notices(self.client, batch),
            )
            for doi in batch:  # a failed batch: the notices of every DOI in it are unknown
                cache[doi] = None if found is None else found.get(doi, [])
            if found is not None:
                self.sink.step("crossref", "updates", len(batch), f"{len(batch)} DOIs asked")
        return crossref.with_notices(records, cache)

    # -- refresh ------------------------------------------------------------------------------
    def refresh(self, unseen: dict[str, list[str]]) -> HarvestOutcome:
        """Re-fetch records of the lineage this harvest did not meet, by id.

        Records found again are delivered like any other; those upstream no longer returns
        end up in ``outcome.missing``. Records of a scheme with no by-id look-up are left as
        they are, and so are those whose by-id answer failed in this harvest
        (``outcome.unanswered``: their failure is listed already, asking again would only
        fail twice).
        """
        for source, ids in unseen.items():
            record_ids = [rid for rid in ids if rid not in self.outcome.unanswered]
            if not record_ids:
                continue
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
        elif source == "crossref" and scheme == "doi":
            self.fetch_works(idents)


def _record_id(record: Record) -> str:
    return record.record_id


def _pmcid_of(record: Record) -> str:
    return f"pmcid:{record.pmcid}" if record.pmcid else record.record_id


# what a record answers, where it is not its own id: (source, scheme asked) → the asked key
_ANSWERS: dict[tuple[str, str], Callable[[Record], str]] = {("europepmc", "pmcid"): _pmcid_of}


def _is_full_text_of(records: Sequence[Record], pmcid: str) -> bool:
    return any(r.record_id == f"pmcid:{pmcid}" for r in records)
