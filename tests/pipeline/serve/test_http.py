"""``citeseal serve --http``: Streamable HTTP on 127.0.0.1, servers started by the tests.

The servers are subprocesses (``citeseal serve`` exactly as people start it) on a free
loopback port; the SDK's streamable HTTP client and plain HTTP requests talk to them.
"""

from __future__ import annotations

import os
import signal
import socket
import subprocess
import time
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import anyio
import httpx
import httpx2
import pytest
from mcp import Client
from mcp.client.streamable_http import streamable_http_client

from audit.errors import InputError
from audit.handles import parse_handle, verify
from pipeline.serve import service
from pipeline.serve.service import Served
from pipeline.serve.transport import (
    BearerGate,
    HostGate,
    Listen,
    allowed_hosts,
    parse_allow_host,
    parse_listen,
)
from pipeline.settings import Settings
from tests.conftest import TEST_KEY_HEX
from tests.pipeline.serve.conftest import DEMO
from tests.pipeline.serve.test_serve_cmd import CITESEAL

WILDCARD = "0.0.0.0"  # noqa: S104 - the bind every test here expects refused or guarded
TOKEN = "citeseal-test-token-0123456789abcdef"  # 36 printable characters, never a real one
STARTUP_SECONDS = 60
INIT = {
    "jsonrpc": "2.0",
    "id": 1,
    "method": "initialize",
    "params": {
        "protocolVersion": "2025-11-25",
        "capabilities": {},
        "clientInfo": {"name": "test", "version": "0"},
    },
}
ACCEPT = {"Accept": "application/json, text/event-stream", "Content-Type": "application/json"}


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def env(data_dir: Path, **extra: str) -> dict[str, str]:
    clean = {k: v for k, v in os.environ.items() if k != "CITESEAL_SERVE_TOKEN"}
    return {**clean, "CITESEAL_KEY": TEST_KEY_HEX, "CITESEAL_DATA_DIR": str(data_dir), **extra}


@dataclass
class Running:
    """A ``citeseal serve --http`` subprocess, its URL and its stderr file."""

    process: subprocess.Popen[bytes]
    url: str
    port: int
    stderr: Path

    def log(self) -> str:
        return self.stderr.read_text(encoding="utf-8")

    def stop(self, sig: signal.Signals = signal.SIGTERM) -> int:
        if self.process.poll() is None:
            self.process.send_signal(sig)
        return self.process.wait(timeout=30)


def start(snapshot: Path, workdir: Path, **extra: str) -> Running:
    port = free_port()
    stderr = workdir / f"stderr-{port}.txt"
    listen = f"127.0.0.1:{port}"
    with stderr.open("wb") as sink:
        process = subprocess.Popen(
            [*CITESEAL, "serve", "--snapshot", str(snapshot), "--demo-key", "--http", listen],
            stdin=subprocess.DEVNULL,
            stdout=subprocess.DEVNULL,
            stderr=sink,
            env=env(workdir, **extra),
            cwd=workdir,
        )
    running = Running(process, f"http://127.0.0.1:{port}/mcp", port, stderr)
    deadline = time.monotonic() + STARTUP_SECONDS
    while f"on {running.url}" not in running.log():
        if process.poll() is not None or time.monotonic() > deadline:
            running.stop()
            pytest.fail(f"the server did not start: {running.log()}")
        time.sleep(0.05)
    return running


@pytest.fixture(scope="module")
def server(
    demo_pair: tuple[Path, Path], tmp_path_factory: pytest.TempPathFactory
) -> Iterator[Running]:
    running = start(demo_pair[1], tmp_path_factory.mktemp("http"))
    yield running
    running.stop()


@pytest.fixture(scope="module")
def guarded(
    demo_pair: tuple[Path, Path], tmp_path_factory: pytest.TempPathFactory
) -> Iterator[Running]:
    running = start(demo_pair[1], tmp_path_factory.mktemp("http-token"), CITESEAL_SERVE_TOKEN=TOKEN)
    yield running
    running.stop()


def run_cli(*args: str, workdir: Path, **extra: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [*CITESEAL, *args],
        capture_output=True,
        text=True,
        check=False,
        env=env(workdir, **extra),
        stdin=subprocess.DEVNULL,
        timeout=60,
    )


# --- the endpoint, end to end -------------------------------------------------------------


@pytest.mark.anyio
async def test_the_sdk_client_lists_tools_searches_and_audits_over_http(
    server: Running, demo_pair: tuple[Path, Path]
) -> None:
    async with Client(server.url) as client:
        tools = {tool.name for tool in (await client.list_tools()).tools}
        found = await client.call_tool("search_literature", {"query": "zentravir", "limit": 2})
        assert not found.is_error and isinstance(found.structured_content, dict)
        [first, second] = found.structured_content["results"]
        answer = (
            f"Zentravir was studied [{first['handle']}]. So was pregnancy [{second['handle']}].\n"
        )
        audited = await client.call_tool("audit_answer", {"answer": answer})
    assert {"search_literature", "fetch_passages", "resolve_handles", "audit_answer"} <= tools
    assert verify(DEMO, parse_handle(first["handle"]))
    assert not audited.is_error and isinstance(audited.structured_content, dict)
    report = audited.structured_content
    verdicts = [c["verdict"] for s in report["sentences"] for c in s["citations"]]
    assert (report["verdict"], report["source"], verdicts) == ("pass", "mcp", ["ok", "ok"])
    assert server.log().startswith(
        f"citeseal serve: demo {report['snapshot']['snapshot_id']} on {server.url} "
        "(handles minted with the PUBLIC demo key)\n"
    )


@pytest.mark.anyio
async def test_24_concurrent_tool_calls_over_http_all_get_their_own_answer(
    server: Running, served: Served
) -> None:
    queries = [f"{word} {n}" for n in range(8) for word in ("zentravir", "trial", "pregnancy")]
    expected = {
        q: service.search(served, "literature", q, limit=3).value.model_dump(mode="json")
        for q in queries
    }
    got: dict[str, Any] = {}

    async with Client(server.url) as client:

        async def one(query: str) -> None:
            result = await client.call_tool("search_literature", {"query": query, "limit": 3})
            assert not result.is_error
            got[query] = result.structured_content

        async with anyio.create_task_group() as group:
            for query in queries:
                group.start_soon(one, query)
    assert len(queries) == 24 and got == expected


def test_sigint_and_sigterm_stop_the_server_with_exit_0(
    demo_pair: tuple[Path, Path], tmp_path: Path
) -> None:
    for sig in (signal.SIGINT, signal.SIGTERM):
        running = start(demo_pair[1], tmp_path)
        assert (running.stop(sig), "Traceback" in running.log()) == (0, False)
        with pytest.raises(httpx.ConnectError):
            httpx.get(running.url, timeout=5)


# --- binding and the token ----------------------------------------------------------------


def test_a_bind_beyond_loopback_without_a_token_is_refused_before_anything(
    tmp_path: Path,
) -> None:
    """Refused before the snapshot is even looked at (this one does not exist)."""
    port = free_port()
    done = run_cli(
        "serve", "--snapshot", str(tmp_path / "none.duckdb"), "--http", f"{WILDCARD}:{port}",
        workdir=tmp_path,
    )  # fmt: skip
    assert (done.returncode, done.stdout) == (2, "")
    assert done.stderr == (
        f"error: --http {WILDCARD}:{port} is not a loopback address; serving it needs a bearer "
        "token in CITESEAL_SERVE_TOKEN\n"
        "hint: bind 127.0.0.1, or set CITESEAL_SERVE_TOKEN (at least 32 printable characters) "
        "and give clients the header 'Authorization: Bearer <token>'\n"
    )


def test_a_short_token_is_refused_without_being_shown(tmp_path: Path) -> None:
    done = run_cli(
        "serve", "--snapshot", str(tmp_path), "--http", "127.0.0.1:8765",
        workdir=tmp_path, CITESEAL_SERVE_TOKEN="short-secret",
    )  # fmt: skip
    assert (done.returncode, done.stdout) == (2, "")
    assert done.stderr == (
        "error: CITESEAL_SERVE_TOKEN must be 32 to 1,024 printable ASCII characters without "
        "spaces (the value is not shown)\n"
        "hint: fix or unset it (README, Configuration, lists every variable)\n"
    )


def test_the_serve_token_is_read_by_the_settings_and_is_a_secret() -> None:
    settings = Settings.from_env({"CITESEAL_SERVE_TOKEN": f"  {TOKEN} "})
    assert (settings.serve_token, settings.secrets()) == (TOKEN, [TOKEN])
    assert Settings.from_env({"CITESEAL_SERVE_TOKEN": " "}).serve_token is None


@pytest.mark.parametrize(
    ("value", "message"),
    [
        ("8765", "--http expects HOST:PORT (e.g. 127.0.0.1:8765), got '8765'"),
        (":8765", "--http expects HOST:PORT (e.g. 127.0.0.1:8765), got ':8765'"),
        (
            "evil.example:8765",
            "--http host must be an IPv4 address, [an IPv6 address] or localhost, "
            "got 'evil.example' in 'evil.example:8765'",
        ),
        (
            "::1:8765",
            "--http host must be an IPv4 address, [an IPv6 address] or localhost, "
            "got '::1' in '::1:8765'",
        ),
        (
            "[127.0.0.1]:8765",
            "--http host must be an IPv4 address, [an IPv6 address] or localhost, "
            "got '[127.0.0.1]' in '[127.0.0.1]:8765'",
        ),
        (
            "127.0.0.1:0",
            "--http port must be a whole number from 1 to 65535, got '0' in '127.0.0.1:0'",
        ),
        (
            "127.0.0.1:65536",
            "--http port must be a whole number from 1 to 65535, got '65536' in '127.0.0.1:65536'",
        ),
        (
            "127.0.0.1:８７",
            "--http port must be a whole number from 1 to 65535, got '８７' in '127.0.0.1:８７'",
        ),
        (
            "127.0.0.1:",
            "--http port must be a whole number from 1 to 65535, got '' in '127.0.0.1:'",
        ),
    ],
)
def test_a_bad_listen_address_is_one_exact_error(value: str, message: str) -> None:
    with pytest.raises(InputError) as caught:
        parse_listen(value)
    assert caught.value.message == message


def test_a_bad_listen_address_is_a_one_line_usage_error_exit_2(tmp_path: Path) -> None:
    done = run_cli("serve", "--snapshot", str(tmp_path), "--http", "localhost", workdir=tmp_path)
    assert (done.returncode, done.stdout, done.stderr) == (
        2,
        "",
        "error: --http expects HOST:PORT (e.g. 127.0.0.1:8765), got 'localhost'\n",
    )


def test_an_address_in_use_is_one_error_line(
    server: Running, demo_pair: tuple[Path, Path], tmp_path: Path
) -> None:
    done = run_cli(
        "serve", "--snapshot", str(demo_pair[1]), "--demo-key", "--http",
        f"127.0.0.1:{server.port}", workdir=tmp_path,
    )  # fmt: skip
    assert (done.returncode, done.stdout) == (2, "")
    assert (
        done.stderr == f"error: cannot listen on 127.0.0.1:{server.port}: Address already in use\n"
    )


@pytest.mark.parametrize(
    ("value", "listen"),
    [
        ("127.0.0.1:8765", Listen("127.0.0.1", 8765)),
        ("LOCALHOST:1", Listen("localhost", 1)),
        ("[::1]:65535", Listen("::1", 65535)),
        ("[0:0::1]:80", Listen("::1", 80)),
        (f"{WILDCARD}:8765", Listen(WILDCARD, 8765)),
    ],
)
def test_listen_addresses_parse_to_a_normal_form(value: str, listen: Listen) -> None:
    assert parse_listen(value) == listen


def test_allowed_hosts_name_the_bound_address_with_its_port() -> None:
    loopback = ["127.0.0.1:8765", "localhost:8765", "[::1]:8765"]
    assert allowed_hosts(Listen("127.0.0.1", 8765), "box")[0] == loopback
    assert allowed_hosts(Listen("127.0.0.2", 8765), "box")[0] == [*loopback, "127.0.0.2:8765"]
    assert allowed_hosts(Listen(WILDCARD, 8765), "Box")[0] == [*loopback, "box:8765"]
    hosts, origins = allowed_hosts(Listen("2001:db8::5", 80), "box")
    assert (hosts, origins) == (["[2001:db8::5]:80"], ["http://[2001:db8::5]:80"])
    assert not Listen("192.0.2.1", 80).loopback and Listen("localhost", 80).loopback
    extra = ("192.0.2.7", "[2001:db8::7]", "box.lan")
    hosts = allowed_hosts(Listen(WILDCARD, 8765), "box", extra)[0]
    assert hosts == [*loopback, "box:8765", "192.0.2.7:8765", "[2001:db8::7]:8765", "box.lan:8765"]


@pytest.mark.parametrize(
    ("value", "normal"),
    [("192.0.2.7", "192.0.2.7"), ("[2001:DB8::7]", "[2001:db8::7]"), ("Box.LAN", "box.lan")],
)
def test_allow_host_names_parse_to_a_normal_form(value: str, normal: str) -> None:
    assert parse_allow_host(value) == normal


@pytest.mark.parametrize("value", ["192.0.2.7:80", "2001:db8::7", "[192.0.2.7]", "", "a b", "-x"])
def test_a_bad_allow_host_is_one_exact_error(value: str) -> None:
    with pytest.raises(InputError) as caught:
        parse_allow_host(value)
    assert caught.value.message == (
        "--allow-host expects a host name, an IPv4 address or [an IPv6 address], without a "
        f"port, got {value!r}"
    )


@pytest.mark.anyio
async def test_the_host_gate_passes_listed_hosts_and_names_a_refused_one_with_the_fix() -> None:
    reached: list[str] = []

    async def app(scope: Any, receive: Any, send: Any) -> None:
        reached.append(scope["path"])

    gate = HostGate(app, ["127.0.0.1:8765", "192.0.2.7:8765"])
    sent: list[dict[str, Any]] = []

    async def send(message: Any) -> None:
        sent.append(message)

    async def receive() -> Any:
        raise AssertionError

    for host in (b"192.0.2.7:8765", b"192.0.2.9:8765"):
        scope = {"type": "http", "path": "/mcp", "headers": [(b"host", host)]}
        await gate(scope, receive, send)
    assert reached == ["/mcp"]
    assert sent[0]["status"] == 421
    assert sent[1]["body"] == (
        b"refused Host '192.0.2.9:8765': not a name this server answers to; to allow it, start "
        b"citeseal serve with --allow-host 192.0.2.9\n"
    )


@pytest.mark.parametrize(
    ("headers", "allowed"),
    [
        ([(b"authorization", f"Bearer {TOKEN}".encode())], True),
        ([(b"Authorization", f"Bearer {TOKEN}".encode())], True),
        ([], False),
        ([(b"authorization", f"Bearer {TOKEN}x".encode())], False),
        ([(b"authorization", f"bearer {TOKEN}".encode())], True),  # RFC 7235: any case
        ([(b"authorization", f"BEARER  {TOKEN}".encode())], True),
        ([(b"authorization", f"Bearer{TOKEN}".encode())], False),
        ([(b"authorization", f"Basic {TOKEN}".encode())], False),
        ([(b"authorization", TOKEN.encode())], False),
        ([(b"authorization", f"Bearer {TOKEN}".encode()), (b"authorization", b"Bearer x")], False),
    ],
)
def test_the_bearer_gate_allows_exactly_the_token(
    headers: list[tuple[bytes, bytes]], allowed: bool
) -> None:
    async def app(scope: Any, receive: Any, send: Any) -> None:
        raise AssertionError

    assert BearerGate(app, TOKEN).allows(headers) is allowed


# --- Host, Origin, bearer over the wire ---------------------------------------------------


def test_a_request_with_a_foreign_host_header_is_rejected_421(server: Running) -> None:
    refused = httpx.post(server.url, json=INIT, headers={**ACCEPT, "Host": "evil.example"})
    other_port = httpx.post(
        server.url, json=INIT, headers={**ACCEPT, "Host": f"127.0.0.1:{server.port + 1}"}
    )
    accepted = httpx.post(
        server.url, json=INIT, headers={**ACCEPT, "Host": f"localhost:{server.port}"}
    )
    assert (refused.status_code, refused.text) == (
        421,
        "refused Host 'evil.example': not a name this server answers to; to allow it, start "
        "citeseal serve with --allow-host evil.example\n",
    )
    assert (other_port.status_code, accepted.status_code) == (421, 200)


def test_a_request_from_a_foreign_origin_is_rejected_403(server: Running) -> None:
    refused = httpx.post(server.url, json=INIT, headers={**ACCEPT, "Origin": "http://evil.example"})
    assert (refused.status_code, refused.text) == (403, "Invalid Origin header")


def test_with_a_token_requests_without_or_with_a_wrong_bearer_are_401(guarded: Running) -> None:
    for headers in ({}, {"Authorization": "Bearer wrong"}, {"Authorization": f"Basic {TOKEN}"}):
        refused = httpx.post(guarded.url, json=INIT, headers={**ACCEPT, **headers})
        assert (refused.status_code, refused.headers["www-authenticate"], refused.text) == (
            401,
            'Bearer realm="citeseal"',
            "missing or wrong bearer token\n",
        )
    right = httpx.post(
        guarded.url, json=INIT, headers={**ACCEPT, "Authorization": f"Bearer {TOKEN}"}
    )
    assert right.status_code == 200


@pytest.mark.anyio
async def test_with_the_right_bearer_the_sdk_client_works_and_the_token_is_never_logged(
    guarded: Running,
) -> None:
    headers = {"Authorization": f"Bearer {TOKEN}"}
    async with (
        httpx2.AsyncClient(headers=headers) as http,
        Client(streamable_http_client(guarded.url, http_client=http)) as client,
    ):
        info = await client.call_tool("snapshot_info", {})
    assert not info.is_error and isinstance(info.structured_content, dict)
    log = guarded.log()
    assert log.splitlines()[0].endswith("(bearer token required)")
    assert '"POST /mcp HTTP/1.1" 401' in log and '"POST /mcp HTTP/1.1" 200' in log
    assert TOKEN not in log


def test_get_and_delete_on_the_stateless_endpoint_are_405_allow_post_at_once(
    server: Running,
) -> None:
    for method in ("GET", "DELETE"):
        refused = httpx.request(method, server.url, headers=ACCEPT, timeout=10)
        assert (refused.status_code, refused.headers["allow"], refused.text) == (
            405,
            "POST",
            f"{method} is not served: this endpoint is stateless; use POST\n",
        )


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (
            ("--online-deadline", "5"),
            "error: --online-deadline needs --online (without it nothing is harvested)\n",
        ),
        (("--allow-host", "box"), "error: --allow-host needs --http (stdio has no Host header)\n"),
    ],
)
def test_an_option_that_would_be_ignored_is_a_usage_error_exit_2(
    args: tuple[str, ...], message: str, tmp_path: Path
) -> None:
    done = run_cli("serve", "--snapshot", str(tmp_path / "none.duckdb"), *args, workdir=tmp_path)
    assert (done.returncode, done.stdout, done.stderr) == (2, "", message)
