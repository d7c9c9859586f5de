"""The logs of citeseal serve (pipeline/serve/logs.py): stderr, text or JSON lines, redacted."""

from __future__ import annotations

import io
import json
import logging
import sys
from collections.abc import Iterator

import pytest
from mcp import Client

from audit.errors import InputError
from pipeline.cli import main
from pipeline.serve import describe, logs
from pipeline.serve.server import build_server
from pipeline.serve.service import Served
from pipeline.settings import Settings

pytestmark = pytest.mark.anyio

SECRET = "ncbi-Zq81xTUmV0s3cr3tValue"
EMAIL = "alice@example.org"


@pytest.fixture
def stream() -> Iterator[io.StringIO]:
    """What the handler :func:`logs.configure` installs writes; removed after the test."""
    root = logging.getLogger()
    level = root.level
    out = io.StringIO()
    yield out
    for handler in [h for h in root.handlers if h.get_name() == "citeseal-serve"]:
        root.removeHandler(handler)
    root.setLevel(level)


async def test_json_logs_are_one_object_per_line_with_the_call_fields_and_no_secret(
    served: Served, stream: io.StringIO, monkeypatch: pytest.MonkeyPatch
) -> None:
    def crash(_: object) -> None:
        raise RuntimeError(f"GET https://eutils.example/efetch?api_key={SECRET}&email={EMAIL}")

    logs.configure("info", "json", [SECRET, EMAIL], stream=stream)
    async with Client(build_server(served), raise_exceptions=True) as client:
        await client.call_tool("describe_contract", {})
        monkeypatch.setattr(describe, "info", crash)
        await client.call_tool("snapshot_info", {})
    text = stream.getvalue()
    assert SECRET not in text and EMAIL not in text
    entries = [json.loads(line) for line in text.splitlines()]
    assert all({"time", "level", "logger", "message"} <= set(e) for e in entries)
    assert all(e["time"].endswith("Z") and len(e["time"]) == 24 for e in entries)
    calls = [e for e in entries if e["logger"] == "citeseal.serve.call"]
    assert [(e["level"], e["tool"], e["code"]) for e in calls] == [
        ("info", "describe_contract", "ok"),
        ("error", "snapshot_info", "internal"),
    ]
    assert all(isinstance(e["duration_ms"], float) for e in calls)
    crashed = [e for e in entries if e["logger"] == "citeseal.serve"]
    assert len(crashed) == 1
    assert (
        "RuntimeError: GET https://eutils.example/efetch?api_key=[REDACTED]&email=[REDACTED]"
        in (crashed[0]["exception"])
    )


async def test_text_logs_are_redacted_and_filtered_by_level(
    served: Served, stream: io.StringIO
) -> None:
    logs.configure("warning", "text", [SECRET], stream=stream)
    logging.getLogger("citeseal.serve").warning("token %s leaked", SECRET)
    logging.getLogger("citeseal.serve").info("not shown at warning")
    async with Client(build_server(served), raise_exceptions=True) as client:
        await client.call_tool("describe_contract", {})  # an ok call logs at info: not shown
    lines = stream.getvalue().splitlines()
    assert len(lines) == 1
    assert lines[0].endswith(" WARNING citeseal.serve: token [REDACTED] leaked")


def test_configure_again_replaces_the_handler_instead_of_adding_one(stream: io.StringIO) -> None:
    logs.configure("info", "text", stream=io.StringIO())
    logs.configure("debug", "json", stream=stream)
    root = logging.getLogger()
    assert [h.get_name() for h in root.handlers].count("citeseal-serve") == 1
    assert root.level == logging.DEBUG


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (
            ["--log-level", "loud"],
            "--log-level must be one of debug, info, warning, error, got 'loud'",
        ),
        (["--log-format", "xml"], "--log-format must be one of text, json, got 'xml'"),
    ],
)
def test_a_bad_log_option_is_one_line_and_exit_2_before_the_snapshot_is_read(
    args: list[str],
    message: str,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    monkeypatch.setattr(sys, "argv", ["citeseal", "serve", "--snapshot", "nowhere", *args])
    with pytest.raises(SystemExit) as done:
        main()
    assert done.value.code == 2
    assert capsys.readouterr() == ("", f"error: {message}\n")


def test_the_serve_deadline_is_read_from_its_variable_and_a_bad_one_is_refused() -> None:
    assert Settings.from_env({}).serve_deadline is None
    assert Settings.from_env({"CITESEAL_SERVE_DEADLINE": "2.5"}).serve_deadline == 2.5
    with pytest.raises(InputError) as caught:
        Settings.from_env({"CITESEAL_SERVE_DEADLINE": "0"})
    assert (
        caught.value.message == "CITESEAL_SERVE_DEADLINE must be a number of seconds > 0, got '0'"
    )
