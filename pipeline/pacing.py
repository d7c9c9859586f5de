"""Per-host pacing: each API is asked no faster than its published rate.

Each source states its rate (:class:`pipeline.sources.base.Rate`: its host, requests per
second, faster with its API key or slower without a contact e-mail); :data:`HOST_RATES` is
the table of them, read from the registry, plus :data:`OTHER_HOSTS` (services a source asks
beyond its API: DailyMed's SPL history). A host missing from it gets :data:`DEFAULT_RATE`.
:func:`host_rates` adjusts it to the settings, and a :class:`RateLimiter` holds every caller of
one host to it, across threads. The client (:class:`pipeline.http.HttpClient`) waits for a
slot before every request and every redirect hop, so we pace instead of hammering and
retrying.

A host's policy may also cap the requests *in flight* at once (Crossref's pools: 1 without a
contact e-mail, 3 with one; :attr:`pipeline.sources.base.Rate.concurrency`):
:func:`host_concurrency` is that table (1 for every host whose policy documents no more),
and an :class:`InFlight` holds every caller of one host to it. The client starts a request
through :meth:`RateLimiter.start`: it takes a place in flight first and only then waits for
its slot, so more requests in flight never start closer together than the rate allows.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable, Iterator, Mapping
from contextlib import contextmanager
from urllib.parse import urlsplit

from pipeline.settings import BASE_URLS, Settings

DEFAULT_RATE = 2.0  # requests per second for a host missing from the table

# Requests per second of hosts that are no source's API (API-FACTS.md)
OTHER_HOSTS: Mapping[str, float] = {"dailymed.nlm.nih.gov": 2.0}


def host_concurrency(settings: Settings) -> dict[str, int]:
    """Requests each source's host allows in flight at once with these settings (hosts not
    named: 1). A source moved to another base URL keeps its API's figure at that host, and a
    host serving several sources the smallest of theirs, as :func:`host_rates` does."""
    from pipeline.sources import sources

    table: dict[str, int] = {}
    for plugin in sources():
        if plugin.rate is not None:
            table[plugin.rate.host] = plugin.rate.parallel_for(settings)
    moved: dict[str, int] = {}
    for source, url in settings.base_urls.items():
        public, host = urlsplit(BASE_URLS.get(source, "")).hostname, urlsplit(url).hostname
        if public and host and host != public:
            count = table.get(public, 1)
            moved[host] = min(moved.get(host, count), count)
    table.update(moved)
    return table


class InFlight:
    """Thread-safe per-host cap on the requests in flight at once (module docstring): at most
    ``limits[host]`` (1 for a host not named) callers hold a place of one host at a time."""

    def __init__(self, limits: Mapping[str, int]) -> None:
        self._limits = {host: max(1, n) for host, n in limits.items()}
        self._held: dict[str, int] = {}
        self._free = threading.Condition()

    def limit(self, host: str) -> int:
        return self._limits.get(host, 1)

    @contextmanager
    def place(self, host: str) -> Iterator[None]:
        """Hold one of ``host``'s places in flight for the body (wait for one first)."""
        with self._free:
            self._free.wait_for(lambda: self._held.get(host, 0) < self.limit(host))
            self._held[host] = self._held.get(host, 0) + 1
        try:
            yield
        finally:
            with self._free:
                self._held[host] -= 1
                self._free.notify_all()


def _source_rates(settings: Settings | None) -> dict[str, float]:
    """Each registered source's host → its rate (the plain rate without ``settings``)."""
    from pipeline.sources import sources

    rates: dict[str, float] = {}
    for plugin in sources():
        if plugin.rate is not None:
            rate = plugin.rate
            rates[rate.host] = (
                rate.per_second
                if settings is None
                else rate.for_settings(settings, keyed=plugin.keyed(settings))
            )
    return rates


class _HostRates(Mapping[str, float]):
    """The rate table, by host, as the registry has it now (module docstring)."""

    def _table(self) -> dict[str, float]:
        return {**_source_rates(None), **OTHER_HOSTS}

    def __getitem__(self, host: str) -> float:
        return self._table()[host]

    def __iter__(self) -> Iterator[str]:
        return iter(self._table())

    def __len__(self) -> int:
        return len(self._table())


HOST_RATES: Mapping[str, float] = _HostRates()


def busy_check(source: str | None, host: str | None) -> Callable[[bytes], bool] | None:
    """How an answer to ``source`` (or, for a request no source names, to ``host``) says its
    host refused it for rate inside the body (:attr:`pipeline.sources.base.Rate.busy`): the
    named source's own check, else that of a source whose API is at ``host``."""
    from pipeline.sources import names, sources
    from pipeline.sources import source as registered

    if source is not None and source in names():
        rate = registered(source).rate
        if rate is not None and rate.busy is not None:
            return rate.busy
    for plugin in sources():
        if plugin.rate is not None and plugin.rate.busy is not None and plugin.rate.host == host:
            return plugin.rate.busy
    return None


def host_rates(
    settings: Settings, overrides: Mapping[str, float] | None = None
) -> dict[str, float]:
    """The rate table for these settings: NCBI 10/s with a key, Crossref 1/s without mailto.

    A source moved to another base URL (``CITESEAL_<SOURCE>_URL``) keeps its API's rate at
    that host: a mirror or proxy is paced like the API behind it, and a host serving several
    sources at the slowest of their rates (never faster than any of them allows)."""
    rates = {**_source_rates(settings), **OTHER_HOSTS}
    moved: dict[str, float] = {}
    for source, url in settings.base_urls.items():
        public, host = urlsplit(BASE_URLS.get(source, "")).hostname, urlsplit(url).hostname
        if public and host and host != public:
            rate = rates.get(public, DEFAULT_RATE)
            moved[host] = min(moved.get(host, rate), rate)
    rates.update(moved)
    rates.update(overrides or {})
    return rates


class RateLimiter:
    """Thread-safe per-host pacing: starts of requests to one host are at least 1/rate apart,
    and (through :meth:`start`) no more in flight at once than the host allows.

    Callers sleep outside the lock and take the slot only once it has come, so the rate holds
    across threads and across callers that oversleep.
    """

    def __init__(
        self,
        rates: Mapping[str, float],
        *,
        default: float = DEFAULT_RATE,
        sleep: Callable[[float], None] = time.sleep,
        clock: Callable[[], float] = time.monotonic,
        concurrency: Mapping[str, int] | None = None,
    ) -> None:
        self.inflight = InFlight(concurrency or {})
        self.granted = threading.local()  # .at: the slot this thread was last granted (bench)
        self._rates = dict(rates)
        self._default = default
        self._sleep = sleep
        self._clock = clock
        self._next: dict[str, float] = {}
        self._lock = threading.Lock()

    @contextmanager
    def start(self, host: str) -> Iterator[float]:
        """Start one request to ``host``: hold a place in flight (:class:`InFlight`) for the
        body, and its slot at the rate before it (:meth:`wait`; the seconds waited)."""
        with self.inflight.place(host):
            yield self.wait(host)

    def interval(self, host: str) -> float:
        """Minimum seconds between two request starts to ``host`` (0 when unlimited)."""
        rate = self._rates.get(host, self._default)
        return 1.0 / rate if rate > 0 else 0.0

    def wait(self, host: str) -> float:
        """Block until a request to ``host`` may start; returns the seconds waited.

        The start is granted only when the clock has reached the host's next free slot, and
        the slot after it is counted from that moment, so an oversleeping caller never lets
        the next one start early. (An injected clock that does not move is trusted after one
        sleep, so tests can record waits without sleeping.)
        """
        interval = self.interval(host)
        waited = 0.0
        stalled = False
        while True:
            with self._lock:
                now = self._clock()
                start = self._next.get(host, now)
                if start <= now or stalled:
                    self.granted.at = max(now, start)
                    self._next[host] = self.granted.at + interval
                    return waited
                delay = start - now
            self._sleep(delay)
            waited += delay
            stalled = self._clock() <= now
