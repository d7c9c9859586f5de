"""Per-host pacing: the rate table and the limiter (the client's use of it: test_http.py)."""

from __future__ import annotations

from pipeline.pacing import HOST_RATES, RateLimiter, host_rates
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
