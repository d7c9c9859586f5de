"""The one retry policy of :class:`pipeline.http.HttpClient`: what is retried, and how long
to wait before the next attempt.

Retried: HTTP 429, 500, 502, 503, 504 (:data:`RETRY_STATUSES`), httpx transport errors and
timeouts, and NCBI's "API rate limit exceeded" delivered inside a 200 body
(:func:`is_rate_limit_body`). The wait honours ``Retry-After`` (delta-seconds or HTTP-date)
up to :data:`RETRY_AFTER_CAP`; without one it is a capped exponential backoff with jitter
(:func:`wait_seconds`). The client cuts every wait to its call's deadline.
"""

from __future__ import annotations

import email.utils
import random
from datetime import UTC, datetime

import httpx

RETRY_STATUSES = frozenset({429, 500, 502, 503, 504})
RETRY_AFTER_CAP = 60.0  # seconds; a longer Retry-After is shortened to this
BACKOFF_INITIAL = 1.0  # seconds before the second attempt (before jitter)
BACKOFF_CAP = 30.0  # the exponential backoff never waits longer than this
RATE_LIMIT_MARKER = b"api rate limit exceeded"


class Retryable(Exception):
    """One attempt failed in a way the policy retries (internal to the HTTP layer)."""

    def __init__(
        self, reason: str, *, retry_after: float | None = None, response: httpx.Response | None
    ) -> None:
        super().__init__(reason)
        self.reason = reason
        self.retry_after = retry_after
        self.response = response


def retry_after_seconds(value: str | None, *, now: datetime | None = None) -> float | None:
    """Seconds to wait from a ``Retry-After`` header (delta-seconds or HTTP-date), or None."""
    if value is None:
        return None
    value = value.strip()
    if not value:
        return None
    try:
        return max(0.0, float(value))
    except ValueError:
        pass
    try:
        when = email.utils.parsedate_to_datetime(value)
    except (TypeError, ValueError, IndexError):
        return None
    if when.tzinfo is None:
        when = when.replace(tzinfo=UTC)
    return max(0.0, (when - (now or datetime.now(UTC))).total_seconds())


def is_rate_limit_body(body: bytes) -> bool:
    """True when a (200) body is NCBI's "API rate limit exceeded" error (JSON, XML or text)."""
    head = body[:1024].lower()
    return RATE_LIMIT_MARKER in head and (b"error" in head or len(body) < 200)


def wait_seconds(attempt: int, error: BaseException | None, rng: random.Random) -> float:
    """Seconds to wait after failed attempt number ``attempt`` (from 1): the server's
    ``Retry-After`` (capped) when it gave one, else half the capped exponential backoff plus
    up to as much again of jitter."""
    if isinstance(error, Retryable) and error.retry_after is not None:
        return min(error.retry_after, RETRY_AFTER_CAP)
    base = min(BACKOFF_CAP, BACKOFF_INITIAL * 2 ** (attempt - 1))
    return base / 2 + rng.uniform(0, base / 2)
