"""CLI: ``citeseal serve`` — an MCP server over one snapshot, on stdio or, with ``--http
HOST:PORT``, Streamable HTTP (:mod:`pipeline.serve.transport`; docs/serve.md).

The snapshot is checked (manifest, file, digest, seal: :func:`pipeline.snapshot.trust
.trust_snapshot`) before the server starts, so a snapshot that fails is one ``error:`` line
and exit 1, and no host ever sees a server for it. While serving, stdout carries only the
protocol (the SDK owns file descriptor 1); the one startup note and every log go to stderr
(``--log-level``, ``--log-format text|json``: :mod:`pipeline.serve.logs`). Each tool call has a
deadline: ``CITESEAL_SERVE_DEADLINE`` seconds, default 30 (with ``--online``, at least the
``--online-deadline``).
``--http`` is parsed and a bind beyond loopback without ``CITESEAL_SERVE_TOKEN`` refused
before the snapshot is even checked, so a refused server never opens a socket.
"""

from __future__ import annotations

import sys
from typing import Annotated

import typer

from audit.errors import InputError
from pipeline.cli.common import minting_keyring, seal_policy, trusted_snapshot
from pipeline.cli.options import DemoKeyOpt, SnapshotOpt
from pipeline.cli.output import raw
from pipeline.serve.calls import DEFAULT_CALL_DEADLINE
from pipeline.serve.logs import LEVELS
from pipeline.settings import Settings

DEFAULT_DEADLINE = 60.0
"""``--online-deadline``'s default (:data:`pipeline.serve.online.DEFAULT_DEADLINE`)."""
OnlineOpt = Annotated[
    bool,
    typer.Option(
        "--online",
        help="Harvest live what the snapshot lacks (a record id, a search with fewer results "
        "than asked) into a sealed child snapshot of its lineage (docs/serve.md).",
    ),
]
OnlineDeadlineOpt = Annotated[
    float | None,
    typer.Option(
        "--online-deadline",
        metavar="SECONDS",
        help="With --online: seconds one live call may take before it answers that upstream "
        f"is unavailable (default {DEFAULT_DEADLINE:g}).",
    ),
]
LogLevelOpt = Annotated[
    str,
    typer.Option(
        "--log-level",
        metavar="LEVEL",
        help=f"Log on stderr at this level: {', '.join(LEVELS)} (info adds one line per "
        "tool call: tool, duration, code).",
    ),
]
LogFormatOpt = Annotated[
    str,
    typer.Option(
        "--log-format",
        metavar="FORMAT",
        help="text, or json: one JSON object per line (time, level, logger, message; tool, "
        "duration_ms, code per call).",
    ),
]
HttpOpt = Annotated[
    str | None,
    typer.Option(
        "--http",
        metavar="HOST:PORT",
        help="Serve Streamable HTTP at http://HOST:PORT/mcp instead of stdio (e.g. "
        "127.0.0.1:8765); an address beyond loopback needs CITESEAL_SERVE_TOKEN.",
    ),
]
AllowHostOpt = Annotated[
    list[str] | None,
    typer.Option(
        "--allow-host",
        metavar="NAME",
        help="With --http: also accept requests whose Host header names NAME (a host name or "
        "address clients use to reach this machine, e.g. its LAN address when bound to "
        "0.0.0.0); repeatable.",
    ),
]


def _check_options(
    http: str | None, online: bool, online_deadline: float | None, allow: list[str]
) -> None:
    """Fail closed on an option that would be silently ignored."""
    if online_deadline is not None and not online:
        raise InputError("--online-deadline needs --online (without it nothing is harvested)")
    if online_deadline is not None and not online_deadline > 0:
        raise InputError(
            f"--online-deadline must be a positive number of seconds, got {online_deadline:g}"
        )
    if allow and http is None:
        raise InputError("--allow-host needs --http (stdio has no Host header)")


def serve_command(
    snapshot: SnapshotOpt,
    demo_key: DemoKeyOpt = False,
    http: HttpOpt = None,
    online: OnlineOpt = False,
    online_deadline: OnlineDeadlineOpt = None,
    allow_host: AllowHostOpt = None,
    log_level: LogLevelOpt = "warning",
    log_format: LogFormatOpt = "text",
) -> None:
    """Serve a snapshot to MCP hosts over stdio (or Streamable HTTP with --http): search,
    fetch, resolve and audit tools; without --online it never touches the network and writes
    nothing."""
    from pipeline.serve import logs, transport

    allow = allow_host or []
    _check_options(http, online, online_deadline, allow)
    logs.check_choice("--log-level", log_level, logs.LEVELS)
    logs.check_choice("--log-format", log_format, logs.FORMATS)
    deadline = DEFAULT_DEADLINE if online_deadline is None else online_deadline
    listen = transport.parse_listen(http) if http is not None else None
    extra_hosts = tuple(dict.fromkeys(transport.parse_allow_host(name) for name in allow))
    settings = Settings.from_env()
    call_deadline = settings.serve_deadline or max(
        DEFAULT_CALL_DEADLINE, deadline if online else 0.0
    )
    logs.configure(log_level, log_format, [*settings.secrets(), settings.email])
    if listen is not None:
        transport.require_token(listen, settings.serve_token)
    keyring = minting_keyring(settings, demo_key)  # a fresh machine: creates it, says where
    policy = seal_policy(settings, demo_key, keyring=keyring)
    trusted = trusted_snapshot(snapshot, settings, policy)

    from pipeline.serve.server import build_server  # the SDK loads only when serving
    from pipeline.serve.service import Served
    from pipeline.serve.stdio import serve_stdio

    if online:
        from pipeline.serve.online import LiveServed

        opened: Served = LiveServed(
            trusted, keyring, policy=policy, settings=settings, deadline=deadline
        )
    else:
        opened = Served(trusted, keyring)
    with opened as served:
        demo = " (handles minted with the PUBLIC demo key)" if keyring.demo else ""
        live = "; --online: live harvests go into sealed children" if online else ""
        what = f"citeseal serve: {trusted.manifest.name} {trusted.manifest.snapshot_id}"
        server = build_server(served, deadline=call_deadline)
        if listen is not None:
            token = " (bearer token required)" if settings.serve_token else ""
            transport.serve_http(
                server,
                listen,
                token=settings.serve_token,
                announce=lambda url: typer.echo(f"{what} on {url}{demo}{token}{live}", err=True),
                extra_hosts=extra_hosts,
                log_format=log_format,
            )
            return
        typer.echo(f"{what} on stdio{demo}{live}", err=True)
        wrapped = sys.stdout
        sys.stdout = raw(wrapped)  # the SDK claims the real stream's descriptor for the wire
        try:
            serve_stdio(server)  # every request read before EOF is answered
        finally:
            sys.stdout = wrapped


def register(app: typer.Typer) -> None:
    """Attach ``citeseal serve`` to the root app."""
    app.command("serve")(serve_command)
