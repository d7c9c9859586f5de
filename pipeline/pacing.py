"""Per-host pacing: each API is asked no faster than its published rate.

:data:`HOST_RATES` holds the rate of every host the sources ask (requests per second; a host
missing from it gets :data:`DEFAULT_RATE`), :func:`host_rates` adjusts it to the settings (NCBI
allows more with an API key, Crossref less without a contact e-mail), and a
:class:`RateLimiter` holds every caller of one host to it, across threads. The client
(:class:`pipeline.http.HttpClient`) waits for a slot before every request and every redirect
hop, so we pace instead of hammering and retrying.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable, Mapping
from urllib.parse import urlsplit

from pipeline.settings import BASE_URLS, Settings

DEFAULT_RATE = 2.0  # requests per second for a host missing from the table

# Requests per second, by host. Sources: API-FACTS.md §1–6.
HOST_RATES: Mapping[str, float] = {
    "eutils.ncbi.nlm.nih.gov": 3.0,  # 10/s with NCBI_API_KEY (see host_rates)
    "www.ncbi.nlm.nih.gov": 3.0,  # PubTator3: "no more than 3 requests per second"
    "www.ebi.ac.uk": 5.0,  # Europe PMC: no published figure, stay conservative
    "api.crossref.org": 3.0,  # polite pool, list requests (1/s without mailto)
    "clinicaltrials.gov": 0.8,  # ~50 requests/minute
    "api.fda.gov": 4.0,  # 240 requests/minute
    "dailymed.nlm.nih.gov": 2.0,
}


def host_rates(
    settings: Settings, overrides: Mapping[str, float] | None = None
) -> dict[str, float]:
    """The rate table for these settings: NCBI 10/s with a key, Crossref 1/s without mailto.

    A source moved to another base URL (``CITESEAL_<SOURCE>_URL``) keeps its API's rate at
    that host: a mirror or proxy is paced like the API behind it, and a host serving several
    sources at the slowest of their rates (never faster than any of them allows)."""
    rates = dict(HOST_RATES)
    if settings.ncbi_api_key:
        rates["eutils.ncbi.nlm.nih.gov"] = 10.0
    if not settings.email:
        rates["api.crossref.org"] = 1.0
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
    """Thread-safe per-host pacing: starts of requests to one host are at least 1/rate apart.

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
    ) -> None:
        self._rates = dict(rates)
        self._default = default
        self._sleep = sleep
        self._clock = clock
        self._next: dict[str, float] = {}
        self._lock = threading.Lock()

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
                    self._next[host] = max(now, start) + interval
                    return waited
                delay = start - now
            self._sleep(delay)
            waited += delay
            stalled = self._clock() <= now
