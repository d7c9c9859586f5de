"""``make bench``: throughput figures on corpora generated at run time (never committed).

Each ``bench_*.py`` module in this package exposes ``run(workdir: Path) -> list[Figure]``;
``python -m pipeline.bench [NAME...]`` runs them in order and prints every figure with its goal.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass


@dataclass(frozen=True)
class Figure:
    """One measured figure: ``name`` value ``unit`` (goal, met or not)."""

    name: str
    value: float
    unit: str
    goal: float | None = None
    higher_is_better: bool = True
    note: bool = False
    """A line of text (``name``) instead of a figure, e.g. why a comparison was skipped."""

    def line(self) -> str:
        if self.note:
            return self.name
        text = f"{self.name:<48} {self.value:>14,.1f} {self.unit}"
        if self.goal is not None:
            met = self.value >= self.goal if self.higher_is_better else self.value <= self.goal
            goal = f"{self.goal:,.0f}" if self.goal >= 100 else f"{self.goal:g}"
            text += f"   (goal {'≥' if self.higher_is_better else '≤'} {goal}: "
            text += f"{'met' if met else 'NOT met'})"
        return text


def rate(n: int, action: Callable[[], object]) -> float:
    """``n`` per second of the wall clock ``action`` took."""
    start = time.perf_counter()
    action()
    return n / (time.perf_counter() - start)
