"""The MCP side by side: our server and a peer over stdio, one client, or a note saying why not."""

from __future__ import annotations

import re
import sys
from pathlib import Path

import anyio
import pytest

from pipeline.bench import Figure, bench_mcp, mcp_peer
from pipeline.bench.bench_peer import PEER_PYTHON_ENV

# A stand-in for the peer's package: its demo audits a two-citation answer in process, and
# its server (the same tool over stdio) says the same of it.
STAND_IN = {
    "tekmeria/__init__.py": "",
    "tekmeria/__main__.py": (
        "from tekmeria.server.app import create_server\n"
        "def demo_config():\n    return None\n"
        "def main():\n    create_server('stdio').run()\n"
    ),
    "tekmeria/server/__init__.py": "",
    "tekmeria/server/app.py": (
        "from pydantic import BaseModel\n"
        "from mcp.server.mcpserver import MCPServer\n"
        "class Report(BaseModel):\n    verdict: str\n    summary: dict[str, int]\n"
        "def create_server(config):\n"
        "    mcp = MCPServer('stand-in')\n"
        "    @mcp.tool()\n"
        "    def audit_answer(answer_text: str) -> Report:\n"
        "        verdict = 'fail' if config is None else '{SERVED}'\n"
        "        return Report(verdict=verdict, summary={'citations': answer_text.count('[')})\n"
        "    return mcp\n"
    ),
    "tekmeria/demo/__init__.py": "",
    "tekmeria/demo/scenario.py": (
        "from types import SimpleNamespace\n"
        "async def run_demo(client):\n"
        "    answer = 'One claim [pmid:1/abstract.1~aaaaa]. Another [pmid:2/abstract.1~bbbbb].'\n"
        "    audit = await client.call_tool('audit_answer', {'answer_text': answer})\n"
        "    return SimpleNamespace(answer=answer, audit=audit)\n"
    ),
}


def _stand_in(root: Path, served: str = "fail") -> Path:
    """The stand-in under ``root``; its server's verdict is ``served`` (its demo's: fail)."""
    for name, text in STAND_IN.items():
        path = root / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text.replace("{SERVED}", served), encoding="utf-8")
    return root


@pytest.fixture(scope="module")
def demo_snapshot(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return bench_mcp.build_demo(tmp_path_factory.mktemp("bench-mcp"))


def _side_by_side(snapshot: Path, workdir: Path) -> list[Figure]:
    return anyio.run(bench_mcp._side_by_side, snapshot, workdir, 6)


def _timed_against_the_stand_in(
    snapshot: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, *, rounds: int
) -> list[Figure]:
    """The side by side against the stand-in peer, in ``rounds`` short rounds."""
    monkeypatch.setenv(PEER_PYTHON_ENV, sys.executable)
    monkeypatch.setenv("PYTHONPATH", str(_stand_in(tmp_path / "peer")))
    monkeypatch.setattr(mcp_peer, "ROUNDS", rounds)
    monkeypatch.setattr(bench_mcp, "SECONDS_PER_ROUND", 0.05)
    return _side_by_side(snapshot, tmp_path)


def test_without_the_peer_there_is_one_note(
    demo_snapshot: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv(PEER_PYTHON_ENV, raising=False)
    [figure] = _side_by_side(demo_snapshot, tmp_path)
    assert figure.note
    assert figure.name == f"  side by side skipped: set {PEER_PYTHON_ENV} to the peer's python"


def test_a_peer_without_its_package_is_a_note(
    demo_snapshot: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv(PEER_PYTHON_ENV, sys.executable)
    monkeypatch.setenv("PYTHONPATH", str(tmp_path))  # no tekmeria there
    [figure] = _side_by_side(demo_snapshot, tmp_path)
    assert figure.note
    assert figure.name == (
        "  MCP side by side skipped: the peer's demo did not run "
        "(ModuleNotFoundError: No module named 'tekmeria')"
    )


def test_both_servers_are_timed_in_turn_and_the_ratios_are_of_the_medians(
    demo_snapshot: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    figures = _timed_against_the_stand_in(demo_snapshot, tmp_path, monkeypatch, rounds=2)
    named = {f.name: f for f in figures}
    ours = named["MCP stdio audit_answer, demo answer (6 citations)"]
    peer = named["  peer (Tekmeria 0.1.1) over stdio, its demo answer (2 citations)"]
    answers = named["  ratio to the peer: answers/s"]
    citations = named["  ratio to the peer: citations/s"]
    assert ours.value > 0 and peer.value > 0
    assert (answers.value, answers.goal) == (pytest.approx(ours.value / peer.value), 5)
    assert citations.value == pytest.approx(answers.value * 6 / 2)
    assert figures[0].note and figures[0].name.startswith("  side by side over stdio (2 ")
    no_work = named["  round trip with no work (unknown tool), ours"].value
    check = named["  client's schema check of our reply"].value
    ceiling = named["  ratio ceiling: a server of ours doing no work"]
    assert named["  round trip with no work (unknown tool), peer"].value > 0
    assert named["  client's schema check of the peer's reply"].value > 0
    # a server of ours that did no work would still cost the no-work round trip and the check
    assert (ceiling.value, ceiling.goal) == (
        pytest.approx((1 / peer.value) / (1 / no_work + 1 / check)),
        5,
    )
    # the audit per CPU-second: this process's (the client's) and each server's, per call
    ours_cpu = named["  per CPU-second over stdio, ours"]
    peer_cpu = named["  per CPU-second over stdio, peer (Tekmeria 0.1.1)"]
    for side, figure in (("ours", ours_cpu), ("peer", peer_cpu)):
        server = named[f"    CPU per call: {side} server"].value
        client = named[f"    CPU per call: client of {side}"].value
        assert server >= 0 and client > 0  # a short round may cost a server under one tick
        assert figure.value == pytest.approx(1000 / (server + client))
    per_cpu = named["  ratio to the peer per CPU-second"]
    assert (per_cpu.value, per_cpu.goal) == (pytest.approx(ours_cpu.value / peer_cpu.value), 5)


def test_each_sides_reply_is_described_like_for_like(
    demo_snapshot: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    figures = _timed_against_the_stand_in(demo_snapshot, tmp_path, monkeypatch, rounds=1)
    lines = [f.name for f in figures if f.note]
    shape = (
        r"  {}'s reply: outputSchema \d+\.\d KB, structuredContent \d+\.\d KB "
        r"\((\d+) JSON values\), text block \d+\.\d KB"
    )
    [ours] = [m for line in lines if (m := re.fullmatch(shape.format("ours"), line))]
    [peer] = [m for line in lines if (m := re.fullmatch(shape.format("peer"), line))]
    assert int(ours[1]) > 100  # our demo report: 7 sentences, 6 citations with their passages
    # the stand-in's report, {"verdict": "fail", "summary": {"citations": 2}}: 4 JSON values
    assert peer[1] == "4"


def test_the_values_a_schema_check_walks_are_counted_at_every_depth() -> None:
    assert mcp_peer._values({"a": [1, None, {"b": "x"}], "c": {}}) == 7
    assert mcp_peer.in_series(2.0, 2.0) == pytest.approx(1.0)


def test_a_peer_server_that_disagrees_with_its_demo_is_a_note_not_a_figure(
    demo_snapshot: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv(PEER_PYTHON_ENV, sys.executable)
    monkeypatch.setenv("PYTHONPATH", str(_stand_in(tmp_path / "peer", served="pass")))
    [figure] = _side_by_side(demo_snapshot, tmp_path)
    assert figure.note
    assert figure.name == (
        "  MCP side by side skipped: the peer's server did not audit its demo answer as its "
        "demo does"
    )


def test_a_peer_server_that_does_not_start_is_a_note_with_its_last_log_line(
    demo_snapshot: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    root = _stand_in(tmp_path / "peer")
    main = root / "tekmeria" / "__main__.py"
    main.write_text(
        main.read_text(encoding="utf-8").replace(
            "create_server('stdio').run()", "raise SystemExit('no server here')"
        ),
        encoding="utf-8",
    )
    monkeypatch.setenv(PEER_PYTHON_ENV, sys.executable)
    monkeypatch.setenv("PYTHONPATH", str(root))
    [figure] = _side_by_side(demo_snapshot, tmp_path)
    assert figure.note
    assert figure.name.startswith("  MCP side by side skipped: the peer's server failed (")
    assert figure.name.endswith("; its log: no server here)")


def test_without_a_server_s_cpu_the_cpu_figures_are_one_note() -> None:
    rates = {"ours client cpu": 0.002, "peer client cpu": 0.002, "ours server cpu": 0.003}
    [figure] = mcp_peer._cpu_figures(rates)  # the peer's server CPU could not be read
    assert figure.note
    assert figure.name == "  CPU per call not measured: no /proc/PID/stat here"
