"""The one HTTP layer every source uses.

:class:`HttpClient` wraps :class:`httpx.Client` with

* **one retry policy** (tenacity, :mod:`pipeline.retry_policy`): only HTTP 429, 500, 502,
  503, 504, httpx transport errors and timeouts, and NCBI's "API rate limit exceeded"
  delivered inside a 200 body are retried; ``Retry-After`` (seconds or HTTP-date) is honoured
  up to a cap, otherwise a capped exponential backoff with jitter; once
  ``settings.max_attempts`` attempts are spent a :class:`~pipeline.errors.TransientHarvestError`
  names the request, the last status and the number of attempts. Any other unexpected status is a
  :class:`~pipeline.errors.TerminalHarvestError` at once, and so is a request that cannot be
  made at all (a URL httpx refuses, a scheme other than http/https, a header that cannot be
  sent): every public method raises only :class:`~pipeline.errors.HarvestError`.
* **a per-host rate limiter** (:mod:`pipeline.pacing`) paced at each API's published rate,
  so we pace instead of hammering and retrying, and a per-host cap on requests in flight.
* **redirects followed by the client itself**, each hop paced by the limiter like any other
  request, at most :data:`MAX_REDIRECTS` hops; a redirect loop or a longer chain is a
  :class:`~pipeline.errors.TerminalHarvestError`, and so is a redirect from https to http, or
  to another origin (scheme, host or port) of a request that carries credential or polite
  parameters (:data:`~pipeline.redact.CREDENTIAL_PARAMS`, in its query or its form): they
  would be sent to a host they were not meant for. Other requests may change origin (a
  download redirected to a storage host); httpx drops their ``Authorization`` header then.
* **bounded answers** (:mod:`pipeline.bodies`): the decoded body is streamed and the request
  aborted once it passes ``settings.max_response_bytes`` (a gzip bomb never inflates in
  memory), a body that cannot be decoded (bad gzip) fails that request, and every attempt has
  an overall deadline (``settings.deadline``: connecting, redirects and all reads) besides the
  read timeout. The cap and the deadline travel with each request
  (:class:`~pipeline.bodies.ReadLimit`), so a transport that reads the body before the client
  does (recording, the resume cache) is held to them too.
* **configured endpoints** (:mod:`pipeline.network`): a request built for a source's public
  API goes to the base URL configured for that source, keyed by its public URL (the resume
  cache, ``--record`` and replay match on it); without a transport of its own the client
  sends live requests through :func:`~pipeline.network.network_transport` (the proxy and CA
  settings), never through what httpx would read from the environment itself.
* **polite parameters** from :class:`~pipeline.settings.Settings` (NCBI ``tool``/``email``/
  ``api_key``, Crossref ``mailto``, openFDA ``api_key``), added only to a request for the
  configured origin of its source (scheme, host and port of its base URL: a request of that
  source to any other host gets none), and **redaction**: recorded URLs and
  request bodies lose those parameters, every log line and error message is passed through
  a :class:`~pipeline.redact.Redactor` that knows the secret values, and so is every response
  body handed on (an API may echo the key back: NCBI's rate-limit reply carries ``api-key``).

Every final exchange (the response of the last attempt, and each redirect hop before it) is
handed to ``on_exchange`` with its credentials stripped, so a snapshot can keep the raw
responses it was built from.
"""

from __future__ import annotations

import logging
import random
import time
from collections.abc import Callable, Collection, Iterator, Mapping, Sequence
from contextlib import nullcontext
from dataclasses import dataclass, replace
from pathlib import Path
from types import TracebackType
from typing import TYPE_CHECKING, BinaryIO

import httpx
from tenacity import RetryCallState, Retrying, retry_if_exception_type, stop_after_attempt

from pipeline import __version__
from pipeline.bodies import (
    LIMIT_EXTENSION,
    REDIRECT_STATUSES,
    ReadLimit,
    read_limited,
    where_of,
)
from pipeline.effects import effect, noted_refusals
from pipeline.errors import TerminalHarvestError, TransientHarvestError
from pipeline.network import (
    KEY_URL_EXTENSION,
    Endpoints,
    key_url,
    network_transport,
    same_origin,
    unsafe_hop,
)
from pipeline.pacing import DEFAULT_RATE, RateLimiter, busy_check, host_concurrency, host_rates
from pipeline.redact import (
    Redactor,
    strip_credentials,
    strip_form_credentials,
)
from pipeline.retry_policy import (
    RETRY_STATUSES,
    Retryable,
    retry_after_seconds,
    wait_seconds,
)
from pipeline.settings import BASE_URLS, Settings
from pipeline.sources import source as registered_source

if TYPE_CHECKING:  # pydantic models load with the parsers
    from pipeline.records import Refusal

log = logging.getLogger("citeseal.http")
# httpx logs every request's full URL at INFO — the NCBI and openFDA keys and the contact
# e-mail ride in the query — so an application that turns INFO on for everything would log
# them. Our own log (above) names requests with the secrets stripped; httpx and httpcore say
# only warnings.
for _quiet in ("httpx", "httpcore"):
    logging.getLogger(_quiet).setLevel(logging.WARNING)

MAX_REDIRECTS = 5  # hops followed per request
ACCEPT_ENCODING = "gzip, deflate"
SOURCE_EXTENSION = "citeseal_source"  # request extension carrying the source name


@dataclass(frozen=True)
class Exchange:
    """One recorded HTTP exchange (credentials already stripped from url and request_body)."""

    method: str
    url: str
    status: int
    content_type: str
    body: bytes
    source: str | None = None
    request_body: str | None = None


MIN_TRANSFER_RATE = 256 * 1024  # bytes/s: a file transfer slower than this is taken as stuck


@dataclass(frozen=True)
class _Answer:
    """How one request's answer is read: its size cap, each attempt's deadline (s), and for
    a download the file its body goes to."""

    max_bytes: int
    deadline: float
    sink: BinaryIO | None = None


class _FileStream(httpx.SyncByteStream):
    """A file's bytes as a request body, read from disk again each time it is sent."""

    def __init__(self, path: Path, chunk: int = 1 << 20) -> None:
        self.path = path
        self.chunk = chunk

    def __iter__(self) -> Iterator[bytes]:
        with self.path.open("rb") as handle:
            while block := handle.read(self.chunk):
                yield block


class HttpClient:
    """httpx client with the retry policy, per-host pacing, polite params and redaction.

    Use as a context manager. ``transport`` lets tests and replay mode swap the network out; a
    transport with ``offline = True`` (replay) is not paced; no retry waits past a transport's
    ``deadline`` (``time.monotonic()``, :class:`~pipeline.serve.online.DeadlineTransport`).
    ``sleep`` and ``clock`` are injectable so tests can record waits instead of sleeping.
    """

    def __init__(
        self,
        settings: Settings,
        *,
        transport: httpx.BaseTransport | None = None,
        on_exchange: Callable[[Exchange], None] | None = None,
        on_refusal: Callable[[str, Sequence[Refusal]], None] | None = None,
        sleep: Callable[[float], None] = time.sleep,
        clock: Callable[[], float] = time.monotonic,
        rates: Mapping[str, float] | None = None,
        default_rate: float = DEFAULT_RATE,
    ) -> None:
        self.settings = settings
        self._on_exchange = on_exchange
        self._on_refusal = on_refusal
        self._sleep = sleep
        self._clock = clock
        self._max_attempts = max(1, settings.max_attempts)
        self._max_bytes = settings.max_response_bytes
        self._deadline = settings.deadline
        self._random = random.Random()
        self.redact = Redactor([*settings.secrets(), settings.email])
        self._paced = not getattr(transport, "offline", False)
        self._until: float | None = getattr(transport, "deadline", None)
        self.endpoints = Endpoints.of(settings)
        self.limiter = RateLimiter(
            host_rates(settings, rates),
            default=default_rate,
            sleep=sleep,
            clock=clock,
            concurrency=host_concurrency(settings),
        )
        self._client = httpx.Client(
            transport=transport if transport is not None else network_transport(settings),
            trust_env=False,  # proxies and CAs come from the settings (pipeline.network)
            timeout=settings.timeout,
            follow_redirects=False,  # followed in _attempt: every hop paced and counted
            headers={
                "User-Agent": f"citeseal/{__version__} (biomedical citation checker)",
                "Accept-Encoding": ACCEPT_ENCODING,  # what read_limited can inflate safely
            },
        )

    # -- context manager -------------------------------------------------------------------
    def __enter__(self) -> HttpClient:
        return self

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        self.close()

    def close(self) -> None:
        self._client.close()

    # -- public API --------------------------------------------------------------------------
    def get(
        self,
        url: str,
        *,
        params: Mapping[str, str | int] | None = None,
        source: str,
        expect: Collection[int] = (200,),
    ) -> httpx.Response:
        """GET with the policy; returns a read response whose status is in ``expect``."""
        merged: dict[str, str | int] = dict(params or {})
        merged.update(self._polite(source, url))
        request = self._build("GET", url, source, params=merged)
        return self._run(request, source, expect, _Answer(self._max_bytes, self._deadline))

    def post(
        self,
        url: str,
        *,
        data: Mapping[str, str],
        source: str,
        expect: Collection[int] = (200,),
    ) -> httpx.Response:
        """POST a form with the policy (polite parameters go into the form)."""
        form: dict[str, str] = dict(data)
        form.update({k: str(v) for k, v in self._polite(source, url).items()})
        request = self._build("POST", url, source, data=form)
        return self._run(request, source, expect, _Answer(self._max_bytes, self._deadline))

    def call(
        self,
        method: str,
        url: str,
        *,
        source: str,
        headers: Mapping[str, str] | None = None,
        json: object | None = None,
        expect: Collection[int] = (200,),
    ) -> httpx.Response:
        """Any request with the policy and no polite parameters (APIs other than the sources:
        GitHub's), a JSON body when ``json`` is given."""
        request = self._build(method, url, source, headers=headers, json=json)
        return self._run(request, source, expect, _Answer(self._max_bytes, self._deadline))

    def upload(
        self,
        url: str,
        path: Path,
        *,
        source: str,
        headers: Mapping[str, str] | None = None,
        expect: Collection[int] = (201,),
    ) -> httpx.Response:
        """POST the bytes of ``path``, streamed from disk (read again for each attempt); the
        deadline of an attempt grows with the file (:data:`MIN_TRANSFER_RATE`)."""
        size = path.stat().st_size
        length = {"Content-Length": str(size)}
        request = self._build("POST", url, source, headers={**(headers or {}), **length})
        request.stream = _FileStream(path)
        return self._run(request, source, expect, _Answer(self._max_bytes, self._slow(size)))

    def download(
        self,
        url: str,
        dest: Path,
        *,
        source: str,
        size: int,
        headers: Mapping[str, str] | None = None,
    ) -> None:
        """GET ``url`` into the file ``dest``, streamed to disk: at most ``size`` bytes (the
        size the caller was told; a longer answer fails), each attempt writing it anew; the
        deadline of an attempt grows with the size (:data:`MIN_TRANSFER_RATE`). A short file
        is a TerminalHarvestError, and ``dest`` is removed on any failure."""
        request = self._build("GET", url, source, headers=headers)
        try:
            with dest.open("wb") as sink:
                self._run(request, source, (200,), _Answer(size, self._slow(size), sink))
            got = dest.stat().st_size
            if got != size:
                raise TerminalHarvestError(
                    f"GET {where_of(request)} answered {got:,} bytes, {size:,} were expected"
                )
        except BaseException:
            dest.unlink(missing_ok=True)
            raise

    def _slow(self, size: int) -> float:
        """An attempt's deadline for ``size`` bytes: the usual one plus the bytes at the
        slowest rate still taken as progress."""
        return self._deadline + size / MIN_TRANSFER_RATE

    def report_refused(self, source: str, refusals: Sequence[Refusal]) -> None:
        """Hand the records a parser refused (see :mod:`pipeline.sources.citable`) to
        ``on_refusal``; the harvest helpers call this after each parse. Without a callback
        they are logged."""
        if not refusals:
            return
        noted_refusals([r.record_id for r in refusals if r.record_id])
        if self._on_refusal is not None:
            effect(self._on_refusal, source, refusals)  # in order, on the harvest's thread
            return
        from pipeline.records import refusal_counts  # loaded with the parsers that refused

        for reason, count in refusal_counts(refusals).items():
            log.warning("%s", self.redact(f"{source}: refused {count} record(s): {reason}"))

    # -- internals ---------------------------------------------------------------------------
    def _polite(self, source: str, url: str) -> dict[str, str]:
        """The polite and credential parameters of ``source``, for a request to ``url`` at
        the configured origin of that source only (none for any other host)."""
        s = self.settings
        if source not in BASE_URLS or not same_origin(
            self.endpoints.send_to(url) or url, s.base_url(source)
        ):
            return {}
        return registered_source(source).polite(s)

    def _build(self, method: str, url: str, source: str, **parts: object) -> httpx.Request:
        """The request, or a TerminalHarvestError when httpx cannot make it (a URL with a
        control character, too long, a bad port; a header that is not ASCII). A URL under a
        source's public base goes to its configured base, keyed by the public URL
        (:mod:`pipeline.network`)."""
        moved = self.endpoints.send_to(url)
        try:
            request = self._client.build_request(
                method,
                moved or url,
                extensions={SOURCE_EXTENSION: source},
                **parts,  # type: ignore[arg-type]  (the keyword arguments of build_request)
            )
            public = self.endpoints.public(str(request.url)) if moved is not None else None
            if public is not None:
                request.extensions[KEY_URL_EXTENSION] = public
            return request
        except (httpx.InvalidURL, UnicodeError) as error:
            raise self._unsendable(method, _where_text(moved or url), error) from None

    def _unsendable(self, method: str, where: str, error: Exception) -> TerminalHarvestError:
        reason = " ".join(str(error).split())[:120] or type(error).__name__
        return TerminalHarvestError(self.redact(f"{method} {where} cannot be requested: {reason}"))

    def _run(
        self, request: httpx.Request, source: str, expect: Collection[int], answer: _Answer
    ) -> httpx.Response:
        """``request`` under the retry policy; the final answer checked against ``expect``."""
        method = request.method
        where = self._where(request)
        retrying = Retrying(
            retry=retry_if_exception_type(Retryable),
            stop=stop_after_attempt(self._max_attempts),
            wait=self._wait,
            sleep=self._sleep,
            before_sleep=lambda state: self._log_retry(where, state),
            reraise=True,
        )
        try:
            response = retrying(self._attempt, request, source, expect, answer)
        except Retryable as final:
            if final.response is not None:
                self._emit(final.response.request, final.response, source)
            raise TransientHarvestError(
                self.redact(
                    f"{method} {where} failed after {self._max_attempts} attempts: {final.reason}"
                ),
                advice="the service is busy or unreachable; try again later "
                "(CITESEAL_MAX_ATTEMPTS sets the number of attempts)",
            ) from None
        except (httpx.InvalidURL, httpx.HTTPError) as error:  # none the policy knows
            raise self._unsendable(method, where, error) from None
        status = response.status_code
        if status not in expect:
            self._emit(response.request, response, source)
            snippet = " ".join(response.text[:200].split())
            detail = f": {snippet}" if snippet else ""
            raise TerminalHarvestError(
                self.redact(f"{method} {where} answered HTTP {status} {response.reason_phrase}")
                + self.redact(detail)
            )
        self._emit(response.request, response, source)
        return response

    def _attempt(
        self, request: httpx.Request, source: str, expect: Collection[int], answer: _Answer
    ) -> httpx.Response:
        started = self._clock()
        limit = ReadLimit(answer.max_bytes, started + answer.deadline, answer.deadline, self._clock)
        if answer.sink is not None:  # a download starts its file again
            answer.sink.seek(0)
            answer.sink.truncate()
        response = self._follow(request, source, expect, limit, answer.sink)
        status = response.status_code
        log.debug(
            "%s",
            self.redact(
                f"{request.method} {strip_credentials(str(response.request.url))} -> {status} "
                f"({len(response.content)} bytes, {self._clock() - started:.2f} s)"
            ),
        )
        busy = busy_check(source, request.url.host)  # the source's Rate says how (pacing)
        if busy is not None and status in expect and busy(response.content):
            raise Retryable("API rate limit exceeded (reported in the body)", response=response)
        if status in RETRY_STATUSES and status not in expect:
            raise Retryable(
                f"HTTP {status} {response.reason_phrase}".rstrip(),
                retry_after=retry_after_seconds(response.headers.get("retry-after")),
                response=response,
            )
        return response

    def _follow(
        self,
        request: httpx.Request,
        source: str,
        expect: Collection[int],
        limit: ReadLimit,
        sink: BinaryIO | None,
    ) -> httpx.Response:
        """Send ``request`` and follow its redirects: each hop is paced, sent within what is
        left of the deadline and handed to ``on_exchange``; a loop, more than
        :data:`MAX_REDIRECTS` hops or a hop :func:`unsafe_hop` names is a
        TerminalHarvestError."""
        visited = [str(request.url)]
        current = request
        while True:
            response = self._send(current, limit, sink)
            following = response.next_request
            if response.status_code not in REDIRECT_STATUSES or following is None:
                return response
            if response.status_code in expect:
                return response
            self._emit(current, response, source)
            target = str(following.url)
            chain = " -> ".join(where_of(httpx.Request("GET", u)) for u in [*visited, target])
            what = f"{request.method} {where_of(request)}"
            if target in visited:
                raise TerminalHarvestError(self.redact(f"{what} redirects in a loop: {chain}"))
            if len(visited) > MAX_REDIRECTS:
                raise TerminalHarvestError(
                    self.redact(f"{what} redirects more than {MAX_REDIRECTS} times: {chain}")
                )
            unsafe = unsafe_hop(current, following)
            if unsafe is not None:
                raise TerminalHarvestError(
                    self.redact(f"{what} redirects {unsafe}; not followed"),
                    advice="credentials go only to the host they are meant for, and never over "
                    "plain http; check the base URL of the source",
                )
            visited.append(target)
            following.extensions.setdefault(SOURCE_EXTENSION, source)
            public = self.endpoints.public(target)
            if public is not None:  # a hop within a configured base keeps its public key
                following.extensions[KEY_URL_EXTENSION] = public
            current = following

    def _send(
        self, request: httpx.Request, limit: ReadLimit, sink: BinaryIO | None
    ) -> httpx.Response:
        """One paced exchange, streamed and read with the size cap and the deadline, which
        travel with the request (:data:`~pipeline.bodies.LIMIT_EXTENSION`) to every transport
        that reads the body before we do."""
        with self.limiter.start(request.url.host) if self._paced else nullcontext():
            left = limit.left()
            if left <= 0:
                late = f"no answer within the deadline of {limit.seconds:g} s"
                raise Retryable(late, response=None)
            timeout = httpx.Timeout(min(self.settings.timeout, left))
            request.extensions["timeout"] = timeout.as_dict()
            request.extensions[LIMIT_EXTENSION] = limit
            try:
                response = self._client.send(request, stream=True)
                return read_limited(response, request, sink=sink)
            except (httpx.UnsupportedProtocol, httpx.LocalProtocolError) as error:
                raise self._unsendable(request.method, where_of(request), error) from None
            except httpx.TransportError as error:
                reason = type(error).__name__
                if limit.passed():
                    reason = f"no answer within the deadline of {limit.seconds:g} s"
                raise Retryable(reason, response=None) from error
            except httpx.DecodingError as error:  # a transport below decoded the body itself
                raise TerminalHarvestError(
                    f"{request.method} {where_of(request)} answered a body that cannot be decoded: "
                    f"{' '.join(str(error).split())[:120]}"
                ) from None

    def _wait(self, state: RetryCallState) -> float:
        outcome = state.outcome
        error = outcome.exception() if outcome is not None else None
        wait = wait_seconds(state.attempt_number, error, self._random)
        if self._until is None:
            return wait
        return min(wait, max(0.0, self._until - time.monotonic()))  # not past the deadline

    def _log_retry(self, where: str, state: RetryCallState) -> None:
        outcome = state.outcome
        error = outcome.exception() if outcome is not None else None
        reason = error.reason if isinstance(error, Retryable) else repr(error)
        wait = state.next_action.sleep if state.next_action is not None else 0.0
        log.warning(
            "%s",
            self.redact(
                f"{where}: {reason}; attempt {state.attempt_number}/{self._max_attempts}, "
                f"retrying in {wait:.1f} s"
            ),
        )

    @staticmethod
    def _where(request: httpx.Request) -> str:
        return where_of(request)

    def _emit(self, request: httpx.Request, response: httpx.Response, source: str) -> None:
        if self._on_exchange is not None:
            exchange = exchange_from(request, response, source)
            body = self.redact.bytes(exchange.body)  # an echoed key must not reach a snapshot
            effect(  # in order, on the harvest's thread (pipeline.effects)
                self._on_exchange,
                replace(exchange, body=body) if body != exchange.body else exchange,
            )


def _where_text(url: str) -> str:
    """``host[:port]/path`` of a URL httpx may not parse, for messages: no scheme, no query
    or fragment (they may hold credentials), control characters escaped (one line), at most
    120 characters."""
    rest = url.split("://", 1)[-1].split("?", 1)[0].split("#", 1)[0]
    shown = "".join(c if c.isprintable() else repr(c)[1:-1] for c in rest[:121])
    return shown if len(shown) <= 120 else shown[:119] + "…"


def exchange_from(
    request: httpx.Request, response: httpx.Response, source: str | None = None
) -> Exchange:
    """An :class:`Exchange` for a request/response pair (credentials stripped)."""
    request_body = None
    streamed = isinstance(request.stream, _FileStream)  # a file's bytes are not recorded
    if request.method != "GET" and not streamed and request.content:
        request_body = strip_form_credentials(request.content.decode("utf-8", "replace"))
    return Exchange(
        method=request.method,
        url=strip_credentials(key_url(request)),
        status=response.status_code,
        content_type=response.headers.get("content-type", ""),
        body=response.content,
        source=source,
        request_body=request_body,
    )
