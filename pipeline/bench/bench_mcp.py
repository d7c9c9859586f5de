"""Bench: ``audit_answer`` through MCP (the SDK's in-memory client) on the demo snapshot.

The demo snapshots are built here from the bundled recorded responses (as ``citeseal demo``
does, demo key), and served by :func:`pipeline.serve.server.build_server` exactly as
``citeseal serve`` serves them. Two answers are audited, one ``call_tool`` at a time:

- the demo's planted answer (:func:`pipeline.demo.planted_answer`: 7 sentences, 6 citations,
  every verdict the demo shows), the figure compared with the peer's: Tekmeria audits its demo
  answer at 113 answers/s and 564 citations/s through its in-memory client on these machines;
- a generated answer of :data:`GENERATED_CITATIONS` citations of every passage of the newest
  snapshot, half of them with a verbatim quote.

The server logs as ``citeseal serve`` does (:func:`pipeline.serve.logs.configure` at its
default level: the line per call is not written) and keeps what its audits looked up
(:mod:`audit.lookup_cache`): every call after the first reads nothing from the database.
Beside each MCP figure, in the same rounds, interleaved (``ROUNDS`` rounds, medians): the same
audit called directly (:func:`pipeline.serve.service.audit`, no MCP: what the protocol costs),
both also per CPU-second of this process (``time.process_time``: the client, the server and
the tools' worker threads, all in it; on a loaded host the wall clock mostly measures the
other jobs),
the engine's audit of the answer on a corpus kept open that keeps no look-up (every one read
again: a call's cost for records no call looked up before), and a physical reference,
HMAC-SHA256 of short messages, that shows how loaded the shared machine was while the figures
were taken; and a second server whose tools publish their output schemas as the SDK derives
them (``build_server(flat_schemas=False)``), the figure before :mod:`pipeline.serve.schema_shape`,
which stays while it pays :data:`SCHEMA_GOAL`. Where a call's time goes, in the same rounds: a
round trip with no work (a tool the server does not have, :data:`~.mcp_peer.NO_SUCH_TOOL`), the
client's schema check of the report alone (``ClientSession.validate_tool_result``), and the rate
of the three parts in series (no-work round trip + check + audit without MCP) beside the measured
one; the ceiling is the no-work round trip plus the check, the rate with an audit that cost
nothing. The goal is :data:`GOAL_RATIO` × the peer's figure (issue 17). Then our server and
the peer's side by side over stdio, one client (:mod:`pipeline.bench.mcp_peer`; a note when the
peer is absent). Peak RSS is the process's own high-water mark.
"""

from __future__ import annotations

import hmac
import logging
import shutil
import statistics
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import anyio
import duckdb

from audit.keys import DEMO_KEY, Keyring
from pipeline.bench import Figure, mcp_peer
from pipeline.bench.procmem import peak_kb

PEER_ANSWERS_PER_SECOND = 113.0  # Tekmeria 0.1.1, its demo answer, in-memory client
PEER_CITATIONS_PER_SECOND = 564.0
GOAL_RATIO = 5  # issue 17: audit_answer through MCP at five times the peer's rate
SCHEMA_GOAL = 1.1  # the flattened output schemas stay while they pay 10 % (issue 17)
ROUNDS = 5
SECONDS_PER_ROUND = 1.0  # each measurement runs at least this long
GENERATED_CITATIONS = 200
HMAC_MESSAGES = 50_000


def build_demo(workdir: Path) -> Path:
    """The demo's two snapshots in ``workdir`` (demo key); the newest one's path."""
    from pipeline.demo import REPLAY, REPLAY_UPDATE, SPEC
    from pipeline.snapshot.build import build_snapshot

    demo = Keyring.demo_keyring()
    corpus = workdir / "snapshots"
    corpus.mkdir()
    spec = corpus / "demo.toml"
    shutil.copyfile(SPEC, spec)
    first = build_snapshot(spec, keyring=demo, replay=[REPLAY])
    second = build_snapshot(spec, keyring=demo, parent=first.path, replay=[REPLAY_UPDATE, REPLAY])
    return second.path


def generated_answer(passages: list[tuple[str, str]], citations: int) -> str:
    """``citations`` citations (two per sentence) of the given (handle, text) passages in turn;
    every other one quotes eight words of its passage verbatim."""
    cites = []
    for i in range(citations):
        handle, text = passages[i % len(passages)]
        words = text.split()
        if i % 2 == 0 and len(words) >= 8:
            cites.append(f'[{handle} "{" ".join(words[:8])}"]')
        else:
            cites.append(f"[{handle}]")
    sentences = [
        f"Claim {n + 1} about zentravir and Farrow syndrome {cites[n * 2]} {cites[n * 2 + 1]}."
        for n in range(citations // 2)
    ]
    return " ".join(sentences) + "\n"


def all_passages(con: duckdb.DuckDBPyConnection, keyring: Keyring) -> list[tuple[str, str]]:
    """(handle, text) of every passage of every record's current version, handles minted with
    ``keyring``."""
    from pipeline.snapshot.search import record_passages

    ids = [row[0] for row in con.execute("SELECT record_id FROM records ORDER BY 1").fetchall()]
    out: list[tuple[str, str]] = []
    for record_id in ids:
        view = record_passages(con, record_id, keyring)
        out += [(p.handle, p.text) for p in view.passages if p.handle]
    return out


def _timed(step: Callable[[], object], cpu: list[float] | None = None) -> float:
    """Calls of ``step`` per second over at least SECONDS_PER_ROUND; with ``cpu``, the calls
    per CPU-second of this process (all its threads) are appended to it."""
    calls = 0
    start, cpu_start = time.perf_counter(), time.process_time()
    while (elapsed := time.perf_counter() - start) < SECONDS_PER_ROUND or calls == 0:
        step()
        calls += 1
    _per_cpu_second(cpu, calls, cpu_start)
    return calls / elapsed


async def _timed_async(step: Callable[[], Any], cpu: list[float] | None = None) -> float:
    calls = 0
    start, cpu_start = time.perf_counter(), time.process_time()
    while (elapsed := time.perf_counter() - start) < SECONDS_PER_ROUND or calls == 0:
        await step()
        calls += 1
    _per_cpu_second(cpu, calls, cpu_start)
    return calls / elapsed


def _per_cpu_second(cpu: list[float] | None, calls: int, cpu_start: float) -> None:
    if cpu is not None:
        cpu.append(calls / max(time.process_time() - cpu_start, 1e-9))


async def _no_work(client: Any) -> float:
    """Round trips per second with no work: a tool the server does not have. Its refusal's log
    line (a warning) is not written, as no line is for an audit at the server's default level."""
    from pipeline.serve import calls

    calls.log.disabled = True
    try:
        return await _timed_async(lambda: client.call_tool(mcp_peer.NO_SUCH_TOOL, {}))
    finally:
        calls.log.disabled = False


def _citations(report: dict[str, Any]) -> int:
    return sum(len(s["citations"]) for s in report["sentences"])


async def _measure(snapshot: Path) -> dict[str, list[float]]:
    from mcp import Client

    from audit.citations import parse_answer
    from audit.duckdb_corpus import DuckDBCorpus
    from audit.engine import audit_answer
    from pipeline.demo import TRUST, planted_answer
    from pipeline.serve import logs, service
    from pipeline.serve.server import build_server
    from pipeline.serve.service import Served
    from pipeline.snapshot.trust import trust_snapshot

    demo = Keyring.demo_keyring()
    trusted = trust_snapshot(snapshot, TRUST)
    con = trusted.search_connection()
    try:
        passages = all_passages(con, demo)
    finally:
        con.close()
    answers = {
        "demo": planted_answer(snapshot),
        "generated": generated_answer(passages, GENERATED_CITATIONS),
    }
    messages = [
        f"pmid:{99_000_000 + i}/abstract.{i % 9 + 1}".encode() for i in range(HMAC_MESSAGES)
    ]
    rates: dict[str, list[float]] = {}
    handler = logs.configure()  # as citeseal serve does, before the SDK would install its own
    with Served(trusted, demo) as served, served.cursor() as cursor:
        served.wait_warm()  # timed warm, as a server is once its warm-up has ended
        cold = DuckDBCorpus(trusted.path, sha256=trusted.sha256, connection=cursor)
        derived = Client(build_server(served, flat_schemas=False), raise_exceptions=True)
        async with Client(build_server(served), raise_exceptions=True) as client, derived as before:
            replies = {}
            for name, answer in answers.items():
                result = await client.call_tool("audit_answer", {"answer": answer})
                if result.is_error or not isinstance(result.structured_content, dict):
                    raise RuntimeError(f"audit_answer failed on the {name} answer: {result}")
                rates[f"{name} citations"] = [float(_citations(result.structured_content))]
                replies[name] = result

            for _ in range(ROUNDS):
                for name, answer in answers.items():

                    async def call(answer: str = answer) -> None:
                        await client.call_tool("audit_answer", {"answer": answer})

                    async def call_before(answer: str = answer) -> None:
                        await before.call_tool("audit_answer", {"answer": answer})

                    cpu = rates.setdefault(f"{name} mcp cpu", [])
                    rates.setdefault(f"{name} mcp", []).append(await _timed_async(call, cpu))
                    rates.setdefault(f"{name} before", []).append(await _timed_async(call_before))
                    rates.setdefault(f"{name} direct", []).append(
                        _timed(
                            lambda answer=answer: service.audit(served, answer=answer),
                            rates.setdefault(f"{name} direct cpu", []),
                        )
                    )
                    rates.setdefault(f"{name} cold", []).append(
                        _timed(lambda answer=answer: audit_answer(parse_answer(answer), cold, demo))
                    )
                    rates.setdefault(f"{name} check", []).append(
                        await _timed_async(
                            lambda name=name: client.session.validate_tool_result(
                                "audit_answer", replies[name]
                            )
                        )
                    )
                rates.setdefault("no work", []).append(await _no_work(client))
                rates.setdefault("hmac", []).append(
                    HMAC_MESSAGES
                    * _timed(lambda: [hmac.digest(DEMO_KEY, m, "sha256") for m in messages])
                )
    logging.getLogger().removeHandler(handler)
    return rates


async def _side_by_side(snapshot: Path, workdir: Path, citations: int) -> list[Figure]:
    """Our server and the peer's over stdio, one client, interleaved (:mod:`.mcp_peer`)."""
    from pipeline.demo import planted_answer

    return await mcp_peer.measure(
        snapshot, workdir, planted_answer(snapshot), citations, _timed_async
    )


def run(workdir: Path) -> list[Figure]:
    start = time.perf_counter()
    snapshot = build_demo(workdir)
    built = time.perf_counter() - start
    rates = anyio.run(_measure, snapshot)
    side_by_side = anyio.run(_side_by_side, snapshot, workdir, int(rates["demo citations"][0]))
    no_work = statistics.median(rates["no work"])
    figures = [
        Figure("build the demo snapshots", built, "s", None, False),
        Figure("MCP round trip with no work (unknown tool, in memory)", no_work, "/s"),
        Figure(
            "  ceiling with an audit that cost nothing (demo answer)",
            mcp_peer.in_series(no_work, statistics.median(rates["demo check"])),
            "answers/s",
            GOAL_RATIO * PEER_ANSWERS_PER_SECOND,
        ),
    ]
    for name, label in (("demo", "demo answer"), ("generated", "generated answer")):
        per_answer = int(rates[f"{name} citations"][0])
        mcp = statistics.median(rates[f"{name} mcp"])
        direct = statistics.median(rates[f"{name} direct"])
        peer = name == "demo"
        figures += [
            Figure(
                f"MCP audit_answer, {label} ({per_answer} citations)",
                mcp,
                "answers/s",
                GOAL_RATIO * PEER_ANSWERS_PER_SECOND if peer else None,
            ),
            Figure(
                f"MCP audit_answer, {label}: citations",
                mcp * per_answer,
                "/s",
                GOAL_RATIO * PEER_CITATIONS_PER_SECOND if peer else None,
            ),
            Figure(
                f"  per CPU-second of this process, client and server ({label})",
                statistics.median(rates[f"{name} mcp cpu"]),
                "answers/s",
            ),
            Figure(
                f"  same audit without MCP, per CPU-second ({label})",
                statistics.median(rates[f"{name} direct cpu"]),
                "answers/s",
            ),
            Figure(
                f"  output schemas as the SDK derives them ({label}, before)",
                statistics.median(rates[f"{name} before"]),
                "answers/s",
            ),
            Figure(
                f"  flattened schemas over derived ({label})",
                mcp / statistics.median(rates[f"{name} before"]),
                "×",
                SCHEMA_GOAL,
            ),
            Figure(f"  same audit without MCP ({label})", direct, "answers/s"),
            Figure(
                f"  client's schema check of the report ({label})",
                statistics.median(rates[f"{name} check"]),
                "/s",
            ),
            Figure(
                f"  parts in series: no work + check + audit ({label})",
                mcp_peer.in_series(no_work, statistics.median(rates[f"{name} check"]), direct),
                "answers/s",
            ),
            Figure(
                f"  engine only, no look-up kept ({label})",
                statistics.median(rates[f"{name} cold"]),
                "answers/s",
            ),
            Figure(f"  slowest MCP round ({label})", min(rates[f"{name} mcp"]), "answers/s"),
            Figure(f"  fastest MCP round ({label})", max(rates[f"{name} mcp"]), "answers/s"),
        ]
    figures += side_by_side
    figures += [
        Figure("reference: hmac.digest (load gauge)", statistics.median(rates["hmac"]), "/s"),
        Figure("peak RSS", peak_kb() / 1024, "MB"),
    ]
    return figures
