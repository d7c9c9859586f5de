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
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from typing import Any, Protocol


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
