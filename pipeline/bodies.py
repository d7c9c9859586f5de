"""Bounded reading of response bodies: a size cap, safe inflation and a deadline.

Every layer that reads an answer's body — :class:`~pipeline.http.HttpClient` itself and the
transports that wrap the network and read the body before the client sees it (the recorder
of :mod:`pipeline.replay`, the resume cache of :mod:`pipeline.snapshot.resume`) — reads it
with :func:`read_limited`, so the same bounds hold however many layers there are:

* **the size cap**: at most ``max_bytes`` of *decoded* body; past it the stream is closed and
  the request fails (:class:`~pipeline.errors.TerminalHarvestError`). The body is inflated
  piece by piece (:class:`_Inflater`), so a gzip bomb never inflates in memory.
* **the encoding**: a body that cannot be decoded (bad gzip, an encoding we did not ask for)
  fails the request.
* **the deadline**: the client puts a :class:`ReadLimit` on every request it sends (each hop
  of each attempt, the :data:`LIMIT_EXTENSION` request extension). It carries the attempt's
  cap and the clock time its deadline expires, and :func:`read_limited` honours it while the
  body streams in, whichever layer reads. A read still going on at that time raises
  :class:`httpx.ReadTimeout`, which the retry policy treats as a timeout.

A layer that records answers writes one only after :func:`read_limited` returned, so an
answer that failed any of these bounds is never recorded or cached.
"""

from __future__ import annotations

import time
import zlib
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from typing import BinaryIO

import httpx

from pipeline.errors import TerminalHarvestError

LIMIT_EXTENSION = "citeseal_limit"  # request extension carrying the attempt's ReadLimit
REDIRECT_STATUSES = frozenset({301, 302, 303, 307, 308})
INFLATE_PIECE = 1 << 20  # bytes inflated per step: a bomb's chunk never becomes one huge piece
_DROPPED_HEADERS = frozenset({"content-encoding", "content-length", "transfer-encoding"})


@dataclass(frozen=True)
class ReadLimit:
    """How much of an answer may be read, and until when: ``max_bytes`` of decoded body, and
    reading must be over at ``expires`` (a ``clock`` time). ``seconds`` is the attempt's
    deadline as configured, for messages."""

    max_bytes: int
    expires: float
    seconds: float
    clock: Callable[[], float] = field(default=time.monotonic, compare=False)

    def left(self) -> float:
        """Seconds until the deadline (negative once it passed)."""
        return self.expires - self.clock()

    def passed(self) -> bool:
        return self.clock() > self.expires


def limit_of(request: httpx.Request) -> ReadLimit | None:
    """The :class:`ReadLimit` the client put on ``request``, if any."""
    limit = request.extensions.get(LIMIT_EXTENSION)
    return limit if isinstance(limit, ReadLimit) else None


def where_of(request: httpx.Request) -> str:
    """``host[:port]/path`` of a request, for messages (no query: it may hold credentials)."""
    url = request.url
    port = f":{url.port}" if url.port else ""
    return f"{url.host}{port}{url.path}"


class _Inflater:
    """Decodes a ``gzip``/``deflate``/identity body chunk by chunk, in pieces of at most
    :data:`INFLATE_PIECE` bytes and never more than the room left under the cap, so a small
    chunk of a gzip bomb cannot inflate to megabytes in one call — what httpx's own decoders
    would do."""

    def __init__(self, encoding: str) -> None:
        self.encoding = encoding
        if encoding in {"", "identity"}:
            self._zlib = None
        elif encoding in {"gzip", "x-gzip"}:
            self._zlib = zlib.decompressobj(16 + zlib.MAX_WBITS)
        elif encoding == "deflate":
            self._zlib = zlib.decompressobj()
        else:
            raise ValueError(f"unsupported content-encoding {encoding!r}")

    def feed(self, chunk: bytes, room: int) -> Iterator[bytes]:
        """The decoded bytes of ``chunk``, in pieces; stops once ``room`` is passed."""
        if self._zlib is None:
            yield chunk
            return
        data = chunk
        while data and room >= 0:
            piece = self._zlib.decompress(data, min(room + 1, INFLATE_PIECE))
            room -= len(piece)
            yield piece
            data = self._zlib.unconsumed_tail


def _raw_chunks(response: httpx.Response) -> Iterator[tuple[bytes, bool]]:
    """``(chunk, already decoded)``: the raw stream, or the content of a response that was
    read before it reached us (an in-process transport builds its responses read, and a
    recording transport reads the stream before handing the answer on)."""
    try:
        content = response.content
    except httpx.ResponseNotRead:
        for chunk in response.iter_raw():
            yield chunk, False
        return
    yield content, True


def read_limited(
    response: httpx.Response,
    request: httpx.Request,
    *,
    max_bytes: int | None = None,
    sink: BinaryIO | None = None,
) -> httpx.Response:
    """A streamed response read whole, decoded, into a new response, within the bounds of
    the module docstring: the cap is the smaller of ``max_bytes`` and that of the request's
    :class:`ReadLimit` (at least one must be given), and the deadline that of the
    :class:`ReadLimit`, checked after every chunk that arrives (a body that was read before it
    reached us has nothing left to wait for, and is not checked again).

    The new response has the same status, headers (less the content and transfer encodings,
    which no longer apply), ``request`` and ``next_request``. With a ``sink`` (a download), the
    body of an answer that is not a redirect is written there instead, and the new response
    holds none.
    """
    limit = limit_of(request)
    caps = [c for c in (max_bytes, limit.max_bytes if limit else None) if c is not None]
    if not caps:
        raise ValueError("read_limited needs max_bytes or a request with a ReadLimit")
    cap = min(caps)
    what = f"{request.method} {where_of(request)}"
    encoding = response.headers.get("content-encoding", "").strip().lower()
    if response.status_code in REDIRECT_STATUSES and response.next_request is not None:
        sink = None  # a hop's own body is never the answer
    chunks: list[bytes] = []
    size = 0
    try:
        inflater = _Inflater(encoding)
        for raw, decoded in _raw_chunks(response):
            pieces = [raw] if decoded else inflater.feed(raw, cap - size)
            for piece in pieces:
                size += len(piece)
                if size > cap:
                    raise TerminalHarvestError(
                        f"{what} answered more than {cap:,} bytes (decoded); "
                        "the answer was not read further",
                        advice="CITESEAL_MAX_RESPONSE_BYTES sets the largest answer accepted",
                    )
                if sink is not None:
                    sink.write(piece)
                else:
                    chunks.append(piece)
            if not decoded and limit is not None and limit.passed():
                raise httpx.ReadTimeout("the request deadline passed", request=request)
    except (zlib.error, ValueError, httpx.DecodingError) as error:
        raise TerminalHarvestError(
            f"{what} answered a body that cannot be decoded (content-encoding "
            f"{encoding or 'none'}): {' '.join(str(error).split())[:120]}"
        ) from None
    finally:
        response.close()
    headers = [(k, v) for k, v in response.headers.multi_items() if k not in _DROPPED_HEADERS]
    extensions = {k: v for k, v in response.extensions.items() if k != "network_stream"}
    read = httpx.Response(
        response.status_code,
        headers=headers,
        content=b"".join(chunks),
        request=request,
        extensions=extensions,
    )
    read.next_request = response.next_request
    return read
