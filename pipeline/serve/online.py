"""``citeseal serve --online``: what the snapshot cannot answer is harvested live into a child.

Rules (docs/serve.md, "--online"):

* The served snapshot stays frozen: it is only ever read (the build attaches it read-only as
  a parent). What is fetched live goes into a **child snapshot of its lineage**, in the same
  corpus folder and named as every build names its children (``<name>-<UTC stamp>.duckdb``),
  built by the build itself (:func:`pipeline.snapshot.build.build_locked`: the same harvest,
  parsers, enrichment, lineage rules, atomic write and seal) from a corpus spec made for the
  request (:func:`ids_spec`, :func:`query_spec`; the enrichment options are the served
  snapshot's own spec's).
* **Sealed before it is used.** Every live harvest ends in a sealed, verified child, and the
  server moves on to it only then (:class:`LiveServed` keeps the *head*: the served snapshot,
  then its newest child; each child's parent is the previous head, so the head carries every
  version the server ever issued a handle for). A handle is therefore never returned before
  the snapshot that verifies it is on disk, sealed: a server killed at any moment (``kill
  -9`` included) leaves every handle it issued verifiable offline, and at worst a hidden
  ``.build-*`` leftover that the next build deletes, never a half-written snapshot. There is
  nothing left to seal at shutdown, so there is no periodic seal either.
* **Triggers.** ``fetch_passages`` with a record id (pmid, pmcid, ppr, nct, setid) that the
  head does not hold harvests those ids; a search whose results are fewer than its ``limit``
  harvests that query (its limit, the chosen sources that take queries: PubMed, Europe PMC,
  ClinicalTrials.gov, openFDA), then searches again. Each query, and each id upstream did not
  return, is asked live at most once per server run.
* **Fail closed.** A live harvest in which any request failed (an outage, a 429 storm past
  the retry policy, a body the parser rejects) seals nothing and is a
  :class:`~pipeline.errors.TransientHarvestError` saying upstream is unavailable and the call
  may be retried: never a silent empty result. Each live call has a deadline
  (:data:`DEFAULT_DEADLINE`): its requests are refused past it (:class:`DeadlineTransport`) and
  the call answers that error when it passes, whatever the harvest is doing. The call's own
  deadline (:func:`pipeline.serve.calls.call_deadline`, ``CITESEAL_SERVE_DEADLINE``) bounds it
  too: the harvest stops at the lesser of the two, and a call past its own deadline is
  answered ``deadline_exceeded`` by the server (:mod:`pipeline.serve.calls`). A harvest cut
  short by either seals nothing (its requests past the deadline are refused, so the build
  fails as partial); one that had every answer before the deadline is sealed whole, kept,
  and read by the next call. Live harvests
  run one at a time (one worker thread, and the corpus folder's build lock).

Without ``--online`` none of this exists: :class:`~pipeline.serve.served.Served` has no
transport and never touches the network.
"""

from __future__ import annotations

import concurrent.futures
import dataclasses
import logging
import threading
import time
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from typing import Any

import duckdb
import httpx

from audit.duckdb_corpus import DuckDBCorpus
from audit.errors import InputError, NotInSnapshot
from audit.keys import Keyring
from pipeline.errors import PartialHarvestError, SnapshotError, TransientHarvestError
from pipeline.serve.calls import call_deadline
from pipeline.serve.served import SERVED_CHANGE, Served
from pipeline.settings import Settings
from pipeline.snapshot.build import BuildOptions, build_locked
from pipeline.snapshot.folder import corpus_lock
from pipeline.snapshot.progress import NullProgress
from pipeline.snapshot.spec import NCT, PMCID, PMID, PPR, SET_ID, CorpusSpec
from pipeline.snapshot.trust import SealPolicy, TrustedSnapshot, trust_snapshot

log = logging.getLogger("citeseal.serve")

DEFAULT_DEADLINE = 60.0
"""Seconds one live call may take, from the call to its answer (``--online-deadline``)."""
LIVE_ATTEMPTS = 3
"""At most this many attempts per live request (the build's default is more patient)."""

_ID_SECTIONS = {  # scheme → (spec section, its id list, the id's pattern)
    "pmid": ("pubmed", "ids", PMID),
    "pmcid": ("europepmc", "pmcids", PMCID),
    "ppr": ("europepmc", "ids", PPR),
    "nct": ("clinicaltrials", "ids", NCT),
    "setid": ("openfda", "set_ids", SET_ID),
}
_QUERY_SOURCES = {  # source (= its spec section) → the key of a query's text
    "pubmed": "term",
    "europepmc": "query",
    "clinicaltrials": "term",
    "openfda": "search",
}


# -- the specs (pure) --------------------------------------------------------------------------


def enrichment(parent: CorpusSpec) -> dict[str, dict[str, Any]]:
    """The enrichment options of the served snapshot's spec, per section (the same
    enrichment for what is fetched live: PubTator3, Crossref's notices, full texts)."""
    out: dict[str, dict[str, Any]] = {}
    if parent.pubmed is not None and parent.pubmed.annotations:
        out["pubmed"] = {"annotations": True}
    if parent.europepmc is not None and parent.europepmc.full_text:
        out["europepmc"] = {"full_text": True}
    if parent.crossref is not None and parent.crossref.updates:
        out["crossref"] = {"updates": True}
    return out


def live_ids(record_ids: Sequence[str]) -> list[str]:
    """The ids among ``record_ids`` that a live harvest can ask for (a known scheme and an id
    of its source's form); others are left to the service's own error."""
    out = []
    for rid in record_ids:
        scheme, _, ident = rid.partition(":")
        known = _ID_SECTIONS.get(scheme)
        if known is not None and known[2].match(ident):
            out.append(rid)
    return out


def ids_spec(parent: CorpusSpec, record_ids: Sequence[str]) -> CorpusSpec:
    """A spec that harvests exactly ``record_ids`` (all of :func:`live_ids`), enriched as
    ``parent``."""
    sections: dict[str, dict[str, Any]] = {}
    for rid in record_ids:
        scheme, _, ident = rid.partition(":")
        section, key, _ = _ID_SECTIONS[scheme]
        ids = sections.setdefault(section, {}).setdefault(key, [])
        if ident not in ids:
            ids.append(ident)
    return _spec(parent, sections)


def query_spec(parent: CorpusSpec, query: str, limit: int, sources: Sequence[str]) -> CorpusSpec:
    """A spec that harvests ``query`` (at most ``limit`` records) from each of ``sources`` that
    takes queries, enriched as ``parent``; :class:`InputError` when none does."""
    sections = {
        source: {"queries": [{_QUERY_SOURCES[source]: query, "limit": limit}]}
        for source in sources
        if source in _QUERY_SOURCES
    }
    if not sections:
        raise InputError(f"none of {', '.join(sources)} can be searched live")
    return _spec(parent, sections)


def _spec(parent: CorpusSpec, sections: dict[str, dict[str, Any]]) -> CorpusSpec:
    extra = enrichment(parent)
    data: dict[str, Any] = {"name": parent.name, "description": "fetched live by citeseal serve"}
    for section, body in sections.items():
        data[section] = {**extra.get(section, {}), **body}
    if "crossref" in extra:
        data["crossref"] = extra["crossref"]
    return CorpusSpec.model_validate(data)


# -- the transport -----------------------------------------------------------------------------


class DeadlinePassed(httpx.LocalProtocolError):
    """A live request asked for after its call's deadline: refused unsent. The client treats
    it as a request that cannot be made (never retried), so a harvest past its deadline stops
    at once instead of sleeping through its retries."""


class DeadlineTransport(httpx.BaseTransport):
    """``inner``, refusing every request once ``deadline`` (``time.monotonic()``) has passed
    (:class:`DeadlinePassed`), and shortening each request's timeouts to the time left."""

    def __init__(self, inner: httpx.BaseTransport, deadline: float) -> None:
        self.inner = inner
        self.deadline = deadline

    def handle_request(self, request: httpx.Request) -> httpx.Response:
        left = self.deadline - time.monotonic()
        if left <= 0:
            raise DeadlinePassed("the live call's deadline has passed", request=request)
        given = {"connect": None, "read": None, "write": None, "pool": None}
        given.update(request.extensions.get("timeout") or {})
        request.extensions["timeout"] = {
            name: left if value is None else min(value, left) for name, value in given.items()
        }
        return self.inner.handle_request(request)

    def close(self) -> None:
        self.inner.close()


class _Notes(NullProgress):
    """The build's progress, keeping only what failed (the harvester redacts each message)."""

    def __init__(self) -> None:
        self.failures: list[str] = []

    def note(self, message: str) -> None:
        if " failed: " in message:
            self.failures.append(message)


# -- the server's view -------------------------------------------------------------------------


class LiveServed(Served):
    """A :class:`Served` whose snapshot is the *head*: the served one, then the newest child
    sealed by a live harvest (module docstring). Every call reads the head it started with."""

    online = True

    def __init__(
        self,
        trusted: TrustedSnapshot,
        keyring: Keyring,
        *,
        policy: SealPolicy,
        settings: Settings,
        deadline: float = DEFAULT_DEADLINE,
        transport: httpx.BaseTransport | None = None,
    ) -> None:
        super().__init__(trusted, keyring)
        self.root = trusted
        self.policy = policy
        self.settings = dataclasses.replace(
            settings,
            timeout=min(settings.timeout, deadline),
            deadline=min(settings.deadline, deadline),
            max_attempts=min(settings.max_attempts, LIVE_ATTEMPTS),
        )
        self.deadline = deadline
        self.children: list[TrustedSnapshot] = []  # sealed by this server, oldest first
        self._transport = transport  # tests; else the network, per the settings
        self._retired: list[duckdb.DuckDBPyConnection] = []
        self._asked: set[tuple[str, ...]] = set()  # queries and ids already asked live
        self._live = threading.Lock()  # one decision-and-harvest at a time
        self._worker = concurrent.futures.ThreadPoolExecutor(1, thread_name_prefix="live")
        with self.cursor() as con:
            row = con.execute("SELECT value FROM meta WHERE key = 'spec'").fetchone()
        self.spec = CorpusSpec.model_validate_json(row[0]) if row and row[0] else None
        if self.spec is None or self.spec.name != trusted.manifest.name:
            raise SnapshotError(
                f"snapshot {trusted.path.name} records no corpus spec of {trusted.manifest.name}: "
                "nothing can be harvested into its lineage",
                advice="serve it without --online",
            )

    # -- reading the head ---------------------------------------------------------------------
    @contextmanager
    def _pair(self) -> Iterator[tuple[TrustedSnapshot, duckdb.DuckDBPyConnection]]:
        with self._lock:  # the head and its connection are taken together
            trusted, cursor = self.trusted, self._base.cursor()
        try:
            trusted.still_unchanged(**SERVED_CHANGE)
            yield trusted, cursor
        finally:
            cursor.close()

    @contextmanager
    def cursor(self) -> Iterator[duckdb.DuckDBPyConnection]:
        with self._pair() as (_, cursor):
            yield cursor

    @contextmanager
    def corpus(self) -> Iterator[DuckDBCorpus]:
        with self._pair() as (trusted, cursor):
            yield DuckDBCorpus(trusted.path, sha256=trusted.sha256, connection=cursor)

    def close(self) -> None:
        self._worker.shutdown(wait=True, cancel_futures=True)
        for con in self._retired:
            con.close()
        super().close()

    # -- the hooks of service.fetch / service.search ------------------------------------------
    def ensure_records(self, record_ids: Sequence[str]) -> None:
        """Harvest the ids the head lacks; raise when upstream did not return one of them."""
        wanted = [rid for rid in live_ids(list(dict.fromkeys(record_ids))) if not self._holds(rid)]
        if not wanted:
            return
        with self._turn(f"{len(wanted)} record id(s)") as deadline:
            fresh = [r for r in wanted if ("id", r) not in self._asked and not self._holds(r)]
            if fresh:
                assert self.spec is not None
                self._run(ids_spec(self.spec, fresh), f"{len(fresh)} record id(s)", deadline)
                self._asked.update(("id", rid) for rid in fresh)
        absent = [rid for rid in wanted if not self._holds(rid)]
        if absent:
            raise NotInSnapshot(
                f"{absent[0]} is not in this snapshot, and upstream did not return it when "
                "asked live"
            )

    def ensure_search(self, query: str, limit: int, sources: Sequence[str], found: int) -> bool:
        """Harvest ``query`` when the head gave fewer than ``limit`` passages and this query
        was not asked live yet; True when the head moved (search it again)."""
        key = ("query", query, str(limit), *sorted(sources))
        if found >= limit or key in self._asked:
            return False
        assert self.spec is not None
        try:
            spec = query_spec(self.spec, query, limit, sources)
        except InputError:
            return False  # no chosen source takes queries: the snapshot's answer stands
        with self._turn(f"query {query!r}") as deadline:
            if key in self._asked:
                return True  # a concurrent call harvested it meanwhile
            self._run(spec, f"query {query!r}", deadline)
            self._asked.add(key)
        return True

    @contextmanager
    def _turn(self, what: str) -> Iterator[float]:
        """This call's deadline, once no other live call is deciding or harvesting."""
        deadline = min(time.monotonic() + self.deadline, call_deadline())
        if not self._live.acquire(timeout=max(0.0, deadline - time.monotonic())):
            raise self._unavailable(f"the live harvest of {what} did not start")
        try:
            yield deadline
        finally:
            self._live.release()

    def _unavailable(self, why: str) -> TransientHarvestError:
        return TransientHarvestError(
            f"upstream unavailable: {why} within {self.deadline:g} s; nothing was added to "
            "the snapshot",
            advice="retry later (the call may be repeated)",
        )

    def _holds(self, record_id: str) -> bool:
        with self.cursor() as con:
            row = con.execute(
                "SELECT 1 FROM record_state WHERE record_id = ?", [record_id]
            ).fetchone()
        return row is not None

    # -- the live harvest ---------------------------------------------------------------------
    def _run(self, spec: CorpusSpec, what: str, deadline: float) -> None:
        """Harvest ``spec`` into a sealed child and move the head to it, by ``deadline``."""
        future = self._worker.submit(self._build, spec, deadline)
        try:
            future.result(timeout=max(0.0, deadline - time.monotonic()))
        except concurrent.futures.TimeoutError:
            raise self._unavailable(f"the live harvest of {what} did not finish") from None

    def _build(self, spec: CorpusSpec, deadline: float) -> None:
        """One live harvest (in the worker thread): build, trust, move the head."""
        if time.monotonic() >= deadline:  # queued behind a harvest past its deadline
            raise self._unavailable("the live harvest did not start")
        from pipeline.network import network_transport

        inner = self._transport or network_transport(self.settings)
        notes = _Notes()
        options = BuildOptions(
            parent=self.trusted.path,
            keyring=self.keyring,
            refresh=False,  # only what was asked: the lineage's other records are carried
            resume=False,
            mode="live",
            transport=DeadlineTransport(inner, deadline),
        )
        corpus_dir = self.root.path.parent
        try:
            with corpus_lock(corpus_dir):
                result = build_locked(spec, corpus_dir, options, self.settings, notes)
        except PartialHarvestError as error:
            first = notes.failures[0] if notes.failures else error.message
            raise TransientHarvestError(
                f"upstream unavailable: {first}; nothing was added to the snapshot",
                advice="retry later (the call may be repeated)",
            ) from None
        except OSError as error:  # a full disk, a folder not writable: named, never opaque
            raise SnapshotError(
                f"cannot write a live child snapshot into the corpus folder "
                f"{corpus_dir.name}: {error.strerror or error}; nothing was added to the snapshot",
                advice="free space or make the folder writable, or serve without --online",
            ) from None
        trusted = trust_snapshot(result.path, self.policy, what="live child snapshot")
        connection = trusted.search_connection()
        with self._lock:
            self._retired.append(self._base)  # calls may still read it
            self.trusted, self._base = trusted, connection
        self.children.append(trusted)
        log.info(
            "citeseal serve: sealed %s (%s records)", trusted.path.name, result.manifest.records
        )
