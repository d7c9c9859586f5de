"""A pipelined harvest: each chunk's enrichment on worker threads, every effect replayed in order.

:class:`pipeline.harvest.Harvester` with ``jobs`` above 1 hands every chunk it delivers to a
:class:`Pipeline` instead of enriching it on its own thread. The rules:

* **Stages.** The enrichments that change records (PubTator3's annotations, Crossref's
  notices), in the harvest's order, run on ``jobs - 1`` worker threads (one each when
  ``jobs`` allows, else grouped in order). A chunk goes through the stages in order and each
  stage takes the chunks in the order they were handed in, so chunk k's Crossref notices
  are asked while chunk k+1's annotations are and the harvest's thread fetches chunk k+2 —
  and then the sources after the literature (trials, labels). Each request still waits for
  its host's slot (:class:`pipeline.pacing.RateLimiter`, one per host, shared by every
  thread): a host is never asked faster than alone. An enrichment runs on one thread only,
  so its state (:meth:`~pipeline.sources.base.EnrichContext.memo`) is never shared.
* **Memory stays flat:** at most :data:`AHEAD` chunks are handed in and not yet delivered;
  the harvest's thread waits for the oldest beyond that.
* **Nothing is written from a stage, and everything in order.** What a step does beyond
  asking — the :class:`~pipeline.harvest_protocols.Sink`'s steps, failures and records, the
  progress shown, the exchanges and refusals the client reports, the resume cache's note of
  an answer (:mod:`pipeline.effects`) — is kept with the chunk it belongs to, on every
  thread of the harvest (its own thread's while a chunk is on its way), and the harvest's
  thread replays the chunks in the order they were handed in: what it did before handing
  the chunk in, then each stage's, then the sink takes the chunk's records. So the sink
  sees exactly the calls, in exactly the order, of the sequential harvest (``jobs = 1``),
  and the snapshot is the same.
* **A failure is its chunk's:** a failed request in a stage is a listed failure of its step,
  replayed in its place (its records delivered incomplete, :mod:`pipeline.harvest`); the
  other chunks go on. An error raised anywhere (``strict``, Ctrl-C, a bug) stops every
  thread: no stage starts another request (the next effect raises :class:`Stopped`), a
  request under way finishes, every thread is joined, and the chunks not yet replayed are
  dropped (the build does not seal). Only the failure itself is replayed first — the stage's
  effects of the chunk it failed, or what the harvest's thread did since its last chunk —
  so it is listed and its answer dropped from the resume cache; a Ctrl-C replays nothing.
  Answers a stopped build received but never replayed stay in the resume cache unjudged; a
  rerun that serves them judges them then, like any cached answer.

* **Records an enrichment adds join their chunk.** An enrichment that adds records of its
  own (Europe PMC's full text) runs on the harvest's thread as the chunk is handed in, before
  the stages: each record it delivers becomes an *item* of the chunk, enriched by every stage
  right after the item it came from (in the order the sequential harvest enriches them: a
  chunk's records, then each added record, depth first), and its effects are replayed where
  the sequential harvest makes them — the stages' effects of the chunk's records, then what
  the adding enrichment did (its requests, failures and progress) with each added record
  delivered in its place, then the chunk's records. The rule that makes this the sequential
  harvest: an enrichment that adds records asks by what the records name (their ids and
  PMCIDs), which no enrichment that changes records changes, and returns the records it was
  given. Its requests go out on the harvest's thread, beside the stages' (its host is paced
  like any other), so a spec with full text is pipelined too.
"""

from __future__ import annotations

import queue
import threading
from collections import deque
from collections.abc import Callable, Collection, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from pipeline import effects

if TYPE_CHECKING:
    from pipeline.errors import HarvestError, ParseError
    from pipeline.harvest_protocols import Progress, Sink
    from pipeline.records import Record
    from pipeline.sources.base import EnrichContext, Source

AHEAD = 3  # chunks handed in and not yet delivered before the harvest's thread waits
POLL = 0.1  # seconds between looks at the stop flag while waiting

_Call = tuple[Callable[..., object], tuple[Any, ...], dict[str, Any]]


class Stopped(Exception):
    """Another thread of the pipelined harvest failed: this one stops (module docstring)."""


def stages_for(enrichers: Sequence[Source], jobs: int) -> list[list[Source]]:
    """The enrichers that change records grouped onto at most ``jobs - 1`` stages, in order
    (those that add records run as a chunk is handed in: module docstring; no stage, so the
    harvest goes one step at a time: ``jobs`` 1, or no enrichment that changes records)."""
    enrichers = [s for s in enrichers if s.enrichment is not None and not s.enrichment.adds_records]
    if jobs <= 1 or not enrichers:
        return []
    count = min(jobs - 1, len(enrichers))
    size, extra = divmod(len(enrichers), count)
    groups: list[list[Source]] = []
    start = 0
    for i in range(count):
        end = start + size + (1 if i < extra else 0)
        groups.append(list(enrichers[start:end]))
        start = end
    return groups


@dataclass
class _Item:
    """Records delivered together: a chunk's, or one an enrichment added (module docstring)."""

    source: str
    records: list[Record]
    hollow: set[str]
    incomplete: set[str] = field(default_factory=set)
    effects: dict[str, list[_Call]] = field(default_factory=dict)  # by enrichment, the stages'
    added: list[_Call | _Item] = field(default_factory=list)  # the adding enrichments' effects
    #   on the harvest's thread, each record they delivered in its place


@dataclass
class _Chunk:
    head: _Item  # the records handed in
    before: list[_Call]  # the harvest thread's effects since the chunk before
    items: list[_Item]  # the head and each item added, in the order the stages enrich them
    error: BaseException | None = None
    done: threading.Event = field(default_factory=threading.Event)


def _replay(calls: Sequence[_Call]) -> None:
    for fn, args, kwargs in calls:
        fn(*args, **kwargs)


def _plain(entries: Sequence[_Call | _Item]) -> list[_Call]:
    """The effects among ``entries``, the items added left out (what a failure replays)."""
    return [e for e in entries if not isinstance(e, _Item)]


class Pipeline:
    """Delivers a harvest's chunks through its enrichment stages (module docstring). Use as a
    context manager on the harvest's thread; :meth:`submit` hands a chunk in."""

    def __init__(
        self,
        ctx: EnrichContext,
        sink: Sink,
        stages: Sequence[Sequence[Source]],
        *,
        adders: Sequence[Source] = (),
        ahead: int = AHEAD,
    ) -> None:
        self._ctx = ctx
        self._sink = sink
        self._stages = [list(group) for group in stages]
        self._changers = [s for group in self._stages for s in group]  # in the harvest's order
        self._adders = list(adders)
        self._adding: tuple[_Chunk, _Item] | None = None  # an adding enrichment under way
        self._ahead = max(1, ahead)
        self._stop = threading.Event()
        self._queues: list[queue.SimpleQueue[_Chunk | None]] = [
            queue.SimpleQueue() for _ in self._stages
        ]
        self._threads: list[threading.Thread] = []
        self._pending: deque[_Chunk] = deque()
        self._open: list[_Call] = []  # the harvest thread's effects since its last chunk
        self._deferring = effects.deferred(self._note)

    # -- the harvest's thread --------------------------------------------------------------------
    def __enter__(self) -> Pipeline:
        for i, group in enumerate(self._stages):
            names = "+".join(s.name for s in group)
            thread = threading.Thread(
                target=self._work, args=(i,), name=f"harvest-{names}", daemon=True
            )
            self._threads.append(thread)
            thread.start()
        self._deferring.__enter__()
        return self

    def __exit__(
        self, kind: type[BaseException] | None, error: BaseException | None, tb: object
    ) -> None:
        raised = error
        try:
            if raised is None:
                try:
                    self._drain(0)
                except BaseException as late:  # noqa: BLE001 (handled below, like any error)
                    raised = late
        finally:
            self._deferring.__exit__(None, None, None)
            self._halt()
        if raised is None:
            return
        failed = next((c.error for c in self._pending if c.error is not None), None)
        if failed is not None and isinstance(raised, Stopped):
            chunk = next(c for c in self._pending if c.error is failed)
            for item in chunk.items:  # the failure a stage raised, listed (module docstring)
                for plugin in self._changers:
                    _replay(item.effects.get(plugin.name, ()))
            raise failed from None
        if not isinstance(raised, (KeyboardInterrupt, Stopped)):
            _replay(self._open)  # what the harvest's thread did up to its own failure
        if raised is not error:
            raise raised

    def submit(self, source: str, records: Sequence[Record], hollow: Collection[str]) -> None:
        """Hand one chunk in; deliver those that are done (wait while more than ``ahead``)."""
        if self._stop.is_set():
            raise Stopped
        if self._adding is not None:  # delivered by an adding enrichment: it joins the chunk
            chunk, parent = self._adding
            item = _Item(source, list(records), set(hollow))
            parent.added.append(item)
            chunk.items.append(item)
            self._add(chunk, item)
            return
        head = _Item(source, list(records), set(hollow))
        chunk = _Chunk(head, self._open, [head])
        self._open = []
        try:
            self._add(chunk, head)
        except BaseException:
            self._open = [*chunk.before, *_plain(head.added)]  # up to its failure (module doc)
            raise
        self._pending.append(chunk)
        self._queues[0].put(chunk)
        self._drain(self._ahead)

    def _add(self, chunk: _Chunk, item: _Item) -> None:
        """Run the enrichments that add records on ``item``, here: what they deliver joins
        ``chunk`` (:meth:`submit`), and their effects are kept with ``item``."""
        outer, self._adding = self._adding, (chunk, item)
        try:
            for plugin in self._adders:
                assert plugin.enrichment is not None
                _, failed = plugin.enrichment.enrich(self._ctx, list(item.records))
                item.incomplete |= failed
        finally:
            self._adding = outer

    def _note(
        self,
        fn: Callable[..., object],
        args: tuple[Any, ...],
        kwargs: dict[str, Any],
        *,
        bounded: bool,
    ) -> None:
        """The harvest thread's effect: at once when no chunk is on its way, else kept."""
        del bounded
        if self._stop.is_set():
            raise Stopped
        if self._adding is not None:
            self._adding[1].added.append((fn, args, kwargs))
        elif self._pending:
            self._open.append((fn, args, kwargs))
        else:
            fn(*args, **kwargs)

    def _drain(self, keep: int) -> None:
        """Deliver the chunks that are done, in order, waiting for the oldest while more than
        ``keep`` are on their way; then what the harvest's thread did after the last one."""
        while self._pending:
            head = self._pending[0]
            while not head.done.wait(POLL if len(self._pending) > keep else 0):
                if len(self._pending) <= keep:
                    return
                if self._stop.is_set():
                    raise Stopped
            if head.error is not None:
                raise Stopped
            self._pending.popleft()
            _replay(head.before)
            self._deliver(head.head)
        _replay(self._open)
        self._open = []

    def _deliver(self, item: _Item) -> None:
        """Replay ``item`` as the sequential harvest delivers it: the stages' effects, what
        the adding enrichments did (each record they added delivered in its place), then
        its records to the sink."""
        for plugin in self._changers:
            _replay(item.effects.get(plugin.name, ()))
        for entry in item.added:
            if isinstance(entry, _Item):
                self._deliver(entry)
            else:
                fn, args, kwargs = entry
                fn(*args, **kwargs)
        self._sink.records(item.source, item.records, incomplete=item.incomplete | item.hollow)

    def _halt(self) -> None:
        self._stop.set()
        for q in self._queues:
            q.put(None)
        for thread in self._threads:
            thread.join()

    # -- the stages' threads ---------------------------------------------------------------------
    def _work(self, index: int) -> None:
        inbox = self._queues[index]
        after = self._queues[index + 1] if index + 1 < len(self._queues) else None
        group = self._stages[index]
        while (chunk := inbox.get()) is not None and not self._stop.is_set():
            try:
                self._enrich(group, chunk)
            except Stopped:
                return
            # a stage's thread is a boundary: whatever it raised is raised on the harvest's
            except BaseException as error:  # noqa: BLE001
                chunk.error = error
                self._stop.set()
                chunk.done.set()
                return
            if after is not None:
                after.put(chunk)
            else:
                chunk.done.set()

    def _keeper(self, kept: list[_Call]) -> effects.Hook:
        def keep(
            fn: Callable[..., object],
            args: tuple[Any, ...],
            kwargs: dict[str, Any],
            *,
            bounded: bool,
        ) -> None:
            del bounded
            if self._stop.is_set():
                raise Stopped
            kept.append((fn, args, kwargs))

        return keep

    def _enrich(self, group: Sequence[Source], chunk: _Chunk) -> None:
        """Each enrichment of ``group`` on each item of ``chunk``, in order; every item's
        effects kept with it, by enrichment."""
        for plugin in group:
            assert plugin.enrichment is not None
            for item in chunk.items:
                kept = item.effects.setdefault(plugin.name, [])
                with effects.deferred(self._keeper(kept)):
                    item.records, failed = plugin.enrichment.enrich(self._ctx, item.records)
                item.incomplete |= failed


class DeferredSink:
    """The harvest's :class:`~pipeline.harvest_protocols.Sink`, its calls made through
    :func:`pipeline.effects.effect` (kept with their chunk in a pipelined harvest)."""

    def __init__(self, sink: Sink) -> None:
        self._sink = sink

    def records(
        self, source: str, records: Sequence[Record], *, incomplete: Collection[str] = ()
    ) -> None:
        effects.effect(self._sink.records, source, records, incomplete=incomplete)

    def failure(self, source: str, step: str, error: HarvestError | ParseError) -> None:
        effects.effect(self._sink.failure, source, step, error)

    def step(self, source: str, step: str, count: int, detail: str | None = None) -> None:
        effects.effect(self._sink.step, source, step, count, detail)


class DeferredProgress:
    """The harvest's :class:`~pipeline.harvest_protocols.Progress`, deferred likewise."""

    def __init__(self, progress: Progress) -> None:
        self._progress = progress

    def start(self, source: str, total: int | None) -> None:
        effects.effect(self._progress.start, source, total)

    def advance(self, source: str, count: int) -> None:
        effects.effect(self._progress.advance, source, count)

    def finish(self, source: str, status: str) -> None:
        effects.effect(self._progress.finish, source, status)

    def note(self, message: str) -> None:
        effects.effect(self._progress.note, message)
