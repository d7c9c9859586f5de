"""Bounded body reading: the cap and the deadline a request carries hold for every reader
(the client's own use, against a real server: test_http.py; the recorders: test_replay.py)."""

from __future__ import annotations

from collections.abc import Iterator

import httpx
import pytest

from pipeline.bodies import LIMIT_EXTENSION, ReadLimit, limit_of, read_limited
from pipeline.errors import TerminalHarvestError

URL = "https://api.example/works"


class Clock:
    """An injected clock; :class:`_Dribble` moves it one second per chunk it sends."""

    def __init__(self) -> None:
        self.now = 0.0

    def __call__(self) -> float:
        return self.now


class _Dribble(httpx.SyncByteStream):
    """``count`` one-byte chunks, one second apart on ``clock``."""

    def __init__(self, clock: Clock, count: int) -> None:
        self.clock = clock
        self.count = count

    def __iter__(self) -> Iterator[bytes]:
        for _ in range(self.count):
            self.clock.now += 1.0
            yield b"x"


def _streamed(clock: Clock, count: int) -> httpx.Response:
    """A response as the network gives it: streamed, not read yet."""
    return httpx.Response(200, stream=_Dribble(clock, count))


def _request(limit: ReadLimit | None) -> httpx.Request:
    request = httpx.Request("GET", URL)
    if limit is not None:
        request.extensions[LIMIT_EXTENSION] = limit
    return request


def test_a_read_still_going_at_the_requests_deadline_is_a_read_timeout() -> None:
    clock = Clock()
    request = _request(ReadLimit(max_bytes=100, expires=3.5, seconds=3.5, clock=clock))
    assert limit_of(request) is not None
    with pytest.raises(httpx.ReadTimeout):
        read_limited(_streamed(clock, 10), request)
    assert clock.now == 4.0  # stopped at the first chunk past the deadline, not after ten

    clock = Clock()
    request = _request(ReadLimit(max_bytes=100, expires=10.0, seconds=10.0, clock=clock))
    assert read_limited(_streamed(clock, 10), request).content == b"x" * 10


def test_a_body_read_before_it_reached_us_is_not_failed_for_the_deadline() -> None:
    clock = Clock()
    clock.now = 99.0  # long past: the body is all in, nothing is left to wait for
    request = _request(ReadLimit(max_bytes=100, expires=1.0, seconds=1.0, clock=clock))
    read = httpx.Response(200, content=b"done")
    assert read_limited(read, request).content == b"done"


@pytest.mark.parametrize(("mine", "carried", "cap"), [(5, 8, 5), (8, 5, 5), (None, 5, 5)])
def test_the_cap_is_the_smaller_of_the_readers_and_the_requests(
    mine: int | None, carried: int, cap: int
) -> None:
    clock = Clock()
    request = _request(ReadLimit(max_bytes=carried, expires=1e9, seconds=1e9, clock=clock))
    with pytest.raises(TerminalHarvestError) as caught:
        read_limited(_streamed(clock, 9), request, max_bytes=mine)
    assert caught.value.message == (
        f"GET api.example/works answered more than {cap} bytes (decoded); "
        "the answer was not read further"
    )
    assert read_limited(_streamed(Clock(), cap), request, max_bytes=mine).content == b"x" * cap


def test_a_reader_with_no_cap_at_all_is_a_programming_error() -> None:
    with pytest.raises(
        ValueError, match="read_limited needs max_bytes or a request with a ReadLimit"
    ):
        read_limited(httpx.Response(200, content=b""), _request(None))
