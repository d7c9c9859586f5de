"""The MCP tool ``check_support`` through the SDK's in-memory client, on the demo snapshot,
with a deterministic fake standing in for the default judge."""

from __future__ import annotations

import pytest
from mcp import Client

from audit.support import judges
from audit.support.run import MAX_CLAIM_CHARS, MAX_SUPPORT_HANDLES
from pipeline.serve.server import build_server
from pipeline.serve.service import Served
from tests.audit.support.fakes import FakeJudge
from tests.pipeline.serve.test_server import error, ok

pytestmark = pytest.mark.anyio


@pytest.fixture(autouse=True)
def fake_default_judge(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setitem(judges.JUDGES, "rules", lambda env: FakeJudge("rules", "test"))


async def test_check_support_judges_ok_handles_and_reports_a_forged_one(served: Served) -> None:
    async with Client(build_server(served), raise_exceptions=True) as client:
        found, _ = await ok(client, "search_literature", {"query": "zentravir", "limit": 1})
        hit = found["results"][0]
        handle = hit["handle"]
        forged = handle[:-1] + ("0" if handle[-1] != "0" else "1")
        word = max(hit["text"].split(), key=len)
        value, text = await ok(
            client, "check_support", {"claim": f"It says {word} here", "handles": [handle, forged]}
        )
    assert (value["judge"], value["judge_version"]) == ("rules", "test")
    first, second = value["results"]
    assert (first["verdict"], first["support"]["label"]) == ("ok", "supported")
    assert first["support"]["evidence"]["text"] == word
    assert (second["verdict"], second["support"]) == ("forged", None)
    assert (value["contradicted"], value["not_judged"]) == (0, 1)
    assert text.splitlines()[:2] == [f"claim: It says {word} here", "judge: rules test"]
    assert "not judged" in text


async def test_check_support_is_read_only_and_bounded(served: Served) -> None:
    async with Client(build_server(served), raise_exceptions=True) as client:
        tools = {tool.name: tool for tool in (await client.list_tools()).tools}
        message = await error(client, "check_support", {"claim": " ", "handles": ["x"]})
    tool = tools["check_support"]
    assert tool.annotations is not None and tool.annotations.read_only_hint is True
    assert tool.output_schema is not None
    props = tool.input_schema["properties"]
    assert props["claim"]["maxLength"] == MAX_CLAIM_CHARS
    assert props["handles"]["maxItems"] == MAX_SUPPORT_HANDLES
    assert (
        message
        == "Error executing tool check_support: the claim is empty; give the sentence to check"
    )
