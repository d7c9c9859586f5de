"""Harvest a corpus spec: every registered source it names, through one loop, enriched.

The sources are plug-ins (:mod:`pipeline.sources`, :class:`pipeline.sources.base.Source`);
the harvest knows none of them by name. For each source the spec harvests (in the order of
their ``rank``: PubMed, Europe PMC, ClinicalTrials.gov, openFDA, Crossref): its searches
first (:class:`~pipeline.sources.base.Search`: records, or ids to fetch), then explicit ids
and the ids its searches found, per scheme (:class:`~pipeline.sources.base.ById`: PMIDs;
preprint ids and PMCIDs; NCT ids; set ids; DOIs), fetched in chunks of :data:`CHUNK` so
memory does not grow with the corpus. Every chunk is enriched before it is handed to the
:class:`Sink`, by each source whose :class:`~pipeline.sources.base.Enrichment` the spec
enables (the harvest is their :class:`~pipeline.sources.base.EnrichContext`):

* PubMed records get their PubTator3 annotations (``[pubmed] annotations = true``);
* every record with a DOI gets Crossref's update notices as relations and flags
  (``[crossref] updates = true``, via :func:`pipeline.sources.crossref.apply_relations`),
  asked for :data:`~pipeline.sources.crossref.UPDATES_BATCH` DOIs at a time (one
  ``updates:`` filter request each, :func:`~pipeline.sources.crossref.fetch_update_notices`);
  a batch that fails is one listed failure naming every DOI in it, and each of its records
  is delivered incomplete (below);
* every PMCID met gets its Europe PMC open-access full text as a ``pmcid:`` record
  (``[europepmc] full_text = true``).

With ``jobs`` above 1 the enrichments that change records run on worker threads, chunk
after chunk, while the harvest's thread fetches the next chunks and the sources after
(:mod:`pipeline.harvest_pipeline`); every effect is replayed in order on the harvest's
thread, so the sink sees the very calls of ``jobs = 1`` and every rule below holds as is.

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
  source's by-id fetch is asked for no more ids than it sends in one request — for
  :data:`LINEAGE_CONTROLS` fewer when the lineage holds some of them (room for the controls
  below; a first build's requests are whole). An answer
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
* a source that lists everything it holds (a :class:`~pipeline.sources.base.Listing`: the
  ``[local]`` folder) is its own by-id answer: the lineage's records of it that a complete
  listing does not name are missing (withdrawn by the build) in :meth:`Harvester.refresh`,
  and no others; a record the listing names that failed to read keeps its last version (a
  listed failure), and a listing that failed or is not complete withdraws nothing;
* ids whose by-id answer failed (a failed request, a suspicious answer) are *unanswered*:
  the refresh does not ask for them again (they are carried, as their failure says);
* every failure reported (to the sink, or raised when ``strict``) has its message and
  advice passed through the client's redactor first: a body that echoes the contact e-mail
  or an API key never carries it into the manifest, the log or the terminal.
"""

from __future__ import annotations

from collections.abc import Callable, Collection, Iterable, Iterator, Sequence
from contextlib import contextmanager
from typing import TYPE_CHECKING, Any, TypeVar

import httpx

from pipeline import effects
from pipeline.errors import HarvestError, ParseError, SuspiciousAnswerError
from pipeline.harvest_pipeline import DeferredProgress, DeferredSink, Pipeline, stages_for
from pipeline.harvest_protocols import HarvestOutcome, LineageView, NoLineage, Progress, Sink
from pipeline.http import HttpClient
from pipeline.records import Record
from pipeline.sources import names
from pipeline.sources import source as registered
from pipeline.sources.base import Listing

if TYPE_CHECKING:
    from pipeline.harvest_spec import CorpusSpec
    from pipeline.sources.base import ById, Search, Source

CHUNK = 1000  # records fetched, enriched and written together
LINEAGE_CONTROLS = 3  # lineage ids asked beside an empty answer when this harvest has no control
T = TypeVar("T")


FetchByIds = Callable[[list[str]], list[Record]]
Answer = tuple[list[Record], set[str]]  # the records of one answer, the ids refused in it


def chunks(items: Sequence[T], size: int) -> Iterator[list[T]]:
    for start in range(0, len(items), size):
        yield list(items[start : start + size])


def _record_id(record: Record) -> str:
    return record.record_id


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
        jobs: int = 1,
    ) -> None:
        """``refused``: the ids of the records the parsers refused, one entry per refusal in
        the order they happened (a list the caller appends to as the client reports them).
        Only those refused during an answer count for that answer: upstream answered with
        them, so they are neither missing nor suspicious there. ``jobs``: the threads the
        harvest may use (above 1, each chunk's enrichment runs on its own threads while the
        next chunks are fetched: :mod:`pipeline.harvest_pipeline`; 1: one step at a time)."""
        self.spec = spec
        self.client = client
        self._sink = sink
        self.sink: Sink = DeferredSink(sink)  # kept with its chunk in a pipelined harvest
        self.progress: Progress = DeferredProgress(progress)
        self.jobs = max(1, jobs)
        self._pipeline: Pipeline | None = None
        self.strict = strict
        self.lineage: LineageView = lineage or NoLineage()
        self.outcome = HarvestOutcome()
        self._done: set[tuple[str, str, str]] = set()  # (source, scheme, id) fetched one by one
        self._memo: dict[str, dict[str, Any]] = {}  # each enrichment's state (caches)
        self._controls: dict[tuple[str, str], str] = {}  # (source, scheme) → an id it returned
        self._refused = refused
        self._listings: dict[str, frozenset[str] | None] = {}  # source → ids; None: incomplete
        enriching = [s for s in map(registered, names()) if s.enrichment is not None]
        self._enrichers = [
            s
            for adds in (False, True)  # those that change records, then those that add some
            for s in enriching
            if s.enrichment is not None
            and s.enrichment.adds_records is adds
            and s.enrichment.enabled(spec)
        ]

    # -- plumbing (also the EnrichContext of the sources' enrichments) -------------------------
    def call(self, source: str, step: str, call: Callable[[], T]) -> T | None:
        """Run one request-level call; report a failure instead of raising (unless strict)."""
        try:
            return call()
        except (HarvestError, ParseError) as error:
            self._fail(source, step, error)
            return None

    def step(self, source: str, step: str, count: int, detail: str) -> None:
        self.sink.step(source, step, count, detail)

    def memo(self, source: str) -> dict[str, Any]:
        return self._memo.setdefault(source, {})

    def fan_out(self, source: str, calls: Sequence[Callable[[], T]]) -> list[T]:
        """``calls`` to ``source``'s host, as many at once as it allows in flight when the
        harvest may use threads (``jobs`` above 1), else one after another; results and
        effects in their order (:func:`pipeline.effects.fan_out`)."""
        host = httpx.URL(self.client.settings.base_url(source)).host if self.jobs > 1 else ""
        width = self.client.limiter.inflight.limit(host) if host else 1
        return effects.fan_out(calls, width)

    def _answer(self, source: str, step: str, fetch: FetchByIds, ids: list[str]) -> Answer | None:
        """One by-id request: its records and the ids the parsers refused during it (None: it
        failed, reported)."""
        refused = effects.refused_here()  # this thread's own, when its effects are deferred
        refused = self._refused if refused is None else refused
        mark = len(refused)
        records = self.call(source, step, lambda: fetch(ids))
        if records is None:
            return None
        return records, set(refused[mark:])

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
        if not records:
            return
        if self._pipeline is not None:
            self._pipeline.submit(source, records, hollow)  # enriched on the stages' threads
            return
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
        with self._pipelined():
            for plugin in sorted(map(registered, names()), key=lambda s: s.rank):
                options = spec.options(plugin.name)
                if options is not None:
                    self._harvest(plugin, options)
        return self.outcome

    @contextmanager
    def _pipelined(self) -> Iterator[None]:
        """Every chunk delivered inside goes through a :class:`Pipeline` (``jobs`` above 1,
        and enrichments to run: :mod:`pipeline.harvest_pipeline`), else at once."""
        stages = stages_for(self._enrichers, self.jobs)
        if not stages:
            yield
            return
        adders = [s for s in self._enrichers if s.enrichment and s.enrichment.adds_records]
        with Pipeline(self, self._sink, stages, adders=adders) as pipeline:
            self._pipeline = pipeline
            try:
                yield
            finally:
                self._pipeline = None

    def _harvest(self, plugin: Source, options: Any) -> None:
        """One source's searches, then its ids by scheme (module docstring)."""
        name = plugin.name
        if not plugin.counts_ids:
            self.progress.start(name, None)
        searches = plugin.searches(options)
        found: dict[str, dict[str, None]] = {s.gives: {} for s in searches if s.gives}
        for search in searches:
            result = self.call(name, search.step, lambda s=search: s.run(self.client))
            if search.lists or isinstance(result, Listing):
                self._listed(name, search, result)
                continue
            if not isinstance(result, Iterator):
                self._found(plugin, search, result, found)
                continue
            self._pages(plugin, search, result, found)
        for scheme, ids in plugin.ids(options).items():
            wanted = found.pop(scheme, None)
            if wanted is not None or ids:
                asked: dict[str, None] = {**(wanted or {}), **dict.fromkeys(ids)}
                self.fetch(name, scheme, list(asked))

    def _pages(
        self,
        plugin: Source,
        search: Search,
        pages: Iterator[Sequence[Any]],
        found: dict[str, dict[str, None]],
    ) -> None:
        """A search answered page by page: each page delivered as it comes (a failure stops
        the search, reported; what came before it stays delivered)."""
        while (page := self.call(plugin.name, search.step, lambda: next(pages, None))) is not None:
            self._found(plugin, search, page, found)

    def _found(
        self,
        plugin: Source,
        search: Search,
        result: Sequence[Any] | None,
        found: dict[str, dict[str, None]],
    ) -> None:
        """What one search (or one page of it) answered: records are delivered, ids noted."""
        name = plugin.name
        records = [r for r in result or () if isinstance(r, Record)]
        if search.gives is None or records:  # a search may answer records (a large one)
            if plugin.counts_ids and records:
                self.progress.start(name, None)  # its total in ids comes with its fetch
            self._deliver_search(name, search.shown, records if result is not None else None)
        elif result is not None:
            self.sink.step(name, "search", len(result), search.shown)
            found[search.gives].update(dict.fromkeys(result))

    def fetch(self, name: str, scheme: str, ids: Sequence[str]) -> None:
        """Fetch, enrich and deliver records of ``name`` by id; note the ids gone upstream."""
        plugin = registered(name)
        by_id = plugin.by_id[scheme]
        if plugin.counts_ids:
            self.progress.start(name, len(ids))
        for chunk in chunks(list(ids), by_id.chunk or CHUNK):
            self._fetch_by_id(plugin, scheme, by_id, chunk)

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

    def _fetch_by_id(self, plugin: Source, scheme: str, by_id: ById, asked: list[str]) -> None:
        """Fetch records by id and deliver them; note the ids positively gone as missing.

        ``by_id.per_request`` is the number of ids the source puts in one HTTP request; its
        fetch is asked for fewer at a time when the lineage holds some of ``asked`` (room for
        the controls of a second asking, :meth:`_room`), so each answer judged is one
        request's: an empty request beside answered ones is no evidence about its own ids.
        Progress advances by the records delivered, or by the ids asked
        (a source whose total was announced in ids: ``counts_ids``)."""
        records: list[Record] = []
        room = self._room(plugin.name, scheme, by_id, asked)
        for ids in chunks(asked, by_id.per_request - room):
            records.extend(self._judged(plugin.name, scheme, by_id, ids))
        self._deliver(plugin.name, records, self._hollow(plugin.name, records))
        self.progress.advance(plugin.name, len(asked) if plugin.counts_ids else len(records))

    def _room(self, source: str, scheme: str, by_id: ById, asked: list[str]) -> int:
        """Ids a request of ``asked`` leaves free for the controls of a second asking: only
        asked again when the lineage holds some of them (:meth:`_confirm_absent`), so none
        when it holds none of these (a first build's every request is a whole one)."""
        standing = self._held_as(source, by_id, [f"{scheme}:{i}" for i in asked])
        return LINEAGE_CONTROLS if self.lineage.live(standing) else 0

    def _judged(self, source: str, scheme: str, by_id: ById, asked: list[str]) -> list[Record]:
        """The records of one by-id answer, its evidence noted (module docstring)."""
        wanted = {f"{scheme}:{i}": i for i in asked}
        fetch: FetchByIds = lambda ids: by_id.fetch(self.client, ids)  # noqa: E731
        answer = self._answer(source, by_id.step, fetch, asked)
        if answer is None:
            self.outcome.unanswered.update(self._held_as(source, by_id, wanted))
            return []
        records, refused = answer
        answers = by_id.answers or _record_id
        got = [r for r in records if answers(r) in wanted]
        answered = {answers(r) for r in got} | (refused & wanted.keys())  # refused: came back
        absent = [rid for rid in wanted if rid not in answered]
        if got:
            self._controls[(source, scheme)] = wanted[answers(got[0])]
        if answered:  # the same answer held the others
            self.outcome.missing.update(self._held_as(source, by_id, absent))
        elif absent:
            return self._confirm_absent(source, scheme, by_id, wanted, fetch)
        return records

    def _confirm_absent(
        self, source: str, scheme: str, by_id: ById, wanted: dict[str, str], fetch: FetchByIds
    ) -> list[Record]:
        """An answer with none of ``wanted``: evidence only if a control id comes back with them.

        Returns what the second asking found of ``wanted`` (an answer that came back empty
        once and whole the second time is delivered). When nothing is proven, every id of
        ``wanted`` is unanswered.
        """
        step = by_id.step
        standing = self._held_as(source, by_id, wanted)  # the ids the asked ones stand for
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
        answers = by_id.answers or _record_id
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
        self.outcome.missing.update(self._held_as(source, by_id, gone))
        return [r for r in again if answers(r) in wanted]

    def _held_as(self, source: str, by_id: ById, keys: Collection[str]) -> set[str]:
        """The record ids that stand for asked ``keys`` (``scheme:id``): the keys themselves,
        and for PMCIDs also the lineage's records carrying them (module docstring)."""
        ids = set(keys)
        if by_id.carried and ids:
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

    def fetch_each(self, source: str, scheme: str, ids: Iterable[str]) -> None:
        """Records of ``source`` fetched one per request (its
        :class:`~pipeline.sources.base.Single`: Europe PMC full text). No answer is never a
        withdrawal: for an id the lineage holds it is a suspicious answer (module docstring)."""
        single = registered(source).singles[scheme]
        for ident in ids:
            if (source, scheme, ident) in self._done:
                continue
            self._done.add((source, scheme, ident))
            step = f"{single.step} {ident}"
            answer = self.call(source, step, lambda i=ident: (single.fetch(self.client, i),))
            if answer is None:
                continue  # the request failed (reported)
            record = answer[0]
            if record is None:
                # Europe PMC answers 404 or an empty body alike when it has no open-access
                # text, so its silence about a text the lineage holds proves nothing
                if f"{scheme}:{ident}" in self.lineage.live([f"{scheme}:{ident}"]):
                    self._fail(
                        source,
                        step,
                        SuspiciousAnswerError(
                            f"no {single.step} for {ident}, which the lineage holds; not "
                            "taken as withdrawal"
                        ),
                    )
                continue
            self._deliver(source, [record], self._hollow(source, [record]))
            self.progress.advance(source, 1)

    # -- enrichment ----------------------------------------------------------------------------
    def _enrich(self, records: Sequence[Record]) -> tuple[list[Record], set[str]]:
        """The records enriched, and the ids of those whose enrichment failed."""
        out = list(records)
        incomplete: set[str] = set()
        for plugin in self._enrichers:
            assert plugin.enrichment is not None
            out, failed = plugin.enrichment.enrich(self, out)
            incomplete |= failed
        return out, incomplete

    # -- refresh ------------------------------------------------------------------------------
    def refresh(self, unseen: dict[str, list[str]]) -> HarvestOutcome:
        """Re-fetch records of the lineage this harvest did not meet, by id.

        Records found again are delivered like any other; those upstream no longer returns
        end up in ``outcome.missing``. Records of a scheme with no by-id look-up are left as
        they are, and so are those whose by-id answer failed in this harvest
        (``outcome.unanswered``: their failure is listed already, asking again would only
        fail twice). Those of a source whose complete listing does not name them are missing
        without asking (:meth:`_unlisted`).
        """
        unseen = self._unlisted(unseen)
        with self._pipelined():
            for name, ids in unseen.items():
                record_ids = [rid for rid in ids if rid not in self.outcome.unanswered]
                if not record_ids:
                    continue
                by_scheme: dict[str, list[str]] = {}
                for rid in record_ids:
                    scheme, _, ident = rid.partition(":")
                    by_scheme.setdefault(scheme, []).append(ident)
                self.progress.note(f"{name}: re-checking {len(record_ids)} earlier record(s)")
                for scheme, idents in by_scheme.items():
                    self._refresh_scheme(name, scheme, idents)
        return self.outcome

    # -- complete listings (module docstring) --------------------------------------------------
    def _listed(self, source: str, search: Search, result: object) -> None:
        """Note what a ``lists`` step answered: the ids of its :class:`Listing`, added to the
        source's others; anything else (the step failed, reported) leaves the source without
        a complete listing for the rest of this harvest."""
        if not isinstance(result, Listing) or not search.lists:
            self._listings[source] = None
            return
        self.sink.step(source, "listing", len(result.record_ids), search.shown)
        if source not in self._listings:
            self._listings[source] = result.record_ids
        elif (held := self._listings[source]) is not None:
            self._listings[source] = held | result.record_ids

    def _unlisted(self, unseen: dict[str, list[str]]) -> dict[str, list[str]]:
        """Note as missing the ``unseen`` lineage records of each source with a complete
        listing that it does not name; the rest of ``unseen``, to refresh as usual. A source
        with a listing has nothing left to refresh: a record it names and did not deliver
        failed to read (a listed failure), and keeps its last version."""
        rest: dict[str, list[str]] = {}
        for name, ids in unseen.items():
            listed = self._listings.get(name)
            if listed is None:
                rest[name] = ids
            else:
                self.outcome.missing.update(rid for rid in ids if rid not in listed)
        return rest

    def _refresh_scheme(self, name: str, scheme: str, idents: list[str]) -> None:
        if name not in names():
            return
        plugin = registered(name)
        if scheme in plugin.singles:
            self.fetch_each(name, scheme, idents)
        elif scheme in plugin.by_id and plugin.by_id[scheme].refresh:
            self.fetch(name, scheme, idents)
