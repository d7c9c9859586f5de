"""Streamable HTTP for ``citeseal serve --http HOST:PORT`` (docs/serve.md, "Streamable HTTP").

The rules, each enforced here and tested in ``tests/pipeline/serve/test_http.py``:

* ``HOST:PORT`` follows one grammar (:func:`parse_listen`); anything else is one usage error
  naming the part that failed (exit 2). Host names other than ``localhost`` are refused: a
  name may resolve to several addresses, and the server must know which one it binds.
* Loopback (``127.0.0.0/8``, ``::1``, ``localhost``) needs nothing more. Any other address needs
  ``CITESEAL_SERVE_TOKEN`` (:func:`require_token`), checked before a socket is opened, so a
  refused bind never listens, not even for a moment.
* With a token set (on any address), every HTTP request must carry ``Authorization: Bearer
  TOKEN`` (the scheme in any case, RFC 7235 §2.1: ``bearer`` too); the token is compared in
  constant time (:class:`BearerGate`) and anything else is ``401`` with ``WWW-Authenticate:
  Bearer``. The token never reaches a log line: the access
  log shows the client, method, path and status only.
* The SDK's DNS-rebinding protection is always on (:func:`allowed_hosts`): the ``Host`` header
  must name the bound address (or, on loopback, any loopback name) with the port, and an
  ``Origin`` header, when sent, the same with ``http://``. A wildcard bind accepts the loopback
  names and the machine's host name; any other name or address clients use must be listed
  with ``--allow-host NAME`` (repeatable; explicit rather than "every address of this
  machine", which no portable call lists reliably and which would widen what a rebinding page
  may name). A bad ``Host`` is ``421`` naming the refused value and the option that allows it
  (:class:`HostGate`, ahead of the SDK's own check, which stays on); a bad ``Origin`` is
  ``403`` (the SDK's answer).
* The endpoint is ``/mcp``, stateless (no ``Mcp-Session-Id``: every call stands alone, and
  handles carry all the state there is), so the server keeps no per-client memory. With no
  session there is no stream to ``GET`` and nothing to ``DELETE``: both are ``405`` with
  ``Allow: POST`` (:class:`PostOnly`; the SDK would hold a ``GET`` open forever).
* Logs go to stderr; the startup line is written once the socket listens. SIGINT and SIGTERM
  stop the server gracefully (open requests get :data:`GRACE_SECONDS`) and the command exits
  0: the server writes no file, so nothing can be left half-written.
"""

from __future__ import annotations

import asyncio
import hashlib
import hmac
import ipaddress
import logging
import re
import signal
import socket
from collections.abc import Awaitable, Callable, MutableMapping
from dataclasses import dataclass
from types import FrameType
from typing import TYPE_CHECKING, Any

from audit.errors import InputError
from pipeline.errors import ServeError

if TYPE_CHECKING:
    from mcp.server.mcpserver import MCPServer

PATH = "/mcp"
GRACE_SECONDS = 5
TOKEN_ENV = "CITESEAL_SERVE_TOKEN"  # noqa: S105 - the variable's name, not a token
LOOPBACK_NAMES = ("127.0.0.1", "localhost", "[::1]")
_EXAMPLE = "127.0.0.1:8765"

Scope = MutableMapping[str, Any]
Message = MutableMapping[str, Any]
Receive = Callable[[], Awaitable[Message]]
Send = Callable[[Message], Awaitable[None]]
ASGIApp = Callable[[Scope, Receive, Send], Awaitable[None]]


@dataclass(frozen=True)
class Listen:
    """Where the HTTP server listens: ``host`` (an IP literal, or ``localhost``) and ``port``."""

    host: str
    port: int

    @property
    def loopback(self) -> bool:
        return self.host == "localhost" or ipaddress.ip_address(self.host).is_loopback

    @property
    def wildcard(self) -> bool:
        return self.host != "localhost" and ipaddress.ip_address(self.host).is_unspecified

    @property
    def authority(self) -> str:
        """``host:port`` as a ``Host`` header and a URL write it (IPv6 in brackets)."""
        host = f"[{self.host}]" if ":" in self.host else self.host
        return f"{host}:{self.port}"

    @property
    def url(self) -> str:
        return f"http://{self.authority}{PATH}"


def parse_listen(text: str) -> Listen:
    """``listen = host ":" port``; ``host = IPv4 | "[" IPv6 "]" | "localhost"``;
    ``port = 1*5DIGIT`` from 1 to 65535."""
    host, colon, port = text.rpartition(":")
    if not colon or not host:
        raise InputError(f"--http expects HOST:PORT (e.g. {_EXAMPLE}), got {text!r}")
    return Listen(_host(host, text), _port(port, text))


def _host(host: str, text: str) -> str:
    """``host = IPv4 | "[" IPv6 "]" | "localhost"`` (brackets required around IPv6)."""
    if host.lower() == "localhost":
        return "localhost"
    bracketed = host.startswith("[") and host.endswith("]")
    try:
        address = ipaddress.ip_address(host[1:-1] if bracketed else host)
    except ValueError:
        address = None
    if address is None or bracketed != (address.version == 6):
        raise InputError(
            f"--http host must be an IPv4 address, [an IPv6 address] or localhost, "
            f"got {host!r} in {text!r}"
        )
    return str(address)


def _port(port: str, text: str) -> int:
    """``port = 1*5DIGIT``, from 1 to 65535."""
    if not (port.isascii() and port.isdigit() and len(port) <= 5 and 1 <= int(port) <= 65535):
        raise InputError(
            f"--http port must be a whole number from 1 to 65535, got {port!r} in {text!r}"
        )
    return int(port)


def require_token(listen: Listen, token: str | None) -> None:
    """Fail closed: a bind beyond loopback without a bearer token is refused."""
    if token is None and not listen.loopback:
        raise InputError(
            f"--http {listen.authority} is not a loopback address; serving it needs a bearer "
            f"token in {TOKEN_ENV}",
            advice=f"bind 127.0.0.1, or set {TOKEN_ENV} (at least 32 printable characters) "
            "and give clients the header 'Authorization: Bearer <token>'",
        )


_HOST_NAME = re.compile(r"[A-Za-z0-9]([A-Za-z0-9.-]{0,251}[A-Za-z0-9])?")


def parse_allow_host(text: str) -> str:
    """``--allow-host`` = a DNS name, an IPv4 address or ``[IPv6]``, without a port; its
    normal form (lower case, the address as :mod:`ipaddress` writes it)."""
    bracketed = text.startswith("[") and text.endswith("]")
    try:
        address = ipaddress.ip_address(text[1:-1] if bracketed else text)
    except ValueError:
        address = None
    if address is not None and bracketed == (address.version == 6):
        return f"[{address}]" if bracketed else str(address)
    if not bracketed and _HOST_NAME.fullmatch(text) and ":" not in text:
        return text.lower()
    raise InputError(
        "--allow-host expects a host name, an IPv4 address or [an IPv6 address], without a "
        f"port, got {text!r}"
    )


def allowed_hosts(
    listen: Listen, hostname: str, extra: tuple[str, ...] = ()
) -> tuple[list[str], list[str]]:
    """The ``Host`` and ``Origin`` values the DNS-rebinding check accepts: loopback names for a
    loopback bind, the address itself for another one, and for a wildcard bind (``0.0.0.0``,
    ``::``) the loopback names and the machine's ``hostname``; then the ``extra`` names
    (``--allow-host``, normal form); always with the port."""
    port = listen.port
    names: list[str] = []
    if listen.loopback or listen.wildcard:
        names += LOOPBACK_NAMES
    if listen.wildcard:
        names.append(hostname.lower())
    else:
        names.append(listen.authority.rsplit(":", 1)[0])
    names += extra
    names = list(dict.fromkeys(names))
    return [f"{n}:{port}" for n in names], [f"http://{n}:{port}" for n in names]


class BearerGate:
    """ASGI middleware: an HTTP request without ``Authorization: Bearer TOKEN`` is ``401``.

    The comparison hashes both sides first and compares the digests with
    :func:`hmac.compare_digest`, so neither the token's content nor its length leaks through
    timing. Several ``Authorization`` headers are refused, never one of them picked."""

    def __init__(self, app: ASGIApp, token: str) -> None:
        self._app = app
        self._expected = hashlib.sha256(token.encode()).digest()

    def allows(self, headers: list[tuple[bytes, bytes]]) -> bool:
        given = [value for name, value in headers if name.lower() == b"authorization"]
        if len(given) != 1:
            return False
        scheme, space, credentials = given[0].partition(b" ")
        if not space or scheme.lower() != b"bearer":  # the scheme is case-insensitive
            return False
        token = credentials.lstrip(b" ")  # credentials = auth-scheme 1*SP token68
        return hmac.compare_digest(hashlib.sha256(token).digest(), self._expected)

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] == "http" and not self.allows(list(scope.get("headers", []))):
            body = b"missing or wrong bearer token\n"
            await send(
                {
                    "type": "http.response.start",
                    "status": 401,
                    "headers": [
                        (b"content-type", b"text/plain; charset=utf-8"),
                        (b"content-length", str(len(body)).encode()),
                        (b"www-authenticate", b'Bearer realm="citeseal"'),
                    ],
                }
            )
            await send({"type": "http.response.body", "body": body})
            return
        await self._app(scope, receive, send)


async def _plain(send: Send, status: int, body: str, *headers: tuple[bytes, bytes]) -> None:
    data = body.encode()
    await send(
        {
            "type": "http.response.start",
            "status": status,
            "headers": [
                (b"content-type", b"text/plain; charset=utf-8"),
                (b"content-length", str(len(data)).encode()),
                *headers,
            ],
        }
    )
    await send({"type": "http.response.body", "body": data})


class PostOnly:
    """ASGI middleware: the stateless endpoint answers ``GET`` and ``DELETE`` with ``405``
    (``Allow: POST``): there is no session stream to open and no session to end."""

    def __init__(self, app: ASGIApp) -> None:
        self._app = app

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] == "http" and scope.get("method") in ("GET", "DELETE"):
            message = f"{scope['method']} is not served: this endpoint is stateless; use POST\n"
            await _plain(send, 405, message, (b"allow", b"POST"))
            return
        await self._app(scope, receive, send)


class HostGate:
    """ASGI middleware: a request whose ``Host`` header is not one of ``hosts`` is ``421``,
    naming the refused value and how to allow it (the SDK's own check stays behind it)."""

    def __init__(self, app: ASGIApp, hosts: list[str]) -> None:
        self._app = app
        self._hosts = frozenset(host.lower() for host in hosts)

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] == "http":
            given = [v for n, v in scope.get("headers", []) if n.lower() == b"host"]
            host = given[0].decode("latin-1") if len(given) == 1 else None
            if host is None or host.lower() not in self._hosts:
                await _plain(send, 421, host_refusal(host))
                return
        await self._app(scope, receive, send)


def host_refusal(host: str | None) -> str:
    """The ``421`` body: which ``Host`` was refused and the option that would allow it."""
    if host is None:
        return "refused: a request needs exactly one Host header\n"
    name = host.rsplit(":", 1)[0] if not host.endswith("]") else host
    shown = host.encode("unicode_escape").decode("ascii")
    return (
        f"refused Host {shown!r}: not a name this server answers to; to allow it, start "
        f"citeseal serve with --allow-host {name.encode('unicode_escape').decode('ascii')}\n"
    )


# uvicorn's own configuration, but everything on stderr (its default sends the access log to
# stdout) and only warnings from the server itself (the startup line is ours).
LOG_CONFIG: dict[str, Any] = {
    "version": 1,
    "disable_existing_loggers": False,
    "formatters": {
        "default": {"()": "uvicorn.logging.DefaultFormatter", "fmt": "%(levelprefix)s %(message)s"},
        "access": {
            "()": "uvicorn.logging.AccessFormatter",
            "fmt": '%(levelprefix)s %(client_addr)s - "%(request_line)s" %(status_code)s',
        },
    },
    "handlers": {
        "default": {
            "formatter": "default",
            "class": "logging.StreamHandler",
            "stream": "ext://sys.stderr",
        },
        "access": {
            "formatter": "access",
            "class": "logging.StreamHandler",
            "stream": "ext://sys.stderr",
        },
    },
    "loggers": {
        "uvicorn": {"handlers": ["default"], "level": "WARNING", "propagate": False},
        "uvicorn.error": {"level": "WARNING"},
        "uvicorn.access": {"handlers": ["access"], "level": "INFO", "propagate": False},
    },
}


def log_config(fmt: str) -> dict[str, Any]:
    """:data:`LOG_CONFIG`, or for ``--log-format json`` the same loggers without handlers of
    their own: their records reach the root handler (:mod:`pipeline.serve.logs`), one JSON
    object per line like every other line."""
    if fmt != "json":
        return LOG_CONFIG
    return {
        "version": 1,
        "disable_existing_loggers": False,
        "loggers": {
            "uvicorn": {"handlers": [], "level": "WARNING", "propagate": True},
            "uvicorn.error": {"level": "WARNING"},
            "uvicorn.access": {"handlers": [], "level": "INFO", "propagate": True},
        },
    }


def bind(listen: Listen) -> socket.socket:
    """The listening socket, or one ``ServeError`` line (address in use, not this machine's)."""
    family = socket.AF_INET6 if ":" in listen.host else socket.AF_INET
    host = "127.0.0.1" if listen.host == "localhost" else listen.host
    sock = socket.socket(family, socket.SOCK_STREAM)
    try:
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        if family == socket.AF_INET6:
            sock.setsockopt(socket.IPPROTO_IPV6, socket.IPV6_V6ONLY, 1)
        sock.bind((host, listen.port))
        sock.listen(128)
    except OSError as error:
        sock.close()
        raise ServeError(
            f"cannot listen on {listen.authority}: {error.strerror or error}"
        ) from None
    sock.setblocking(False)
    return sock


def http_app(
    server: MCPServer,
    listen: Listen,
    token: str | None,
    hostname: str,
    extra_hosts: tuple[str, ...] = (),
) -> ASGIApp:
    """The ASGI app: the SDK's stateless Streamable HTTP endpoint at ``/mcp`` with its
    DNS-rebinding check on, behind :class:`PostOnly`, :class:`HostGate` and, when there is a
    token, :class:`BearerGate` (outermost: nothing is answered before the token checks)."""
    from mcp.server.transport_security import TransportSecuritySettings

    hosts, origins = allowed_hosts(listen, hostname, extra_hosts)
    security = TransportSecuritySettings(
        enable_dns_rebinding_protection=True, allowed_hosts=hosts, allowed_origins=origins
    )
    app: ASGIApp = server.streamable_http_app(
        streamable_http_path=PATH,
        stateless_http=True,
        transport_security=security,
        host=listen.host,
    )
    app = HostGate(PostOnly(app), hosts)
    return BearerGate(app, token) if token is not None else app


def serve_http(
    server: MCPServer,
    listen: Listen,
    *,
    token: str | None,
    announce: Callable[[str], None],
    extra_hosts: tuple[str, ...] = (),
    log_format: str = "text",
) -> None:
    """Serve ``server`` over Streamable HTTP until SIGINT or SIGTERM; ``announce`` gets the URL
    once the socket listens. Refuses (before binding) what :func:`require_token` refuses."""
    import uvicorn

    require_token(listen, token)
    # the session manager's start/stop notes would come before the startup line; keep warnings
    logging.getLogger("mcp.server.streamable_http_manager").setLevel(logging.WARNING)
    app = http_app(server, listen, token, socket.gethostname(), extra_hosts)
    sock = bind(listen)

    class Server(uvicorn.Server):
        def handle_exit(self, sig: int, frame: FrameType | None) -> None:
            # stop gracefully; unlike uvicorn, do not re-raise the signal once stopped, so a
            # requested stop exits 0 (a second Ctrl-C still forces the stop)
            if self.should_exit and sig == signal.SIGINT:
                self.force_exit = True
            self.should_exit = True

    config = uvicorn.Config(
        app,
        log_config=log_config(log_format),
        lifespan="on",
        timeout_graceful_shutdown=GRACE_SECONDS,
        server_header=False,
    )
    runner = Server(config)

    async def main() -> None:
        task = asyncio.ensure_future(runner.serve(sockets=[sock]))
        while not runner.started and not task.done():
            await asyncio.sleep(0.02)
        if runner.started:
            announce(listen.url)
        await task

    try:
        asyncio.run(main())
    finally:
        sock.close()
