"""describe_contract carries the instructions, the citing rules and the contract version; no
text the server shows a model holds a handle it could copy as genuine."""

from __future__ import annotations

import json

import pytest
from mcp import Client

from audit import CONTRACT_VERSION
from audit.citation_scan import find_candidates
from audit.engine import CitationInput, judge_citations
from pipeline.serve.describe import CITING_RULES, INSTRUCTIONS
from pipeline.serve.server import build_server
from pipeline.serve.service import Served
from tests.pipeline.serve.test_server import ok

pytestmark = pytest.mark.anyio


async def test_describe_contract_carries_the_instructions_rules_and_contract_version(
    served: Served,
) -> None:
    async with Client(build_server(served), raise_exceptions=True) as client:
        value, text = await ok(client, "describe_contract", {})
    assert value["contract_version"] == CONTRACT_VERSION
    assert value["instructions"] == INSTRUCTIONS
    assert value["citing_rules"] == list(CITING_RULES)
    assert text.startswith(f"citeseal contract {CONTRACT_VERSION}: ")
    assert INSTRUCTIONS in text
    for n, rule in enumerate(CITING_RULES, start=1):
        assert f"\n{n}. {rule}\n" in text


async def test_every_handle_shaped_span_the_server_shows_is_minted_live_or_malformed(
    served: Served,
) -> None:
    server = build_server(served)
    texts: dict[str, str] = {"instructions": server.instructions or ""}
    async with Client(server, raise_exceptions=True) as client:
        for tool in (await client.list_tools()).tools:
            texts[f"tool {tool.name}"] = json.dumps(
                [tool.description, tool.input_schema, tool.output_schema], ensure_ascii=False
            )
        for prompt in (await client.list_prompts()).prompts:
            texts[f"prompt {prompt.name}"] = json.dumps(prompt.model_dump(), ensure_ascii=False)
            rendered = await client.get_prompt(prompt.name, {})
            texts[f"rendered {prompt.name}"] = rendered.messages[0].content.text  # type: ignore[union-attr]
        for template in (await client.list_resource_templates()).resource_templates:
            texts[f"template {template.name}"] = json.dumps(template.model_dump(), default=str)
        value, text = await ok(client, "describe_contract", {})
        texts["describe_contract"] = text + json.dumps(value, ensure_ascii=False)
    spans = [
        (where, text[c.start : c.end])
        for where, text in texts.items()
        for c in find_candidates(text)
    ]
    assert any(where.startswith("tool ") for where, _ in spans)  # record-id examples are seen
    with served.corpus() as corpus:
        results = judge_citations(
            [CitationInput.from_text(span) for _, span in spans], corpus, served.keyring
        )
    judged = [(where, span, r.verdict) for (where, span), r in zip(spans, results, strict=True)]
    assert {verdict for *_, verdict in judged} <= {"ok", "malformed"}, judged
    genuine = [(where, span) for where, span, verdict in judged if verdict == "ok"]
    assert [where for where, _ in genuine] == ["rendered cite_by_handle"]  # the live example
