"""Effects a harvest lane defers to the harvest's thread (:mod:`pipeline.harvest_lanes`).

A concurrent harvest asks upstream on worker threads, but what a request *does* beyond its
answer — the exchange handed to the build (``on_exchange``), the records a parser refused
(``on_refusal``), the resume cache's note of an answer not yet judged — must happen on the
one thread that writes the snapshot, in the order a sequential harvest would have made it.
Code that has such an effect calls :func:`effect` instead of calling it directly: on a thread
running under :func:`deferred` the call is handed to that thread's hook (queued for the
harvest's thread); anywhere else it runs at once, as before.

:func:`noted_refusals` also keeps, per deferring thread, the ids its parsers refused, so a
lane judges its own answers by its own refusals (:meth:`pipeline.harvest.Harvester._answer`)
without waiting for the deferred ``on_refusal``.

:func:`fan_out` runs calls on a few threads of their own (requests to one host, as many at once
as the host allows in flight) and hands their effects, and the ids they refused, to the
calling thread in the order of the calls, as if it had made them one after another.
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Iterator, Sequence
from concurrent.futures import ThreadPoolExecutor
from contextlib import contextmanager
from typing import Any, Protocol, TypeVar

T = TypeVar("T")
_Kept = tuple[Callable[..., object], tuple[Any, ...], dict[str, Any], bool]


class Hook(Protocol):
    """Takes a deferred call; ``bounded``: a hand-off of records (the lane's memory bound)."""

    def __call__(
        self,
        fn: Callable[..., object],
        args: tuple[Any, ...],
        kwargs: dict[str, Any],
        *,
        bounded: bool,
    ) -> None: ...


class _Local(threading.local):
    hook: Hook | None = None
    refused: list[str] | None = None


_local = _Local()


def effect(fn: Callable[..., object], *args: Any, **kwargs: Any) -> None:
    """Call ``fn`` now, or hand it to this thread's hook (module docstring)."""
    hook = _local.hook
    if hook is None:
        fn(*args, **kwargs)
    else:
        hook(fn, args, kwargs, bounded=False)


def handoff(fn: Callable[..., object], *args: Any) -> None:
    """Like :func:`effect`, for a call that carries records (counted against the bound)."""
    hook = _local.hook
    if hook is None:
        fn(*args)
    else:
        hook(fn, args, {}, bounded=True)


def noted_refusals(ids: Sequence[str]) -> None:
    """Note the ids a parser refused on this thread (kept only while deferring)."""
    if _local.refused is not None:
        _local.refused.extend(ids)


def refused_here() -> list[str] | None:
    """The ids refused on this deferring thread so far (None: the thread does not defer)."""
    return _local.refused


@contextmanager
def deferred(hook: Hook) -> Iterator[None]:
    """Run the body with this thread's effects handed to ``hook``."""
    _local.hook, _local.refused = hook, []
    try:
        yield
    finally:
        _local.hook, _local.refused = None, None


def _forward(kept: Sequence[_Kept], refused: Sequence[str]) -> None:
    """Make effects kept on another thread this thread's own, in their order."""
    hook = _local.hook
    for fn, args, kwargs, bounded in kept:
        if hook is None:
            fn(*args, **kwargs)
        else:
            hook(fn, args, kwargs, bounded=bounded)
    if _local.refused is not None:
        _local.refused.extend(refused)


_Outcome = tuple[list[_Kept], list[str], Any, BaseException | None]  # kept, refused, value, error


def _kept_run(call: Callable[[], object]) -> _Outcome:
    """Run ``call`` with this thread's effects kept: what it did, refused, answered or raised."""
    kept: list[_Kept] = []

    def keep(
        fn: Callable[..., object], args: tuple[Any, ...], kwargs: dict[str, Any], *, bounded: bool
    ) -> None:
        kept.append((fn, args, kwargs, bounded))

    with deferred(keep):
        try:
            value = call()
        # a worker thread is a boundary: what it raised is raised on the caller's, in order
        except BaseException as error:  # noqa: BLE001
            return kept, list(_local.refused or ()), None, error
        return kept, list(_local.refused or ()), value, None


def fan_out(calls: Sequence[Callable[[], T]], width: int) -> list[T]:
    """The results of ``calls``, run on up to ``width`` threads at once (1: here, one after
    another). Each call's effects (:func:`effect`, :func:`handoff`) and refused ids are this
    thread's, replayed in the order of ``calls`` once the calls before it have been; an error
    a call raised is raised here in its turn, after its own effects, and the calls not yet
    started are not started (those under way finish; their effects are dropped)."""
    if width <= 1 or len(calls) <= 1:
        return [call() for call in calls]
    name = threading.current_thread().name
    results: list[T] = []
    with ThreadPoolExecutor(max_workers=min(width, len(calls)), thread_name_prefix=name) as pool:
        futures = [pool.submit(_kept_run, call) for call in calls]
        try:
            for future in futures:
                kept, refused, value, error = future.result()
                _forward(kept, refused)
                if error is not None:
                    raise error
                results.append(value)
        finally:
            for future in futures:
                future.cancel()
    return results
