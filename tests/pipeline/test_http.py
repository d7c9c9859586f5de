"""The HTTP layer against a real loopback HTTP server: retries, pacing, polite params, secrets."""

from __future__ import annotations

import dataclasses
import email.utils
import logging
import random
import threading
import time
import tracemalloc
import zlib
from collections import deque
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from urllib.parse import parse_qs, urlsplit

import httpx
import pytest

from pipeline.errors import TerminalHarvestError, TransientHarvestError
from pipeline.http import MAX_REDIRECTS, Exchange, HttpClient
from pipeline.pacing import busy_check
from pipeline.retry_policy import (
    BACKOFF_CAP,
    RETRY_AFTER_CAP,
    Retryable,
    is_rate_limit_body,
    retry_after_seconds,
    wait_seconds,
)
from pipeline.settings import Settings
from pipeline.sources import registered
from pipeline.sources.base import Rate
from tests.pipeline.sources import example_source

HOST = "127.0.0.1"
NO_PACING = {HOST: 0.0}


@dataclass
class Seen:
    at: float
    method: str
    path: str
    query: dict[str, list[str]]
    body: str
    headers: dict[str, str] = field(default_factory=dict)


@dataclass
class Loopback:
    """A scripted HTTP server: answers from ``script`` (then 200 "ok"), logs every request."""

    server: ThreadingHTTPServer
    script: deque[tuple[int, dict[str, str], bytes]] = field(default_factory=deque)
    seen: list[Seen] = field(default_factory=list)
    lock: threading.Lock = field(default_factory=threading.Lock)

    @property
    def port(self) -> int:
        return self.server.server_address[1]

    def url(self, path: str = "/entrez/eutils/efetch.fcgi") -> str:
        return f"http://{HOST}:{self.port}{path}"

    def answer(self, status: int, body: bytes = b"", **headers: str) -> None:
        self.script.append((status, {k.replace("_", "-"): v for k, v in headers.items()}, body))


@contextmanager
def running() -> Iterator[Loopback]:
    """A :class:`Loopback` server on a free port of 127.0.0.1."""
    state: dict[str, Loopback] = {}

    class Handler(BaseHTTPRequestHandler):
        def _serve(self) -> None:
            box = state["box"]
            length = int(self.headers.get("content-length") or 0)
            body = self.rfile.read(length).decode("utf-8") if length else ""
            parts = urlsplit(self.path)
            with box.lock:
                query = parse_qs(parts.query)
                headers = {k.lower(): v for k, v in self.headers.items()}
                box.seen.append(
                    Seen(time.monotonic(), self.command, parts.path, query, body, headers)
                )
                status, headers, content = box.script.popleft() if box.script else (200, {}, b"ok")
            self.send_response(status)
            for name, value in headers.items():
                self.send_header(name, value)
            self.send_header("Content-Type", headers.get("content-type", "text/plain"))
            self.send_header("Content-Length", str(len(content)))
            self.end_headers()
            self.wfile.write(content)

        do_GET = _serve
        do_POST = _serve

        def log_message(self, format: str, *args: object) -> None:
            del format, args

    server = ThreadingHTTPServer((HOST, 0), Handler)
    state["box"] = box = Loopback(server)
    thread = threading.Thread(target=server.serve_forever, args=(0.02,), daemon=True)
    thread.start()
    try:
        yield box
    finally:
        server.shutdown()
        server.server_close()
        thread.join(timeout=5)


@pytest.fixture
def loopback() -> Iterator[Loopback]:
    with running() as box:
        yield box


@pytest.fixture
def elsewhere() -> Iterator[Loopback]:
    """A second server: the same host on another port, so another origin."""
    with running() as box:
        yield box


def at(loopback: Loopback, settings: Settings, *sources: str) -> Settings:
    """``settings`` with the base URL of each of ``sources`` on ``loopback`` (polite and
    credential parameters go only to the configured origin of their source)."""
    base = f"http://{HOST}:{loopback.port}"
    return dataclasses.replace(settings, base_urls=dict.fromkeys(sources, base))


def client(settings: Settings | None = None, **kwargs: object) -> tuple[HttpClient, list[float]]:
    waits: list[float] = []
    kwargs.setdefault("rates", NO_PACING)
    made = HttpClient(settings or Settings(), sleep=waits.append, **kwargs)  # type: ignore[arg-type]
    return made, waits


def test_429_with_retry_after_seconds_is_honoured(loopback: Loopback) -> None:
    loopback.answer(429, b"slow down", Retry_After="7")
    loopback.answer(200, b"<ok/>")
    http, waits = client()
    with http:
        response = http.get(loopback.url(), params={"db": "pubmed"}, source="pubmed")
    assert response.content == b"<ok/>"
    assert waits == [7.0]
    assert len(loopback.seen) == 2


def test_retry_after_http_date_is_honoured_and_long_waits_are_capped(loopback: Loopback) -> None:
    soon = email.utils.format_datetime(datetime.now(UTC) + timedelta(seconds=30), usegmt=True)
    loopback.answer(503, Retry_After=soon)
    loopback.answer(429, Retry_After="3600")
    http, waits = client()
    with http:
        assert http.get(loopback.url(), source="crossref").status_code == 200
    assert 27.0 <= waits[0] <= 30.0
    assert waits[1] == RETRY_AFTER_CAP == 60.0


def test_a_503_storm_gives_up_after_the_policy_with_a_clear_error(loopback: Loopback) -> None:
    for _ in range(10):
        loopback.answer(503, b"busy")
    http, waits = client(Settings(max_attempts=4))
    with http, pytest.raises(TransientHarvestError) as caught:
        http.get(loopback.url(), params={"id": "1"}, source="pubmed")
    assert caught.value.message == (
        f"GET 127.0.0.1:{loopback.port}/entrez/eutils/efetch.fcgi failed after 4 attempts: "
        "HTTP 503 Service Unavailable"
    )
    assert caught.value.exit_code == 3
    assert len(loopback.seen) == 4
    # capped exponential backoff with jitter: attempt n waits within [b/2, b], b = 2**(n-1) s
    assert len(waits) == 3
    for n, wait in enumerate(waits, start=1):
        assert 2 ** (n - 1) / 2 <= wait <= 2 ** (n - 1)


def test_other_4xx_fail_at_once_and_expected_statuses_are_returned(loopback: Loopback) -> None:
    loopback.answer(404, b"no such\nthing")
    loopback.answer(404, b'{"error":{"code":"NOT_FOUND","message":"No matches found!"}}')
    http, waits = client()
    with http:
        with pytest.raises(TerminalHarvestError) as caught:
            http.get(loopback.url("/drug/label.json"), source="openfda")
        assert caught.value.message == (
            f"GET 127.0.0.1:{loopback.port}/drug/label.json answered HTTP 404 Not Found: "
            "no such thing"
        )
        answer = http.get(loopback.url("/drug/label.json"), source="openfda", expect=(200, 404))
    assert answer.status_code == 404
    assert waits == []


def test_transport_errors_are_retried_then_reported() -> None:
    http, waits = client(Settings(max_attempts=2))
    with http, pytest.raises(TransientHarvestError) as caught:
        http.get(f"http://{HOST}:9/closed", source="pubmed")  # discard port: refused
    assert caught.value.message == f"GET {HOST}:9/closed failed after 2 attempts: ConnectError"
    assert len(waits) == 1


@pytest.mark.parametrize(
    "limited",
    [
        b'{"error":"API rate limit exceeded","count":"11"}',
        b"<?xml version='1.0'?><eFetchResult><ERROR>API rate limit exceeded</ERROR></eFetchResult>",
    ],
)
def test_ncbi_rate_limit_inside_a_200_body_is_retried(loopback: Loopback, limited: bytes) -> None:
    loopback.answer(200, limited)
    loopback.answer(200, b"<PubmedArticleSet/>")
    http, waits = client()
    with http:
        response = http.get(loopback.url(), source="pubmed")
    assert response.content == b"<PubmedArticleSet/>"
    assert len(loopback.seen) == 2
    assert len(waits) == 1


def test_a_source_of_ones_own_says_how_its_host_refuses_for_rate_in_a_body() -> None:
    """A registered source's ``Rate.busy`` is the client's and the recorder's check (no table
    of sources in pipeline/http.py): its "busy" 200 is retried, that of another is not."""
    bodies = [b"BUSY", b'{"results": []}']
    transport = httpx.MockTransport(lambda _: httpx.Response(200, content=bodies.pop(0)))
    plugin = dataclasses.replace(
        example_source.PLUGIN,
        rate=Rate("notes.example", 5.0, busy=lambda body: body == b"BUSY"),
    )
    with registered(plugin):
        assert busy_check("notes", "mirror.example") is plugin.rate.busy  # type: ignore[union-attr]
        assert busy_check(None, "notes.example") is plugin.rate.busy  # type: ignore[union-attr]
        http, waits = client(transport=transport, rates={"notes.example": 0.0})
        with http:
            response = http.get("https://notes.example/api/notes", source="notes")
    assert response.content == b'{"results": []}'
    assert len(waits) == 1 and bodies == []
    assert busy_check("crossref", "api.crossref.org") is None
    assert busy_check("pubmed", "mirror.example") is is_rate_limit_body  # NCBI's, by name
    assert busy_check(None, "www.ncbi.nlm.nih.gov") is is_rate_limit_body  # and by host


def test_rate_limit_body_detection_ignores_ordinary_text() -> None:
    assert is_rate_limit_body(b'{"error":"API rate limit exceeded","count":"11"}')
    assert not is_rate_limit_body(b'{"esearchresult":{"count":"1","idlist":["1"]}}')
    long_abstract = b"<Abstract>" + b"word " * 400 + b"API rate limit exceeded</Abstract>"
    assert not is_rate_limit_body(long_abstract)


class StampedTransport(httpx.HTTPTransport):
    """Records the moment each request leaves the client (what the limiter governs)."""

    def __init__(self) -> None:
        super().__init__()
        self.stamps: list[float] = []
        self._lock = threading.Lock()

    def handle_request(self, request: httpx.Request) -> httpx.Response:
        with self._lock:
            self.stamps.append(time.monotonic())
        return super().handle_request(request)


def assert_paced(times: list[float], interval: float, tolerance: float) -> None:
    """No k+1 consecutive request starts within less than k intervals.

    The stamps are taken after the limiter releases a request, so a stamp delayed by a busy
    machine shortens the gap to the next one by that delay: the tolerance absorbs 20 ms of
    scheduling jitter, far below what an unpaced client shows (k intervals, not 20 ms).
    """
    times = sorted(times)
    for i in range(len(times)):
        for k in range(1, len(times) - i):
            assert times[i + k] - times[i] >= k * interval - tolerance, (i, k)


def test_the_rate_limiter_never_exceeds_the_configured_rate(loopback: Loopback) -> None:
    transport = StampedTransport()
    http = HttpClient(Settings(), transport=transport, rates={HOST: 20.0})
    with http:
        for _ in range(10):
            http.get(loopback.url(), source="europepmc")
    assert len(transport.stamps) == len(loopback.seen) == 10
    assert_paced(transport.stamps, 0.05, tolerance=0.02)  # measured at the client
    # and, looser, at the server: a handler thread scheduled late on a busy host stamps its
    # arrival late (0.41 s for 0.45 s of pacing was seen at load 9), while an unpaced client
    # lands all ten within a few milliseconds: half the paced span tells the two apart
    arrivals = [s.at for s in loopback.seen]
    assert arrivals[-1] - arrivals[0] >= 9 * 0.05 / 2


def test_the_rate_limiter_holds_across_threads(loopback: Loopback) -> None:
    transport = StampedTransport()
    http = HttpClient(Settings(), transport=transport, rates={HOST: 20.0})

    def work() -> None:
        for _ in range(3):
            http.get(loopback.url(), source="europepmc")

    with http:
        threads = [threading.Thread(target=work) for _ in range(4)]
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join()
    assert len(transport.stamps) == len(loopback.seen) == 12
    assert_paced(transport.stamps, 0.05, tolerance=0.02)


def test_retry_after_parsing() -> None:
    now = datetime(2025, 1, 1, 12, 0, 0, tzinfo=UTC)
    assert retry_after_seconds("12") == 12.0
    assert retry_after_seconds("Wed, 01 Jan 2025 12:00:30 GMT", now=now) == 30.0
    assert retry_after_seconds("Wed, 01 Jan 2025 11:00:00 GMT", now=now) == 0.0
    assert retry_after_seconds("soon") is None
    assert retry_after_seconds(None) is None


def test_polite_params_are_sent_but_secrets_never_logged_or_recorded(
    loopback: Loopback, caplog: pytest.LogCaptureFixture
) -> None:
    secret, mail = "ncbi-secret-key-0123456789", "person@example.org"
    for _ in range(3):
        loopback.answer(503)
    exchanges: list[Exchange] = []
    settings = Settings(ncbi_api_key=secret, email=mail, max_attempts=3)
    http, _ = client(at(loopback, settings, "pubmed"), on_exchange=exchanges.append)
    caplog.set_level(logging.DEBUG)  # everything, as an application logging all would
    with http, pytest.raises(TransientHarvestError) as caught:
        http.get(loopback.url(), params={"db": "pubmed", "id": "1"}, source="pubmed")
    sent = loopback.seen[0].query
    assert sent["api_key"] == [secret]
    assert sent["email"] == [mail]
    assert sent["tool"] == ["citeseal"]
    assert caplog.records, "retries are logged"
    for text in (caplog.text, str(caught.value), *(e.url for e in exchanges)):
        assert secret not in text
        assert mail not in text
        assert "person%40example.org" not in text
    assert exchanges[-1].url == f"{loopback.url()}?db=pubmed&id=1"


def test_post_sends_polite_params_in_the_form_and_records_it_without_them(
    loopback: Loopback,
) -> None:
    exchanges: list[Exchange] = []
    settings = at(loopback, Settings(ncbi_api_key="k" * 36), "pubmed")
    http, _ = client(settings, on_exchange=exchanges.append)
    with http:
        http.post(loopback.url(), data={"db": "pubmed", "id": "1,2"}, source="pubmed")
    form = parse_qs(loopback.seen[0].body)
    assert loopback.seen[0].method == "POST"
    assert form["id"] == ["1,2"]
    assert form["api_key"] == ["k" * 36]
    assert exchanges == [
        Exchange(
            method="POST",
            url=loopback.url(),
            status=200,
            content_type="text/plain",
            body=b"ok",
            source="pubmed",
            request_body="db=pubmed&id=1,2",
        )
    ]


def test_crossref_gets_mailto_and_openfda_its_key(loopback: Loopback) -> None:
    settings = Settings(email="me@example.org", openfda_api_key="fda-key-123")
    http, _ = client(at(loopback, settings, "crossref", "openfda", "clinicaltrials"))
    with http:
        http.get(loopback.url("/works"), source="crossref")
        http.get(loopback.url("/drug/label.json"), source="openfda")
        http.get(loopback.url("/api/v2/studies"), source="clinicaltrials")
    assert loopback.seen[0].query == {"mailto": ["me@example.org"]}
    assert loopback.seen[1].query == {"api_key": ["fda-key-123"]}
    assert loopback.seen[2].query == {}


# -- redirects, size cap, deadline, bad encodings, echoed secrets -------------------------------
def test_every_redirect_hop_goes_through_the_rate_limiter(loopback: Loopback) -> None:
    for hop in range(1, 5):
        loopback.answer(302, b"", Location=f"/hop/{hop}")
    loopback.answer(200, b"<done/>")
    transport = StampedTransport()
    exchanges: list[Exchange] = []
    http = HttpClient(
        Settings(), transport=transport, rates={HOST: 20.0}, on_exchange=exchanges.append
    )
    with http:
        for _ in range(2):
            loopback.script.extend([(302, {"Location": "/hop/1"}, b""), (200, {}, b"<done/>")])
        response = http.get(loopback.url("/start"), source="europepmc")
        http.get(loopback.url("/start"), source="europepmc")
    assert response.content == b"<done/>"
    assert [s.path for s in loopback.seen[:5]] == ["/start", "/hop/1", "/hop/2", "/hop/3", "/hop/4"]
    assert len(transport.stamps) == len(loopback.seen) == 7
    assert_paced(transport.stamps, 0.05, tolerance=0.02)  # 20/s holds across the hops
    assert [e.status for e in exchanges] == [302, 302, 302, 302, 200, 302, 200]
    assert exchanges[4].url == loopback.url("/hop/4")  # each hop recorded under its own URL


def test_a_redirect_loop_is_a_terminal_failure_naming_the_chain(loopback: Loopback) -> None:
    loopback.answer(301, b"", Location="/b")
    loopback.answer(301, b"", Location="/a")
    http, _ = client()
    with http, pytest.raises(TerminalHarvestError) as caught:
        http.get(loopback.url("/a"), source="crossref")
    where = f"127.0.0.1:{loopback.port}"
    assert caught.value.message == (
        f"GET {where}/a redirects in a loop: {where}/a -> {where}/b -> {where}/a"
    )
    assert len(loopback.seen) == 2


def test_a_redirect_chain_longer_than_the_hop_limit_is_a_terminal_failure(
    loopback: Loopback,
) -> None:
    for hop in range(1, MAX_REDIRECTS + 2):
        loopback.answer(307, b"", Location=f"/{hop}")
    http, _ = client()
    with http, pytest.raises(TerminalHarvestError) as caught:
        http.get(loopback.url("/0"), source="crossref")
    where = f"127.0.0.1:{loopback.port}"
    chain = " -> ".join(f"{where}/{n}" for n in range(MAX_REDIRECTS + 2))
    assert caught.value.message == f"GET {where}/0 redirects more than 5 times: {chain}"
    assert len(loopback.seen) == MAX_REDIRECTS + 1


def _gzip_bomb(inflated: int) -> bytes:
    """A gzip body of ``inflated`` zero bytes, compressed without holding them in memory."""
    packer = zlib.compressobj(9, zlib.DEFLATED, 31)
    block = b"0" * (1 << 20)
    parts = [packer.compress(block) for _ in range(inflated // len(block))]
    return b"".join([*parts, packer.flush()])


def test_a_128_mib_gzip_bomb_is_aborted_at_the_default_cap_without_inflating_in_memory(
    loopback: Loopback,
) -> None:
    bomb = _gzip_bomb(128 << 20)  # the reproducer: ~128 KiB on the wire
    loopback.answer(200, bomb, Content_Encoding="gzip")
    settings = Settings(max_attempts=3)
    http, _ = client(settings)
    tracemalloc.start()
    try:
        with http, pytest.raises(TerminalHarvestError) as caught:
            http.get(loopback.url(), source="pubmed")
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert settings.max_response_bytes == 64 << 20
    assert caught.value.message == (
        f"GET 127.0.0.1:{loopback.port}/entrez/eutils/efetch.fcgi answered more than "
        "67,108,864 bytes (decoded); the answer was not read further"
    )
    assert caught.value.advice == "CITESEAL_MAX_RESPONSE_BYTES sets the largest answer accepted"
    assert peak < 100 << 20  # the cap and one piece, not the 128 MiB (nor 1.9 GB) of before
    assert len(loopback.seen) == 1  # too large is not retried


def test_a_lower_cap_stops_a_bomb_long_before_it_inflates(loopback: Loopback) -> None:
    loopback.answer(200, _gzip_bomb(64 << 20), Content_Encoding="gzip")
    http, _ = client(Settings(max_response_bytes=1 << 20))
    tracemalloc.start()
    try:
        with http, pytest.raises(TerminalHarvestError, match="more than 1,048,576 bytes"):
            http.get(loopback.url(), source="pubmed")
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert peak < 8 << 20


def test_a_bad_gzip_body_fails_that_request_with_a_clear_error(loopback: Loopback) -> None:
    loopback.answer(200, b"\x1f\x8b\x08\x00 this is not a gzip stream", Content_Encoding="gzip")
    http, _ = client()
    with http, pytest.raises(TerminalHarvestError) as caught:
        http.get(loopback.url(), source="pubmed")
    assert caught.value.message.startswith(
        f"GET 127.0.0.1:{loopback.port}/entrez/eutils/efetch.fcgi answered a body that cannot "
        "be decoded (content-encoding gzip): "
    )


def test_a_slow_answer_that_never_trips_the_read_timeout_is_ended_by_the_deadline(
    dribbling: str,
) -> None:
    http, _ = client(Settings(timeout=5.0, deadline=0.5, max_attempts=1))
    started = time.monotonic()
    with http, pytest.raises(TransientHarvestError) as caught:
        http.get(dribbling, source="europepmc")
    assert caught.value.message == (
        f"GET {HOST}:{dribbling.split(':')[2].split('/')[0]}/slow failed after 1 attempts: "
        "no answer within the deadline of 0.5 s"
    )
    assert time.monotonic() - started < 2.0  # not the 3 s the body takes, nor the 5 s timeout


def test_an_echoed_api_key_is_redacted_from_the_stored_body_and_the_error(
    loopback: Loopback,
) -> None:
    secret, mail = "ncbi-echoed-key-0123456789", "person@example.org"
    echo = (
        b'{"error":"API rate limit exceeded","api-key":"' + secret.encode() + b'",'
        b'"count":"11","limit":"10"}'
    )
    loopback.answer(200, echo)
    loopback.answer(200, echo)
    loopback.answer(400, b"bad request for api_key=" + secret.encode() + b" from " + mail.encode())
    exchanges: list[Exchange] = []
    settings = Settings(ncbi_api_key=secret, email=mail, max_attempts=2)
    http, _ = client(settings, on_exchange=exchanges.append)
    with http:
        with pytest.raises(TransientHarvestError):
            http.get(loopback.url(), source="pubmed")
        with pytest.raises(TerminalHarvestError) as caught:
            http.get(loopback.url(), source="pubmed")
    assert exchanges[0].body == (
        b'{"error":"API rate limit exceeded","api-key":"[REDACTED]","count":"11","limit":"10"}'
    )
    assert exchanges[1].body == b"bad request for api_key=[REDACTED] from [REDACTED]"
    assert caught.value.message == (
        f"GET 127.0.0.1:{loopback.port}/entrez/eutils/efetch.fcgi answered HTTP 400 Bad Request: "
        "bad request for api_key=[REDACTED] from [REDACTED]"
    )


# -- requests that cannot be made ---------------------------------------------------------------
def _send(http: HttpClient, method: str, url: str, tmp_path: Path) -> None:
    """One request through the public method ``method``."""
    if method == "get":
        http.get(url, params={"db": "pubmed"}, source="pubmed")
    elif method == "post":
        http.post(url, data={"db": "pubmed"}, source="pubmed")
    elif method == "call":
        http.call("GET", url, source="github")
    elif method == "upload":
        upload = tmp_path / "asset.bin"
        upload.write_bytes(b"asset")
        http.upload(url, upload, source="github")
    else:
        http.download(url, tmp_path / "got.bin", source="github", size=5)


PUBLIC_METHODS = ["get", "post", "call", "upload", "download"]
VERB = {"get": "GET", "post": "POST", "call": "GET", "upload": "POST", "download": "GET"}
EPMC = "https://www.ebi.ac.uk/europepmc/webservices/rest/"


@pytest.mark.parametrize("method", PUBLIC_METHODS)
@pytest.mark.parametrize(
    ("url", "shown", "reason"),
    [
        (  # the reproducer: a pmcid with a line break, from a Europe PMC answer
            f"{EPMC}PMC99\n000001/fullTextXML",
            "www.ebi.ac.uk/europepmc/webservices/rest/PMC99\\n000001/fullTextXML",
            "Invalid non-printable ASCII character in URL, '\\n' at position 54.",
        ),
        (
            f"{EPMC}PMC{'9' * 65536}/fullTextXML?api_key=SECRETKEY123",
            f"www.ebi.ac.uk/europepmc/webservices/rest/PMC{'9' * 75}…",
            "URL too long",
        ),
        ("http://[::1/x", "[::1/x", "Invalid port: ':1'"),
    ],
    ids=["newline", "64k", "port"],
)
def test_a_url_httpx_refuses_is_a_one_line_terminal_error_in_every_public_method(
    method: str, url: str, shown: str, reason: str, tmp_path: Path
) -> None:
    asked: list[httpx.Request] = []
    transport = httpx.MockTransport(lambda request: asked.append(request) or httpx.Response(200))
    http, _ = client(Settings(ncbi_api_key="SECRETKEY123"), transport=transport)
    with http, pytest.raises(TerminalHarvestError) as caught:
        _send(http, method, url, tmp_path)
    assert caught.value.message == f"{VERB[method]} {shown} cannot be requested: {reason}"
    assert asked == []
    assert not (tmp_path / "got.bin").exists()


@pytest.mark.parametrize("method", PUBLIC_METHODS)
def test_a_scheme_other_than_http_is_terminal_at_once_not_retried(
    method: str, tmp_path: Path
) -> None:
    http, waits = client(Settings(max_attempts=4))
    with http, pytest.raises(TerminalHarvestError) as caught:
        _send(http, method, "ftp://127.0.0.1/x", tmp_path)
    assert caught.value.message == (
        f"{VERB[method]} 127.0.0.1/x cannot be requested: "
        "Request URL has an unsupported protocol 'ftp://'."
    )
    assert waits == []  # not retried


def test_a_header_that_cannot_be_sent_is_terminal(loopback: Loopback, tmp_path: Path) -> None:
    http, waits = client(Settings(max_attempts=4))
    with http:
        with pytest.raises(TerminalHarvestError) as built:
            http.call("GET", loopback.url("/x"), source="github", headers={"X-Token": "é"})
        with pytest.raises(TerminalHarvestError) as sent:
            http.call("GET", loopback.url("/x"), source="github", headers={"X-Token": "a\nb"})
    assert built.value.message == (
        f"GET 127.0.0.1:{loopback.port}/x cannot be requested: 'ascii' codec can't encode "
        "character '\\xe9' in position 0: ordinal not in range(128)"
    )
    assert sent.value.message == (
        f"GET 127.0.0.1:{loopback.port}/x cannot be requested: Illegal header value b'a\\nb'"
    )
    assert (loopback.seen, waits) == ([], [])


@pytest.mark.parametrize("method", PUBLIC_METHODS)
def test_an_httpx_error_the_policy_does_not_know_is_a_terminal_error(
    method: str, tmp_path: Path
) -> None:
    def refuses(request: httpx.Request) -> httpx.Response:
        raise httpx.InvalidURL("Invalid URL component 'path' for api_key=SECRETKEY123")

    settings = Settings(ncbi_api_key="SECRETKEY123", max_attempts=3)
    http, waits = client(settings, transport=httpx.MockTransport(refuses))
    with http, pytest.raises(TerminalHarvestError) as caught:
        _send(http, method, "https://api.example/x", tmp_path)
    assert caught.value.message == (
        f"{VERB[method]} api.example/x cannot be requested: "
        "Invalid URL component 'path' for api_key=[REDACTED]"
    )
    assert waits == []


# -- redirects that would carry credentials elsewhere -------------------------------------------
def test_a_redirect_to_another_origin_is_refused_for_a_post_with_credentials(
    loopback: Loopback, elsewhere: Loopback
) -> None:
    # the reproducer: an efetch POST answered with a 307 to another host
    loopback.answer(307, b"", Location=elsewhere.url("/collect"))
    settings = Settings(email="me@example.org", ncbi_api_key="SECRETKEY123")
    exchanges: list[Exchange] = []
    http, _ = client(at(loopback, settings, "pubmed"), on_exchange=exchanges.append)
    with http, pytest.raises(TerminalHarvestError) as caught:
        http.post(loopback.url(), data={"db": "pubmed", "id": "99000001"}, source="pubmed")
    assert caught.value.message == (
        f"POST 127.0.0.1:{loopback.port}/entrez/eutils/efetch.fcgi redirects to another origin "
        f"(http://127.0.0.1:{loopback.port} -> http://127.0.0.1:{elsewhere.port}), and the "
        "request carries credentials; not followed"
    )
    assert caught.value.advice == (
        "credentials go only to the host they are meant for, and never over plain http; "
        "check the base URL of the source"
    )
    assert elsewhere.seen == []  # the form with the key and the e-mail never left
    assert len(loopback.seen) == 1
    assert [e.status for e in exchanges] == [307]


@pytest.mark.parametrize(
    ("source", "settings"),
    [
        ("pubmed", Settings()),  # ``tool`` alone: a polite parameter
        ("crossref", Settings(email="me@example.org")),  # mailto in the query
        ("openfda", Settings(openfda_api_key="fda-key-123")),
    ],
)
def test_a_redirect_to_another_origin_is_refused_for_a_get_with_polite_parameters(
    loopback: Loopback, elsewhere: Loopback, source: str, settings: Settings
) -> None:
    loopback.answer(302, b"", Location=elsewhere.url("/collect"))
    http, _ = client(at(loopback, settings, source))
    with http, pytest.raises(TerminalHarvestError, match="and the request carries credentials"):
        http.get(loopback.url("/works"), source=source)
    assert elsewhere.seen == []


def test_a_redirect_within_the_origin_keeps_its_credentials(loopback: Loopback) -> None:
    loopback.answer(307, b"", Location="/entrez/eutils/efetch2.fcgi")
    http, _ = client(at(loopback, Settings(ncbi_api_key="SECRETKEY123"), "pubmed"))
    with http:
        answer = http.post(loopback.url(), data={"db": "pubmed"}, source="pubmed")
    assert answer.text == "ok"
    assert parse_qs(loopback.seen[1].body)["api_key"] == ["SECRETKEY123"]


def test_a_redirect_from_https_to_http_is_refused_even_without_credentials() -> None:
    asked: list[str] = []

    def storage(request: httpx.Request) -> httpx.Response:
        asked.append(str(request.url))
        return httpx.Response(302, headers={"location": "http://objects.example/asset"})

    http, _ = client(transport=httpx.MockTransport(storage))
    with http, pytest.raises(TerminalHarvestError) as caught:
        http.call("GET", "https://api.example/releases/1", source="github")
    assert caught.value.message == (
        "GET api.example/releases/1 redirects from https to http "
        "(https://api.example -> http://objects.example); not followed"
    )
    assert asked == ["https://api.example/releases/1"]


@pytest.mark.parametrize("method", ["call", "download"])
def test_a_request_without_credentials_follows_a_redirect_to_another_origin_without_its_token(
    loopback: Loopback, elsewhere: Loopback, method: str, tmp_path: Path
) -> None:
    # a GitHub release asset: the API redirects to a storage host, which must not get the token
    loopback.answer(302, b"", Location=elsewhere.url("/storage/asset"))
    elsewhere.answer(200, b"asset")
    token = {"Authorization": "Bearer gh-token-0123456789"}
    http, _ = client()
    with http:
        if method == "call":
            assert http.call("GET", loopback.url("/asset"), source="github", headers=token).text
        else:
            dest = tmp_path / "asset.bin"
            http.download(loopback.url("/asset"), dest, source="github", size=5, headers=token)
            assert dest.read_bytes() == b"asset"
    assert loopback.seen[0].headers["authorization"] == "Bearer gh-token-0123456789"
    assert [s.path for s in elsewhere.seen] == ["/storage/asset"]
    assert "authorization" not in elsewhere.seen[0].headers


def test_refusals_without_a_callback_are_logged_once_per_reason_with_their_count(
    caplog: pytest.LogCaptureFixture,
) -> None:
    from pipeline.records import Refusal

    rule = "pmid must be 1 to 10 digits without a leading zero"
    refusals = [Refusal(reason=rule, value="x"), Refusal(reason=rule, value="0")]
    http, _ = client()
    with http, caplog.at_level(logging.WARNING, logger="citeseal.http"):
        http.report_refused("pubmed", refusals)
        http.report_refused("pubmed", [])
    assert [r.getMessage() for r in caplog.records] == [f"pubmed: refused 2 record(s): {rule}"]


def test_backoff_doubles_from_the_initial_wait_up_to_its_cap_with_at_most_half_jitter() -> None:
    rng = random.Random(7)
    for attempt, base in ((1, 1.0), (2, 2.0), (3, 4.0), (6, 30.0), (20, BACKOFF_CAP)):
        for _ in range(50):
            assert base / 2 <= wait_seconds(attempt, None, rng) <= base
    told = Retryable("HTTP 429", retry_after=5.0, response=None)
    assert wait_seconds(9, told, rng) == 5.0  # the server's word, not the backoff
    assert wait_seconds(1, Retryable("HTTP 503", retry_after=600.0, response=None), rng) == 60.0
