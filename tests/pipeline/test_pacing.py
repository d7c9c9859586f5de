"""Per-host pacing: the rate and concurrency tables, the limiter and the places in flight (the
client's use of them: test_http.py)."""

from __future__ import annotations

import threading
import time

from pipeline.pacing import HOST_RATES, InFlight, RateLimiter, host_concurrency, host_rates
from pipeline.settings import Settings


def test_rate_limiter_reserves_slots_one_interval_apart() -> None:
    now = [100.0]
    slept: list[float] = []
    limiter = RateLimiter({"a": 4.0}, default=1.0, sleep=slept.append, clock=lambda: now[0])
    assert [limiter.wait("a") for _ in range(3)] == [0.0, 0.25, 0.5]
    assert limiter.wait("b") == 0.0  # hosts are paced separately
    assert slept == [0.25, 0.5]
    assert limiter.interval("unknown") == 1.0


def test_the_rate_table_follows_the_settings() -> None:
    assert host_rates(Settings())["eutils.ncbi.nlm.nih.gov"] == 3.0
    assert host_rates(Settings(ncbi_api_key="k" * 36))["eutils.ncbi.nlm.nih.gov"] == 10.0
    assert host_rates(Settings())["api.crossref.org"] == 1.0  # no mailto: the public pool
    assert host_rates(Settings(email="me@example.org"))["api.crossref.org"] == 3.0
    assert host_rates(Settings(), {"a.example": 7.0})["a.example"] == 7.0
    assert HOST_RATES["api.crossref.org"] == 3.0  # the table itself is left as it is


def test_the_concurrency_table_allows_more_in_flight_only_where_the_policy_says_so() -> None:
    """Crossref's polite pool allows 3 requests in flight, its public pool 1; every other
    source's host documents no more than 1, and a mirror keeps the figure of its API."""
    polite = Settings(email="me@example.org")
    assert host_concurrency(polite)["api.crossref.org"] == 3
    assert host_concurrency(Settings())["api.crossref.org"] == 1
    others = {h: n for h, n in host_concurrency(polite).items() if h != "api.crossref.org"}
    assert others and set(others.values()) == {1}
    moved = Settings(email="me@example.org", base_urls={"crossref": "https://mirror.example"})
    assert host_concurrency(moved)["mirror.example"] == 3
    assert InFlight(host_concurrency(polite)).limit("unknown.example") == 1


def test_in_flight_holds_each_host_to_its_places_and_hosts_apart() -> None:
    """Six threads start a request to a host allowing 2 in flight: never more than 2 hold a
    place at once, and another host's request does not wait for them."""
    inflight = InFlight({"a": 2})
    held, most, lock = [0], [0], threading.Lock()
    release = threading.Event()

    def ask() -> None:
        with inflight.place("a"):
            with lock:
                held[0] += 1
                most[0] = max(most[0], held[0])
            release.wait(5)
            with lock:
                held[0] -= 1

    threads = [threading.Thread(target=ask) for _ in range(6)]
    for thread in threads:
        thread.start()
    deadline = time.monotonic() + 5
    while held[0] < 2 and time.monotonic() < deadline:
        time.sleep(0.01)
    with inflight.place("b"):  # a free host: at once, while "a" is full
        assert held[0] == 2
    release.set()
    for thread in threads:
        thread.join(5)
    assert most[0] == 2
    assert held[0] == 0


def test_a_start_takes_its_place_in_flight_before_its_slot_at_the_rate() -> None:
    """:meth:`RateLimiter.start` waits for a place first, then for the slot: starts stay one
    interval apart whatever the concurrency, and a place is held until the request ends."""
    now = [0.0]
    slept: list[float] = []
    limiter = RateLimiter(
        {"a": 2.0}, sleep=slept.append, clock=lambda: now[0], concurrency={"a": 3}
    )
    with limiter.start("a") as first, limiter.start("a") as second:
        assert (first, second) == (0.0, 0.5)
        assert limiter.granted.at == 0.5  # the slot this thread was granted last
    assert slept == [0.5]
