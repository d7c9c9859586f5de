"""``make bench``'s MCP side by side: our server and the peer's over stdio, one client, one run.

The peer (Tekmeria 0.1.1, :data:`~pipeline.bench.bench_peer.PEER_NAME`) runs in its own
interpreter, named by :data:`~pipeline.bench.bench_peer.PEER_PYTHON_ENV`; that interpreter
needs the peer's dependencies (its MCP server imports the SDK, pydantic, structlog, …; the
handle figures need none of them). Its demo answer is what its own demo audits
(``tekmeria.demo.scenario.run_demo`` in process, :data:`PEER_ANSWER_SCRIPT`: 5 citations);
ours is :func:`pipeline.demo.planted_answer` (6 citations). Both servers are launched as a
host launches them, over stdio (``citeseal serve --snapshot … --demo-key``; ``python -m
tekmeria --demo``: its recorded fixtures, its public demo key), each with its standard error
written to a file in the bench's folder, and both are called by the same
:class:`mcp.Client` of this venv, so the client's work on each reply (parsing it, validating
``structuredContent`` against the tool's ``outputSchema``) is the same code on both sides.

Each server's first ``audit_answer`` reply is checked before anything is timed: not an error,
and (the peer) the same verdict and citation count as its in-process demo; what each reply
holds is printed beside the figures (its tool's ``outputSchema``, its ``structuredContent`` and
its text block, in bytes, and the JSON values the schema check walks), so the comparison is
seen to be like for like. Then :data:`ROUNDS` rounds, interleaved: ours, the peer's; in each,
per server, the audit, a round trip with no work (:data:`NO_SUCH_TOOL`: refused by the SDK at
once, no schema check) and the client's schema check of that server's first reply, alone;
medians, and the ratios of the medians. The audit is also counted in CPU: this process's
(the client's, ``time.process_time``) and the server's (:func:`~.procmem.cpu_seconds` of its
process, read before and after), per call, so the comparison holds on a loaded host, where the
wall clock mostly measures the other jobs; off Linux a note says it was not measured. The
*ratio ceiling* is the peer's audit time over our
no-work round trip plus our reply's check: the ratio a server of ours that did no work at all
would still be held to by this client (optimistic: such a reply is still serialized and
parsed). When the peer is not configured, or does not run, a note says why and nothing else
changes.
"""

from __future__ import annotations

import contextlib
import json
import os
import statistics
import subprocess
import sys
import time
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from pipeline.bench import Figure
from pipeline.bench.bench_peer import PEER_NAME, PeerUnavailable, peer_python
from pipeline.bench.procmem import child_pids, cpu_seconds

ROUNDS = 5
GOAL_RATIO = 5  # issue 17: audit_answer through MCP at five times the peer's rate
TOOL = "audit_answer"
SIDES = ("ours", "peer")
NO_SUCH_TOOL = "no_such_tool"
"""A tool neither server has: its call is refused at once, the cost of a round trip alone."""

PEER_ANSWER_SCRIPT = """
import json, os, anyio
from mcp import Client
from tekmeria.__main__ import demo_config
from tekmeria.server.app import create_server
from tekmeria.demo.scenario import run_demo
os.dup2(os.open(os.devnull, os.O_WRONLY), 2)  # its per-call log lines (an import error shows)
async def main():
    async with Client(create_server(demo_config())) as client:
        run = await run_demo(client)
    report = run.audit.structured_content
    print(json.dumps({"answer": run.answer, "verdict": report["verdict"],
                      "citations": report["summary"]["citations"]}))
anyio.run(main)
"""
"""Run in the peer's interpreter: its demo's answer, and what its own audit of it says."""

SERVER_SCRIPT = """
import importlib, os, sys
os.dup2(os.open(sys.argv[1], os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600), 2)
sys.argv = sys.argv[2:]
module, _, function = sys.argv[0].partition(":")
getattr(importlib.import_module(module), function)()
"""
"""A server on stdio with its standard error in the file ``argv[1]``: ``argv[2]`` names its
entry point (``module:function``, as a console script does), ``argv[3:]`` its arguments."""


def peer_answer(python: Path) -> dict[str, Any]:
    """The peer's demo answer and its own in-process verdict on it (:data:`PEER_ANSWER_SCRIPT`);
    :class:`PeerUnavailable` with the last line of its error when it does not run."""
    done = subprocess.run(  # noqa: S603 (the configured interpreter, no shell)
        [str(python), "-c", PEER_ANSWER_SCRIPT],
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    lines = done.stdout.strip().splitlines()
    if done.returncode != 0 or not lines:
        error = done.stderr.strip().splitlines()
        last = error[-1] if error else f"exit {done.returncode}, no output"
        raise PeerUnavailable(f"MCP side by side skipped: the peer's demo did not run ({last})")
    return json.loads(lines[-1])


def _stdio(python: str, errors: Path, entry: str, *args: str) -> Any:
    """How to launch ``entry`` over stdio: the SDK's default environment (as a host gives a
    server), with this process's ``PYTHONPATH`` when it has one (where the peer may live)."""
    from mcp.client.stdio import StdioServerParameters, get_default_environment

    env = get_default_environment()
    if os.environ.get("PYTHONPATH"):
        env["PYTHONPATH"] = os.environ["PYTHONPATH"]
    return StdioServerParameters(
        command=python, args=["-c", SERVER_SCRIPT, str(errors), entry, *args], env=env
    )


def _last_line(path: Path) -> str:
    lines = path.read_text(encoding="utf-8", errors="replace").strip().splitlines()
    return lines[-1] if lines else "no output"


@dataclass(frozen=True)
class Side:
    """One server in the side by side: its client, the arguments of its demo answer, its
    first ``audit_answer`` reply (the one the client's schema check is timed on) and the pid of
    its process (None when it could not be told apart)."""

    name: str
    client: Any
    arguments: dict[str, Any]
    reply: Any
    pid: str | None = None


def new_child(before: set[str]) -> str | None:
    """The one child process started since ``before`` was taken (:func:`child_pids`), or None."""
    started = child_pids() - before
    return started.pop() if len(started) == 1 else None


def in_series(*rates: float) -> float:
    """The rate of steps done one after the other at these rates (their times add up)."""
    return 1 / sum(1 / rate for rate in rates)


def _values(node: object) -> int:
    """JSON values in ``node`` (each one is a step of the client's schema check)."""
    if isinstance(node, dict):
        return 1 + sum(_values(v) for v in node.values())
    if isinstance(node, list):
        return 1 + sum(_values(v) for v in node)
    return 1


async def _reply_line(side: Side) -> str:
    """What the side's reply holds, like for like: its output schema, structured content and
    text block, in bytes of compact JSON / UTF-8."""
    tools = {tool.name: tool for tool in (await side.client.list_tools()).tools}
    schema = tools[TOOL].output_schema
    published = f"outputSchema {_kb(schema)}" if schema is not None else "no outputSchema"
    structured = side.reply.structured_content
    text = "".join(block.text for block in side.reply.content if block.type == "text")
    return (
        f"  {side.name}'s reply: {published}, structuredContent {_kb(structured)} "
        f"({_values(structured)} JSON values), text block {len(text.encode()) / 1024:.1f} KB"
    )


def _kb(value: object) -> str:
    return f"{len(json.dumps(value, separators=(',', ':')).encode()) / 1024:.1f} KB"


def _steps(side: Side) -> dict[str, Callable[[], Awaitable[object]]]:
    client = side.client
    return {
        "audit": lambda: client.call_tool(TOOL, side.arguments),
        "no work": lambda: client.call_tool(NO_SUCH_TOOL, {}),
        "check": lambda: client.session.validate_tool_result(TOOL, side.reply),
    }


async def _rounds(
    sides: tuple[Side, Side], timed: Callable[[Callable[[], Awaitable[object]]], Awaitable[float]]
) -> dict[str, list[float]]:
    """:data:`ROUNDS` rounds, each side in turn: the audit, a round trip with no work (a tool
    the server does not have: refused by the SDK at once, no schema check), and the client's
    check of the side's first reply against its output schema (in this process, alone)."""
    rates: dict[str, list[float]] = {}
    for _ in range(ROUNDS):
        for side in sides:
            for step, call in _steps(side).items():
                if step == "audit":
                    rate, cpu = await _with_cpu(side, call, timed)
                    for part, seconds in cpu.items():
                        rates.setdefault(f"{side.name} {part} cpu", []).append(seconds)
                else:
                    rate = await timed(call)
                rates.setdefault(f"{side.name} {step}", []).append(rate)
    return rates


async def _with_cpu(
    side: Side,
    call: Callable[[], Awaitable[object]],
    timed: Callable[[Callable[[], Awaitable[object]]], Awaitable[float]],
) -> tuple[float, dict[str, float]]:
    """``timed(call)``, and the CPU seconds per call it cost this process (the client) and,
    when its pid is known and readable, the side's server process."""
    calls = 0

    async def counted() -> object:
        nonlocal calls
        calls += 1
        return await call()

    server = cpu_seconds(side.pid) if side.pid is not None else None
    client = time.process_time()
    rate = await timed(counted)
    cpu = {"client": (time.process_time() - client) / calls}
    after = cpu_seconds(side.pid) if side.pid is not None else None
    if server is not None and after is not None:
        cpu["server"] = (after - server) / calls
    return rate, cpu


async def measure(
    snapshot: Path,
    workdir: Path,
    ours: str,
    ours_citations: int,
    timed: Callable[[Callable[[], Awaitable[object]]], Awaitable[float]],
) -> list[Figure]:
    """The side-by-side figures (or the note saying why there are none): ``ours`` is our demo
    answer (``ours_citations`` citations) on ``snapshot``; ``timed`` gives calls per second."""
    from mcp import Client

    try:
        python = peer_python()
        theirs = peer_answer(python)
    except PeerUnavailable as why:
        return [Figure(f"  {why}", 0, "", note=True)]
    our_log, peer_log = workdir / "serve-ours.log", workdir / "serve-peer.log"
    our_server = _stdio(
        sys.executable,
        our_log,
        "pipeline.cli:main",
        "serve",
        "--snapshot",
        str(snapshot),
        "--demo-key",
    )
    peer_server = _stdio(str(python), peer_log, "tekmeria.__main__:main", "--demo")
    before = child_pids()
    async with Client(our_server) as mine, contextlib.AsyncExitStack() as stack:
        check = await mine.call_tool(TOOL, {"answer": ours})
        if check.is_error:
            raise RuntimeError(f"audit_answer failed over stdio: {check}")
        our_pid, before = new_child(before), child_pids()
        try:
            peer = await stack.enter_async_context(Client(peer_server))
            first = await peer.call_tool(TOOL, {"answer_text": theirs["answer"]})
        except Exception as error:  # noqa: BLE001 (any failure of the peer's server: a note)
            why = f"{type(error).__name__}; its log: {_last_line(peer_log)}"
            return [
                Figure(
                    f"  MCP side by side skipped: the peer's server failed ({why})",
                    0,
                    "",
                    note=True,
                )
            ]
        report = first.structured_content
        if (
            first.is_error
            or not isinstance(report, dict)
            or report.get("verdict") != theirs["verdict"]
            or report["summary"]["citations"] != theirs["citations"]
        ):
            note = "MCP side by side skipped: the peer's server did not audit its demo answer "
            return [Figure(f"  {note}as its demo does", 0, "", note=True)]
        sides = (
            Side("ours", mine, {"answer": ours}, check, our_pid),
            Side("peer", peer, {"answer_text": theirs["answer"]}, first, new_child(before)),
        )
        shapes = [await _reply_line(side) for side in sides]
        rates = await _rounds(sides, timed)
    return _figures(
        {k: statistics.median(v) for k, v in rates.items()},
        shapes,
        ours_citations,
        int(theirs["citations"]),
    )


def _figures(
    rate: dict[str, float], shapes: list[str], ours_citations: int, peer_citations: int
) -> list[Figure]:
    """The side by side's figures from the medians of its rounds (``rate``)."""
    ours, peer = rate["ours audit"], rate["peer audit"]
    # A server that did no work at all would still cost the round trip with no work and the
    # client's check of the reply: the highest ratio any change to the server can reach.
    ceiling = in_series(rate["ours no work"], rate["ours check"]) / peer
    label = f"{ROUNDS} interleaved rounds, one client"
    return [
        Figure(f"  side by side over stdio ({label}):", 0, "", note=True),
        *(Figure(shape, 0, "", note=True) for shape in shapes),
        Figure(
            f"MCP stdio audit_answer, demo answer ({ours_citations} citations)", ours, "answers/s"
        ),
        Figure(
            f"  peer ({PEER_NAME}) over stdio, its demo answer ({peer_citations} citations)",
            peer,
            "answers/s",
        ),
        Figure("  ratio to the peer: answers/s", ours / peer, "×", GOAL_RATIO),
        Figure(
            "  ratio to the peer: citations/s",
            ours * ours_citations / (peer * peer_citations),
            "×",
            GOAL_RATIO,
        ),
        Figure("  round trip with no work (unknown tool), ours", rate["ours no work"], "/s"),
        Figure("  round trip with no work (unknown tool), peer", rate["peer no work"], "/s"),
        Figure("  client's schema check of our reply", rate["ours check"], "/s"),
        Figure("  client's schema check of the peer's reply", rate["peer check"], "/s"),
        Figure("  ratio ceiling: a server of ours doing no work", ceiling, "×", GOAL_RATIO),
        *_cpu_figures(rate),
    ]


def _cpu_figures(rate: dict[str, float]) -> list[Figure]:
    """The audit per CPU-second of client and server together, each side's CPU per call, and
    the ratio of the two sides per CPU-second (or a note when a server's CPU was not read)."""
    if "ours server cpu" not in rate or "peer server cpu" not in rate:
        return [Figure("  CPU per call not measured: no /proc/PID/stat here", 0, "", note=True)]
    total = {side: rate[f"{side} client cpu"] + rate[f"{side} server cpu"] for side in SIDES}
    figures = []
    for side, label in (("ours", "ours"), ("peer", f"peer ({PEER_NAME})")):
        figures += [
            Figure(f"  per CPU-second over stdio, {label}", 1 / total[side], "answers/s"),
            Figure(f"    CPU per call: {side} server", rate[f"{side} server cpu"] * 1000, "ms"),
            Figure(f"    CPU per call: client of {side}", rate[f"{side} client cpu"] * 1000, "ms"),
        ]
    ratio = total["peer"] / total["ours"]
    return [*figures, Figure("  ratio to the peer per CPU-second", ratio, "×", GOAL_RATIO)]
