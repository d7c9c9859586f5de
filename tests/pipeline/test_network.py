"""Where requests go: configured base URLs, proxies from the settings, CA certificates.

Every server is started by the test on 127.0.0.1: a scripted API stand-in, a plain-HTTP
forward proxy stand-in (absolute-form requests, no CONNECT), and a TLS server whose
certificate is signed by a CA made for the test with ``openssl``.
"""

from __future__ import annotations

import json
import logging
import shutil
import ssl
import subprocess
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from urllib.parse import parse_qs, urlsplit

import httpx
import pytest

from audit.errors import InputError
from pipeline.errors import TransientHarvestError
from pipeline.http import Exchange, HttpClient
from pipeline.network import (
    KEY_URL_EXTENSION,
    Endpoints,
    ProxyRoutes,
    bypasses,
    network_transport,
)
from pipeline.pacing import host_rates
from pipeline.replay import RecordingTransport, ReplayTransport
from pipeline.settings import Proxies, Settings
from pipeline.snapshot.resume import ResumeTransport
from pipeline.sources import crossref

HOST = "127.0.0.1"
NO_PACING = {HOST: 0.0, "api.crossref.org": 0.0}
WORK_LIST = {
    "status": "ok",
    "message-type": "work-list",
    "message": {
        "total-results": 1,
        "items": [{"DOI": "10.5555/mirror.1", "type": "journal-article", "title": ["Mirrored"]}],
    },
}


@dataclass
class Seen:
    line: str  # the request line's target: a path, or an absolute URL (through a proxy)
    headers: dict[str, str]


@dataclass
class Server:
    """A loopback server answering every request with ``body``, logging each one."""

    server: ThreadingHTTPServer
    scheme: str = "http"
    body: bytes = json.dumps(WORK_LIST).encode()
    seen: list[Seen] = field(default_factory=list)

    @property
    def base(self) -> str:
        return f"{self.scheme}://{HOST}:{self.server.server_address[1]}"


@contextmanager
def serving(tls: ssl.SSLContext | None = None) -> Iterator[Server]:
    box: list[Server] = []

    class Handler(BaseHTTPRequestHandler):
        def do_GET(self) -> None:
            box[0].seen.append(Seen(self.path, {k.lower(): v for k, v in self.headers.items()}))
            body = box[0].body
            self.send_response(200)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)

        def log_message(self, format: str, *args: object) -> None:
            del format, args

    server = ThreadingHTTPServer((HOST, 0), Handler)
    if tls is not None:
        server.socket = tls.wrap_socket(server.socket, server_side=True)
    box.append(Server(server, scheme="https" if tls else "http"))
    thread = threading.Thread(target=server.serve_forever, args=(0.02,), daemon=True)
    thread.start()
    try:
        yield box[0]
    finally:
        server.shutdown()
        server.server_close()


def client(settings: Settings, **kwargs: object) -> HttpClient:
    kwargs.setdefault("rates", NO_PACING)
    return HttpClient(settings, sleep=lambda _: None, **kwargs)  # type: ignore[arg-type]


# -- base URLs ---------------------------------------------------------------------------------
def test_a_request_for_the_public_api_goes_to_the_configured_base_keyed_by_its_public_url() -> None:
    endpoints = Endpoints.of(Settings(base_urls={"crossref": "http://127.0.0.1:8080/mirror/"}))
    assert endpoints.send_to("https://api.crossref.org/works?rows=2") == (
        "http://127.0.0.1:8080/mirror/works?rows=2"
    )
    assert endpoints.send_to("https://api.crossref.orgx/works") is None  # not under the base
    assert endpoints.send_to("https://eutils.ncbi.nlm.nih.gov/entrez/eutils/efetch.fcgi") is None
    assert endpoints.public("http://127.0.0.1:8080/mirror/works/x") == (
        "https://api.crossref.org/works/x"
    )
    assert endpoints.public("http://127.0.0.1:8080/other") is None


def test_every_crossref_request_reaches_the_mirror_with_its_polite_parameters() -> None:
    exchanges: list[Exchange] = []
    with serving() as mirror:
        settings = Settings(email="me@example.org", base_urls={"crossref": mirror.base + "/cr"})
        with client(settings, on_exchange=exchanges.append) as http:
            records = crossref.fetch_works(http, ["10.5555/mirror.1", "10.5555/MIRROR.2"])
    assert [r.record_id for r in records] == ["doi:10.5555/mirror.1"]
    (seen,) = mirror.seen
    parts = urlsplit(seen.line)
    assert parts.path == "/cr/works"
    assert parse_qs(parts.query) == {
        "filter": ["doi:10.5555/mirror.1,doi:10.5555/mirror.2"],
        "rows": ["2"],
        "mailto": ["me@example.org"],
    }
    # recorded under the public request, without the e-mail
    assert [e.url for e in exchanges] == [
        "https://api.crossref.org/works?filter=doi%3A10.5555%2Fmirror.1%2Cdoi%3A10.5555%2F"
        "mirror.2&rows=2"
    ]


def test_polite_parameters_go_only_to_the_configured_origin_of_their_source() -> None:
    with serving() as mirror, serving() as elsewhere:
        settings = Settings(
            email="me@example.org",
            openfda_api_key="fda-key-123",
            base_urls={"crossref": mirror.base, "openfda": mirror.base},
        )
        with client(settings) as http:
            http.get(mirror.base + "/works", source="crossref")
            http.get(elsewhere.base + "/works", source="crossref")
            http.get(elsewhere.base + "/drug/label.json", source="openfda")
            http.get("https://api.fda.gov/drug/label.json", source="openfda")  # to the mirror
    assert [parse_qs(urlsplit(s.line).query) for s in mirror.seen] == [
        {"mailto": ["me@example.org"]},
        {"api_key": ["fda-key-123"]},
    ]
    assert [parse_qs(urlsplit(s.line).query) for s in elsewhere.seen] == [{}, {}]


def test_an_answer_recorded_from_a_mirror_replays_for_the_same_request_without_it(
    tmp_path: Path,
) -> None:
    with serving() as mirror:
        settings = Settings(base_urls={"crossref": mirror.base})
        recorder = RecordingTransport(network_transport(settings), tmp_path)
        with client(settings, transport=recorder) as http:
            crossref.fetch_works(http, ["10.5555/mirror.1"])
    (written,) = recorder.written
    assert written.parent.name == "crossref"
    assert json.loads(written.read_text())["url"] == (
        "https://api.crossref.org/works?filter=doi%3A10.5555%2Fmirror.1&rows=1"
    )
    with client(Settings(), transport=ReplayTransport([tmp_path])) as http:  # the public API
        replayed = crossref.fetch_works(http, ["10.5555/mirror.1"])
    with client(settings, transport=ReplayTransport([tmp_path])) as http:  # the mirror again
        again = crossref.fetch_works(http, ["10.5555/mirror.1"])
    assert (
        [r.record_id for r in replayed] == [r.record_id for r in again] == ["doi:10.5555/mirror.1"]
    )


def test_the_resume_cache_serves_an_answer_fetched_through_a_mirror_to_the_public_request(
    tmp_path: Path,
) -> None:
    with serving() as mirror:
        settings = Settings(base_urls={"crossref": mirror.base})
        with client(
            settings, transport=ResumeTransport(network_transport(settings), tmp_path)
        ) as h:
            crossref.fetch_works(h, ["10.5555/mirror.1"])
        cache = ResumeTransport(network_transport(Settings()), tmp_path)
        with client(Settings(), transport=cache) as http:
            records = crossref.fetch_works(http, ["10.5555/mirror.1"])
    assert len(mirror.seen) == 1  # the second build asked nobody
    assert (cache.served, [r.record_id for r in records]) == (1, ["doi:10.5555/mirror.1"])


def test_a_request_moved_to_a_mirror_carries_its_public_url_and_a_plain_one_does_not() -> None:
    settings = Settings(base_urls={"europepmc": "https://epmc.example.org/rest"})
    with client(settings, transport=httpx.MockTransport(lambda r: httpx.Response(200))) as http:
        moved = http._build(
            "GET", "https://www.ebi.ac.uk/europepmc/webservices/rest/search", "europepmc"
        )
        plain = http._build("GET", "https://api.crossref.org/works", "crossref")
    assert str(moved.url) == "https://epmc.example.org/rest/search"
    assert moved.extensions[KEY_URL_EXTENSION] == (
        "https://www.ebi.ac.uk/europepmc/webservices/rest/search"
    )
    assert KEY_URL_EXTENSION not in plain.extensions


def test_a_mirror_is_paced_at_the_rate_of_the_api_behind_it_and_a_shared_host_at_the_slowest() -> (
    None
):
    rates = host_rates(
        Settings(
            base_urls={
                "pubmed": "https://mirror.example.org/eutils",
                "clinicaltrials": "https://mirror.example.org/ctgov",
                "openfda": "https://fda.example.org",
            }
        )
    )
    assert rates["mirror.example.org"] == 0.8  # ClinicalTrials.gov's, slower than NCBI's 3/s
    assert rates["fda.example.org"] == 4.0
    assert rates["api.fda.gov"] == 4.0  # the public hosts keep theirs


# -- proxies ------------------------------------------------------------------------------------
@pytest.mark.parametrize(
    ("host", "port", "no_proxy", "direct"),
    [
        ("api.crossref.org", 443, ("*",), True),
        ("api.crossref.org", 443, ("crossref.org",), True),
        ("api.crossref.org", 443, (".crossref.org",), True),
        ("api.crossref.org", 443, ("api.crossref.org:443",), True),
        ("api.crossref.org", 443, ("api.crossref.org:8443",), False),
        ("notcrossref.org", 443, ("crossref.org",), False),
        ("127.0.0.1", 8080, ("127.0.0.0/8",), True),
        ("10.1.2.3", 80, ("127.0.0.0/8", "10.1.2.3"), True),
        ("::1", 80, ("::1",), True),
        ("127.0.0.1", 8080, (), False),  # loopback is proxied unless NO_PROXY says otherwise
    ],
)
def test_no_proxy_entries_send_their_hosts_directly(
    host: str, port: int, no_proxy: tuple[str, ...], direct: bool
) -> None:
    assert bypasses(host, port, no_proxy) is direct


def test_the_proxy_of_each_scheme_is_used_and_all_proxy_fills_the_gap() -> None:
    proxies = Proxies(https="http://s.example:3128", all="http://a.example:3128")
    routes = ProxyRoutes(proxies, verify=True)
    try:
        assert routes.route(httpx.URL("https://api.crossref.org/")) is routes.routes["https"]
        assert routes.route(httpx.URL("http://127.0.0.1/")) is routes.routes["http"]
        assert routes.routes["http"] is not routes.routes["https"]
    finally:
        routes.close()


def test_a_loopback_base_url_is_fetched_through_http_proxy_with_its_credentials_never_logged(
    caplog: pytest.LogCaptureFixture,
) -> None:
    caplog.set_level(logging.DEBUG, logger="citeseal.http")
    with serving() as api, serving() as proxy:
        proxy_url = f"http://squid-user:Sq-pass-5150@{HOST}:{proxy.server.server_address[1]}"
        settings = Settings.from_env({"HTTP_PROXY": proxy_url, "CITESEAL_CROSSREF_URL": api.base})
        with client(settings) as http:
            records = crossref.fetch_works(http, ["10.5555/mirror.1"])
    assert [r.record_id for r in records] == ["doi:10.5555/mirror.1"]
    assert api.seen == []  # every byte went through the proxy
    (seen,) = proxy.seen
    assert seen.line == f"{api.base}/works?filter=doi%3A10.5555%2Fmirror.1&rows=1"
    assert seen.headers["proxy-authorization"] == "Basic c3F1aWQtdXNlcjpTcS1wYXNzLTUxNTA="
    assert "Sq-pass-5150" not in caplog.text and "squid-user" not in caplog.text
    assert f"[REDACTED]@{HOST}:{proxy.server.server_address[1]}" in caplog.text
    assert settings.secrets() == ["squid-user:Sq-pass-5150", "Sq-pass-5150"]


def test_no_proxy_sends_a_loopback_base_url_directly() -> None:
    with serving() as api, serving() as proxy:
        settings = Settings.from_env(
            {
                "http_proxy": f"http://{HOST}:{proxy.server.server_address[1]}",
                "NO_PROXY": "localhost, 127.0.0.1",
                "CITESEAL_CROSSREF_URL": api.base,
            }
        )
        with client(settings) as http:
            crossref.fetch_works(http, ["10.5555/mirror.1"])
    assert (len(api.seen), proxy.seen) == (1, [])


def test_the_client_ignores_proxy_variables_the_settings_did_not_read(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    with serving() as api, serving() as proxy:
        monkeypatch.setenv("HTTP_PROXY", f"http://{HOST}:{proxy.server.server_address[1]}")
        with client(Settings(base_urls={"crossref": api.base})) as http:  # no proxies in it
            crossref.fetch_works(http, ["10.5555/mirror.1"])
    assert (len(api.seen), proxy.seen) == (1, [])


# -- CA certificates ----------------------------------------------------------------------------
@pytest.fixture(scope="module")
def certificates(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Path, Path]:
    """(ca.pem, server.pem, server.key): a CA made for this test, and a certificate it signed
    for 127.0.0.1."""
    if shutil.which("openssl") is None:
        pytest.skip("openssl is not installed (and the cryptography package is not in .venv)")
    folder = tmp_path_factory.mktemp("tls")
    ca, ca_key, cert, key = (folder / n for n in ("ca.pem", "ca.key", "server.pem", "server.key"))
    (folder / "ext").write_text("subjectAltName=IP:127.0.0.1\nbasicConstraints=CA:FALSE\n")
    ec = ("-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:prime256v1", "-nodes")
    csr = folder / "server.csr"
    commands = [
        [
            *("req", "-x509", *ec, "-keyout", ca_key, "-out", ca, "-days", "2"),
            *("-subj", "/CN=citeseal test CA", "-addext", "basicConstraints=critical,CA:TRUE"),
            *("-addext", "keyUsage=critical,keyCertSign,cRLSign"),
        ],
        ["req", *ec, "-keyout", key, "-out", csr, "-subj", "/CN=127.0.0.1"],
        [
            *("x509", "-req", "-in", csr, "-CA", ca, "-CAkey", ca_key, "-CAcreateserial"),
            *("-out", cert, "-days", "2", "-extfile", folder / "ext"),
        ],
    ]
    for command in commands:
        subprocess.run(["openssl", *map(str, command)], check=True, capture_output=True)
    return ca, cert, key


def tls_server(certificates: tuple[Path, Path, Path]) -> ssl.SSLContext:
    _, cert, key = certificates
    context = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
    context.load_cert_chain(cert, key)
    return context


def test_a_loopback_tls_server_is_trusted_through_ssl_cert_file(
    certificates: tuple[Path, Path, Path],
) -> None:
    with serving(tls_server(certificates)) as api:
        env = {"SSL_CERT_FILE": str(certificates[0]), "CITESEAL_CROSSREF_URL": api.base}
        with client(Settings.from_env(env)) as http:
            records = crossref.fetch_works(http, ["10.5555/mirror.1"])
    assert [r.record_id for r in records] == ["doi:10.5555/mirror.1"]


def test_ssl_cert_dir_is_trusted_too(certificates: tuple[Path, Path, Path]) -> None:
    folder = certificates[0].parent / "hashed"
    folder.mkdir(exist_ok=True)
    subject_hash = subprocess.run(
        ["openssl", "x509", "-hash", "-noout", "-in", str(certificates[0])],
        check=True,
        capture_output=True,
        text=True,
    ).stdout.strip()
    shutil.copy(certificates[0], folder / f"{subject_hash}.0")
    with serving(tls_server(certificates)) as api:
        env = {"SSL_CERT_DIR": str(folder), "CITESEAL_CROSSREF_URL": api.base}
        with client(Settings.from_env(env)) as http:
            assert http.get(api.base + "/works", source="crossref").status_code == 200


def test_without_the_ca_the_same_server_is_a_failed_request(
    certificates: tuple[Path, Path, Path],
) -> None:
    with serving(tls_server(certificates)) as api:
        settings = Settings(max_attempts=1, base_urls={"crossref": api.base})
        with client(settings) as http, pytest.raises(TransientHarvestError) as caught:
            crossref.fetch_works(http, ["10.5555/mirror.1"])
    assert caught.value.message == (
        f"GET {HOST}:{api.server.server_address[1]}/works failed after 1 attempts: ConnectError"
    )


def test_a_ca_file_without_a_certificate_is_a_one_line_error_naming_the_variable(
    tmp_path: Path,
) -> None:
    (tmp_path / "empty.pem").write_text("not a certificate\n")
    settings = Settings.from_env({"SSL_CERT_FILE": str(tmp_path / "empty.pem")})
    with pytest.raises(InputError) as caught:
        network_transport(settings)
    assert caught.value.message.startswith(
        "SSL_CERT_FILE holds no CA certificate that can be loaded: "
    )
    assert "\n" not in caught.value.message
    assert caught.value.advice == (
        "point it at a PEM file (or an OpenSSL certificate folder), or unset it"
    )
