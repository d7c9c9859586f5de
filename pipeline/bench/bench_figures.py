"""The live bench's figures from what it logged (:mod:`pipeline.bench.bench_live`): the time
each source owns, the busiest second each server saw, and the busiest second of the slots
the client's limiter granted."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

ARRIVAL_SLACK = 0.05  # seconds of scheduling jitter between the client's start and an arrival


def peak_per_second(arrivals: list[float], slack: float = ARRIVAL_SLACK) -> int:
    """The most requests that arrived within any window of one second (less ``slack``, the
    jitter a loaded machine adds between a paced start and its arrival): at a limit of N a
    second, a client that never exceeds it sends at most ``ceil(N)`` in such a window."""
    times = sorted(arrivals)
    peak, first = 0, 0
    for last, at in enumerate(times):
        while at - times[first] >= 1.0 - slack:
            first += 1
        peak = max(peak, last - first + 1)
    return peak


def started_peaks(granted: list[tuple[str, float]], sources: Mapping[str, str]) -> dict[str, int]:
    """Per source: the most requests its client's limiter let start within one second (the
    slots it granted, logged by host): the client's own pace, free of the jitter between a
    start and its arrival."""
    starts: dict[str, list[float]] = {}
    for host, at in granted:
        starts.setdefault(sources.get(host, host), []).append(at)
    return {s: peak_per_second(starts.get(s, []), 1e-6) for s in sources.values()}  # float sums


def shares(
    out: Mapping[str, Any], sources: Mapping[str, str], limits: Mapping[str, float]
) -> dict[str, tuple[int, float]]:
    """Per source: (requests, seconds owned). The sources run concurrently, so a source owns
    its host's span: from the moment its first request starts waiting for a slot to the
    moment its last one does, plus one interval at its limit (that request's own slot)."""
    starts: dict[str, list[float]] = {}
    for host, at in out["log"]:
        source = sources.get(host)
        if source is not None:
            starts.setdefault(source, []).append(at)
    owned: dict[str, tuple[int, float]] = dict.fromkeys(sources.values(), (0, 0.0))
    for source, ats in starts.items():
        owned[source] = (len(ats), max(ats) - min(ats) + 1 / limits[source])
    return owned
