"""Stable tool errors and per-call deadlines (pipeline/serve/calls.py), through the SDK's
in-memory client on the demo snapshot."""

from __future__ import annotations

import logging
import threading
import time
from typing import Any

import anyio
import pytest
from mcp import Client
from mcp.types import CallToolResult

from audit.errors import (
    CitationSyntaxError,
    CiteSealError,
    CorpusError,
    InputError,
    KeyringError,
    LimitExceeded,
    NotInSnapshot,
)
from pipeline.errors import (
    ArchiveError,
    CallDeadlineError,
    ParseError,
    PartialHarvestError,
    ReplayMissError,
    SnapshotError,
    TamperedSnapshotError,
    TerminalHarvestError,
    TransientHarvestError,
)
from pipeline.serve import calls, describe, service
from pipeline.serve.calls import CODES, HINTS, failure_of
from pipeline.serve.server import build_server
from pipeline.serve.service import Served
from tests.pipeline.serve.test_server import text_of

pytestmark = pytest.mark.anyio

SECRET = "sk-live-Zq81xTUmV0s3cr3tValue"


def failed(result: CallToolResult) -> dict[str, Any]:
    assert result.is_error
    assert isinstance(result.structured_content, dict)
    assert set(result.structured_content) == {"error"}
    return result.structured_content["error"]


@pytest.mark.parametrize(
    ("error", "code", "retryable"),
    [
        (InputError("x"), "invalid_input", False),
        (LimitExceeded("x"), "invalid_input", False),
        (CitationSyntaxError("x", text="t", start=0, end=1, expected="e"), "invalid_input", False),
        (NotInSnapshot("x"), "not_found", False),
        (TransientHarvestError("x"), "upstream_unavailable", True),
        (PartialHarvestError("x"), "upstream_unavailable", True),
        (TerminalHarvestError("x"), "upstream_unavailable", False),
        (ReplayMissError("x"), "upstream_unavailable", False),
        (ArchiveError("x"), "upstream_unavailable", True),
        (ParseError("x"), "upstream_unavailable", False),
        (CallDeadlineError("x"), "deadline_exceeded", True),
        (SnapshotError("x"), "internal", False),
        (TamperedSnapshotError("x"), "internal", False),
        (KeyringError("x"), "internal", False),
        (CorpusError("x"), "internal", False),
    ],
)
def test_each_error_of_the_tree_has_its_code_and_retryable_flag_from_the_one_table(
    error: Exception, code: str, retryable: bool
) -> None:
    assert isinstance(error, CiteSealError)
    failure = failure_of(error)
    assert (failure.code, failure.retryable, failure.message) == (code, retryable, "x")
    assert failure.hint == HINTS[code]  # no advice: the code's hint
    assert code in CODES


def test_an_errors_advice_is_its_hint_in_the_structure_and_the_text() -> None:
    failure = failure_of(TransientHarvestError("upstream\nunavailable", advice="retry\tlater"))
    assert failure.structured() == {
        "error": {
            "code": "upstream_unavailable",
            "retryable": True,
            "message": "upstream unavailable",
            "hint": "retry later",
        }
    }
    assert failure.text("t") == "Error executing tool t: upstream unavailable; hint: retry later"


async def test_a_wrong_argument_type_is_invalid_input(served: Served) -> None:
    async with Client(build_server(served), raise_exceptions=True) as client:
        result = await client.call_tool("fetch_passages", {"record_ids": [7]})
    assert failed(result) == {
        "code": "invalid_input",
        "retryable": False,
        "message": "record_ids[0] must be a string, got an integer",
        "hint": HINTS["invalid_input"],
    }
    assert text_of(result) == (
        "Error executing tool fetch_passages: record_ids[0] must be a string, got an integer"
    )


async def test_an_unknown_tool_is_invalid_input(served: Served) -> None:
    async with Client(build_server(served), raise_exceptions=True) as client:
        result = await client.call_tool("nope", {})
    assert failed(result) == {
        "code": "invalid_input",
        "retryable": False,
        "message": "Unknown tool: nope",
        "hint": HINTS["invalid_input"],
    }


async def test_a_record_id_the_snapshot_does_not_hold_is_not_found(served: Served) -> None:
    async with Client(build_server(served), raise_exceptions=True) as client:
        result = await client.call_tool("fetch_passages", {"record_ids": ["pmid:99999998"]})
    assert failed(result) == {
        "code": "not_found",
        "retryable": False,
        "message": "pmid:99999998 is not in this snapshot",
        "hint": HINTS["not_found"],
    }
    assert text_of(result) == (
        "Error executing tool fetch_passages: pmid:99999998 is not in this snapshot"
    )


async def test_a_live_harvest_that_fails_is_upstream_unavailable_and_retryable(
    served: Served, monkeypatch: pytest.MonkeyPatch
) -> None:
    def outage(record_ids: object) -> None:
        raise TransientHarvestError(
            "upstream unavailable: pubmed: efetch failed: 503; nothing was added to the snapshot",
            advice="retry later (the call may be repeated)",
        )

    monkeypatch.setattr(served, "ensure_records", outage)
    async with Client(build_server(served), raise_exceptions=True) as client:
        result = await client.call_tool("fetch_passages", {"record_ids": ["pmid:99000001"]})
    assert failed(result) == {
        "code": "upstream_unavailable",
        "retryable": True,
        "message": "upstream unavailable: pubmed: efetch failed: 503; nothing was added to "
        "the snapshot",
        "hint": "retry later (the call may be repeated)",
    }


async def test_an_unexpected_exception_is_internal_with_a_reference_and_no_text_of_it(
    served: Served, monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture
) -> None:
    def crash(_: object) -> None:
        raise RuntimeError(f"boom at /home/me/secret.duckdb with {SECRET}")

    monkeypatch.setattr(describe, "info", crash)
    with caplog.at_level(logging.INFO):
        async with Client(build_server(served), raise_exceptions=True) as client:
            result = await client.call_tool("snapshot_info", {})
    failure = failed(result)
    reference = failure["message"].split("reference ", 1)[1].split(";", 1)[0]
    assert len(reference) == 8
    assert failure == {
        "code": "internal",
        "retryable": False,
        "message": f"internal error (reference {reference}; the server's log has the details)",
        "hint": HINTS["internal"],
    }
    assert text_of(result) == f"Error executing tool snapshot_info: {failure['message']}"
    # the server's log (stderr) has the traceback, under the same reference
    crashed = [r for r in caplog.records if r.name == "citeseal.serve"]
    assert [r.getMessage() for r in crashed] == [
        f"internal error {reference} in tool snapshot_info"
    ]
    assert crashed[0].exc_info is not None and crashed[0].exc_info[0] is RuntimeError
    line = [r for r in caplog.records if r.name == "citeseal.serve.call"]
    assert [(r.levelname, r.__dict__["tool"], r.__dict__["code"]) for r in line] == [
        ("ERROR", "snapshot_info", "internal")
    ]


async def test_a_call_past_its_deadline_is_deadline_exceeded_and_its_late_result_is_dropped(
    served: Served, monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture
) -> None:
    real = service.search
    finished = threading.Event()

    def slow(*args: Any, **kwargs: Any) -> service.Outcome:
        time.sleep(0.6)
        try:
            return real(*args, **kwargs)
        finally:
            finished.set()

    monkeypatch.setattr(service, "search", slow)
    with caplog.at_level(logging.INFO, logger="citeseal.serve.call"):
        async with Client(build_server(served, deadline=0.2), raise_exceptions=True) as client:
            started = time.monotonic()
            result = await client.call_tool("search_literature", {"query": "aspirin"})
            took = time.monotonic() - started
            assert not finished.is_set()  # answered while the call was still running
            with anyio.fail_after(5):
                while not finished.is_set():
                    await anyio.sleep(0.05)
            monkeypatch.setattr(service, "search", real)
            after = await client.call_tool("snapshot_info", {})  # the next call: its own answer
    assert 0.15 < took < 0.55
    assert failed(result) == {
        "code": "deadline_exceeded",
        "retryable": True,
        "message": "the call did not finish within its deadline of 0.2 s; nothing it did "
        "after that is returned",
        "hint": HINTS["deadline_exceeded"],
    }
    assert text_of(result) == (
        "Error executing tool search_literature: the call did not finish within its deadline "
        "of 0.2 s; nothing it did after that is returned; hint: " + HINTS["deadline_exceeded"]
    )
    assert not after.is_error and isinstance(after.structured_content, dict)
    assert "identity" in after.structured_content  # not the late search's result
    await anyio.sleep(0.1)  # the late task's callback
    lines = [
        (r.__dict__["tool"], r.__dict__["code"], r.getMessage().split(" in ")[0])
        for r in (r for r in caplog.records if r.name == "citeseal.serve.call")
    ]
    assert lines == [
        ("search_literature", "deadline_exceeded", "search_literature deadline_exceeded"),
        ("search_literature", "ok", "search_literature late result discarded"),
        ("snapshot_info", "ok", "snapshot_info ok"),
    ]


def test_the_running_calls_deadline_is_visible_to_its_code_and_unset_outside() -> None:
    assert calls.call_deadline() == float("inf")
    before = time.monotonic()
    deadline, token = calls.CallDeadline(5.0).start()
    try:
        assert calls.call_deadline() == deadline
        assert before + 5.0 <= deadline <= time.monotonic() + 5.0
    finally:
        calls.CallDeadline.stop(token)
    assert calls.call_deadline() == float("inf")
