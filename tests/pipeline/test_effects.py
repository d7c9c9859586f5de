"""Effects deferred to one thread: :func:`pipeline.effects.fan_out` runs calls on threads of
their own and hands their effects, refusals, results and errors to the caller in order."""

from __future__ import annotations

import threading
import time
from collections.abc import Callable
from typing import Any

import pytest

from pipeline import effects


class Kept:
    """A hook that writes down every deferred call it gets, and the thread it got it on."""

    def __init__(self) -> None:
        self.calls: list[tuple[Any, ...]] = []
        self.threads: set[str] = set()

    def __call__(
        self,
        fn: Callable[..., object],
        args: tuple[Any, ...],
        kwargs: dict[str, Any],
        *,
        bounded: bool,
    ) -> None:
        self.threads.add(threading.current_thread().name)
        self.calls.append((fn, args, bounded))


def _noted(n: int, delay: float) -> Callable[[], int]:
    def call() -> int:
        time.sleep(delay)  # later calls finish first
        effects.effect(print, f"asked {n}")
        effects.noted_refusals([f"id:{n}"])
        effects.handoff(print, f"records {n}")
        return n * 10

    return call


def test_fanned_out_calls_hand_their_effects_to_the_caller_in_the_order_of_the_calls() -> None:
    kept = Kept()
    with effects.deferred(kept):
        results = effects.fan_out([_noted(n, 0.05 * (3 - n)) for n in range(4)], 3)
        refused = effects.refused_here()
    assert results == [0, 10, 20, 30]
    assert kept.calls == [
        call
        for n in range(4)
        for call in ((print, (f"asked {n}",), False), (print, (f"records {n}",), True))
    ]
    assert kept.threads == {threading.current_thread().name}
    assert refused == [f"id:{n}" for n in range(4)]


def test_a_fanned_out_call_that_raises_raises_in_its_turn_after_its_own_effects() -> None:
    kept = Kept()

    def failing() -> int:
        effects.effect(print, "failed")
        raise ValueError("call 1 failed")

    with effects.deferred(kept), pytest.raises(ValueError, match=r"^call 1 failed$"):
        effects.fan_out([_noted(0, 0.05), failing, _noted(2, 0.0)], 2)
    assert [c[1] for c in kept.calls] == [("asked 0",), ("records 0",), ("failed",)]


def test_one_wide_or_a_single_call_runs_on_the_callers_thread() -> None:
    caller = threading.current_thread().name
    seen: list[str] = []

    def call() -> str:
        seen.append(threading.current_thread().name)
        return "done"

    assert effects.fan_out([call, call], 1) == ["done", "done"]
    assert effects.fan_out([call], 3) == ["done"]
    assert seen == [caller] * 3
    assert effects.fan_out([], 3) == []
