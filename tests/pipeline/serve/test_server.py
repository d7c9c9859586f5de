"""The MCP tools through the SDK's in-memory client, on the demo snapshot (demo key)."""

from __future__ import annotations

import os
import shutil
from pathlib import Path
from typing import Any

import anyio
import pytest
from mcp import Client
from mcp.types import CallToolResult

from audit.citations import MAX_CITATIONS_PER_SENTENCE, MAX_QUOTE_CHARS
from audit.handles import parse_handle, verify
from audit.report import VERDICTS
from audit.support.run import MAX_CLAIM_CHARS, MAX_SUPPORT_HANDLE_CHARS, MAX_SUPPORT_HANDLES
from pipeline.serve import describe
from pipeline.serve.cursor import MAX_CURSOR_CHARS
from pipeline.serve.params import STATUS_PATTERN
from pipeline.serve.reaudit import MAX_REPORT_CHARS
from pipeline.serve.server import build_server
from pipeline.serve.service import MAX_HANDLE_CHARS, MAX_ID_CHARS, MAX_RESULTS, Served
from pipeline.snapshot.manifest import manifest_path
from pipeline.snapshot.trust import trust_snapshot
from tests.conftest import TRUST
from tests.pipeline.serve.conftest import DEMO

pytestmark = pytest.mark.anyio

TOOLS = {
    "search_literature",
    "search_trials",
    "search_drug_labels",
    "search_documents",
    "fetch_passages",
    "resolve_handles",
    "audit_answer",
    "describe_contract",
    "snapshot_info",
    "reaudit_report",
    "check_support",
    "check_references",
}


def text_of(result: CallToolResult) -> str:
    assert len(result.content) == 1
    block = result.content[0]
    assert block.type == "text"
    return block.text  # type: ignore[union-attr]


async def ok(client: Client, name: str, args: dict[str, Any]) -> tuple[dict[str, Any], str]:
    result = await client.call_tool(name, args)
    assert not result.is_error, text_of(result)
    assert isinstance(result.structured_content, dict)
    return result.structured_content, text_of(result)


async def error(client: Client, name: str, args: dict[str, Any]) -> str:
    """The text of a failed call, after checking its structure says the same message."""
    result = await client.call_tool(name, args)
    assert result.is_error
    assert isinstance(result.structured_content, dict)
    failure = result.structured_content["error"]
    assert set(failure) == {"code", "retryable", "message", "hint"}
    text = text_of(result)
    assert text.startswith(f"Error executing tool {name}: {failure['message']}")
    return text


async def test_tools_are_read_only_bounded_and_structured(served: Served) -> None:
    async with Client(build_server(served), raise_exceptions=True) as client:
        tools = {tool.name: tool for tool in (await client.list_tools()).tools}
    assert set(tools) == TOOLS
    for tool in tools.values():
        assert tool.annotations is not None and tool.annotations.read_only_hint is True
        assert tool.annotations.open_world_hint is False
        assert tool.output_schema is not None and tool.description
    search = tools["search_literature"].input_schema["properties"]
    assert search["query"]["maxLength"] == 1000
    assert (search["limit"]["minimum"], search["limit"]["maximum"]) == (1, MAX_RESULTS)
    assert search["sources"]["items"]["enum"] == ["pubmed", "europepmc", "pubtator3", "crossref"]
    assert tools["audit_answer"].input_schema["properties"]["answer"]["maxLength"] == 200_000
    assert tools["fetch_passages"].input_schema["properties"]["record_ids"]["maxItems"] == 20
    assert tools["resolve_handles"].input_schema["properties"]["handles"]["maxItems"] == 100


async def test_every_bound_the_server_enforces_is_in_the_input_schema(served: Served) -> None:
    async with Client(build_server(served), raise_exceptions=True) as client:
        tools = {tool.name: tool.input_schema for tool in (await client.list_tools()).tools}
    handle = tools["resolve_handles"]["$defs"]["HandleQuery"]["properties"]
    assert handle["handle"]["maxLength"] == MAX_HANDLE_CHARS
    assert handle["quote"]["maxLength"] == MAX_QUOTE_CHARS
    assert tools["fetch_passages"]["properties"]["record_ids"]["items"] == {
        "type": "string",
        "maxLength": MAX_ID_CHARS,
    }
    assert tools["check_support"]["properties"]["handles"]["items"] == {
        "type": "string",
        "maxLength": MAX_SUPPORT_HANDLE_CHARS,
    }
    assert tools["reaudit_report"]["properties"]["report"]["maxLength"] == MAX_REPORT_CHARS
    status = tools["search_trials"]["properties"]["status"]
    assert "enum" not in status["items"] and status["items"]["pattern"] == STATUS_PATTERN
    for name, schema in tools.items():  # duplicates are dropped, never refused: not advertised
        for argument in schema.get("properties", {}).values():
            assert "uniqueItems" not in argument, name


@pytest.mark.parametrize(
    ("name", "args", "message"),
    [
        (
            "fetch_passages",
            {"record_ids": [12345]},
            "record_ids[0] must be a string, got an integer",
        ),
        (
            "search_literature",
            {"query": "x", "limit": True},
            "limit must be an integer, got a boolean",
        ),
        (
            "fetch_passages",
            {"record_ids": ["pmid:99000001"], "max_passages": "5"},
            "max_passages must be an integer, got a string",
        ),
        (
            "resolve_handles",
            {"handles": [{"handle": 5}]},
            "handles[0].handle must be a string, got an integer",
        ),
        ("snapshot_info", {"verbose": True}, "verbose is not an argument of snapshot_info"),
        ("search_literature", {}, "argument query is required"),
    ],
)
async def test_a_wrong_type_or_name_of_argument_is_refused_in_one_line_naming_it(
    served: Served, name: str, args: dict[str, Any], message: str
) -> None:
    async with Client(build_server(served), raise_exceptions=True) as client:
        assert await error(client, name, args) == f"Error executing tool {name}: {message}"


async def test_search_fetch_audit_round_trip_passes(served: Served) -> None:
    async with Client(build_server(served), raise_exceptions=True) as client:
        found, text = await ok(
            client, "search_literature", {"query": "zentravir Farrow syndrome", "limit": 3}
        )
        hits = found["results"]
        assert len(hits) == 3 and found["demo_key"] is True
        assert {h["source"] for h in hits} <= {"pubmed", "europepmc", "pubtator3", "crossref"}
        assert text.splitlines()[1].startswith(f"1. {hits[0]['handle']} (score ")
        first = hits[0]
        fetched, text = await ok(client, "fetch_passages", {"record_ids": [first["record_id"]]})
        [record] = fetched["records"]
        handles = {p["handle"]: p["text"] for p in record["record"]["passages"]}
        assert handles[first["handle"]] == first["text"]  # the same handle, freshly minted
        assert all(verify(DEMO, parse_handle(h)) for h in handles)
        assert text.startswith(f"{first['record_id']} @{record['record']['version']}: ")
        quote = " ".join(first["text"].split()[:6])
        answer = f'Zentravir was studied in pregnancy [{first["handle"]} "{quote}"].\n'
        report, text = await ok(client, "audit_answer", {"answer": answer})
    [sentence] = report["sentences"]
    [citation] = sentence["citations"]
    assert (report["verdict"], citation["verdict"], citation["quote"]) == ("pass", "ok", quote)
    assert report["source"] == "mcp" and report["key"]["demo"] is True
    assert text.startswith("verdict: PASS  (1 citation: 1 ok)\n")


async def test_forged_handle_and_misquote_through_resolve_handles(served: Served) -> None:
    async with Client(build_server(served), raise_exceptions=True) as client:
        found, _ = await ok(client, "search_literature", {"query": "zentravir", "limit": 1})
        handle = found["results"][0]["handle"]
        check = handle[-1]
        forged = handle[:-1] + ("a" if check != "a" else "b")
        resolved, text = await ok(
            client,
            "resolve_handles",
            {
                "handles": [
                    {"handle": handle},
                    {"handle": forged},
                    {"handle": handle, "quote": "zentravir cures everything"},
                    {"handle": "pmid:99000001/abstract.1"},
                ]
            },
        )
    verdicts = [r["verdict"] for r in resolved["results"]]
    assert verdicts == ["ok", "forged", "quote_mismatch", "malformed"]
    assert resolved["results"][0]["passage"]["text"] == found["results"][0]["text"]
    assert resolved["results"][3]["detail"] == (
        "missing check code: expected '~' followed by 5 characters"
    )
    assert text.splitlines()[0] == f"{handle} → ok"
    assert f"{forged} → forged" in text


async def test_audit_answer_reports_forged_and_misquoted_citations(served: Served) -> None:
    async with Client(build_server(served), raise_exceptions=True) as client:
        found, _ = await ok(client, "search_trials", {"query": "zentravir", "limit": 1})
        [hit] = found["results"]
        assert hit["source"] == "clinicaltrials" and "@" in hit["handle"]
        forged = hit["handle"][:-1] + ("a" if hit["handle"][-1] != "a" else "b")
        answer = (
            f'The trial enrolled adults [{hit["handle"]} "no such words in the trial"].\n\n'
            f"It was registered [{forged}].\n"
        )
        report, text = await ok(
            client, "audit_answer", {"answer": answer, "fail_on": ["quote_mismatch"]}
        )
    verdicts = [c["verdict"] for s in report["sentences"] for c in s["citations"]]
    assert verdicts == ["quote_mismatch", "forged"]
    assert report["verdict"] == "fail" and "quote_mismatch" in report["fail_on"]
    assert text.startswith("verdict: FAIL")


async def test_claims_json_is_audited_like_an_answer(served: Served) -> None:
    async with Client(build_server(served), raise_exceptions=True) as client:
        found, _ = await ok(client, "search_drug_labels", {"query": "liver", "limit": 1})
        [hit] = found["results"]
        assert hit["source"] == "openfda"
        claims = {
            "claims": [{"sentence": "The label warns.", "citations": [{"handle": hit["handle"]}]}]
        }
        report, _ = await ok(client, "audit_answer", {"claims": claims})
    assert [c["verdict"] for c in report["sentences"][0]["citations"]] == ["ok"]


async def test_bad_input_is_an_error_result_the_model_can_act_on(served: Served) -> None:
    async with Client(build_server(served), raise_exceptions=True) as client:
        cases = [
            (
                "fetch_passages",
                {"record_ids": ["pmid:99999998"]},
                "pmid:99999998 is not in this snapshot",
            ),
            (
                "fetch_passages",
                {"record_ids": ["pmid:0123"]},
                "pmid:0123 is not a record id: pmid must be 1 to 10 digits without a leading "
                "zero, got '0123'",
            ),
            ("fetch_passages", {"record_ids": []}, "record_ids is empty; give at least one"),
            (
                "audit_answer",
                {"answer": "x" * 200_001},
                "answer is 200,001 characters long (limit 200,000)",
            ),
            ("audit_answer", {}, "give exactly one of answer (text) or claims (JSON)"),
            (
                "audit_answer",
                {"answer": "A claim.", "fail_on": ["everything"]},
                "unknown fail_on value 'everything' (expected one of malformed, forged, "
                "unavailable, withdrawn, quote_mismatch, uncited, invalid_only, retracted, "
                "expression_of_concern, preprint, version_changed, not_refreshed, contradicted, "
                "hallucinated, mismatch, unresolved, incomplete)",
            ),
            (
                "search_literature",
                {"query": "zentravir", "limit": 51},
                "limit must be between 1 and 50, got 51",
            ),
            (
                "search_literature",
                {"query": "z" * 1001},
                "the search query is 1001 characters; at most 1000",
            ),
            (
                "search_trials",
                {"query": "zentravir", "sources": ["pubmed"]},
                "source 'pubmed' is not searched here; expected one of clinicaltrials",
            ),
            (
                "resolve_handles",
                {"handles": [{"handle": "p" * 401}]},
                "a handle is 401 characters long (limit 400)",
            ),
        ]
        for name, args, message in cases:
            assert await error(client, name, args) == f"Error executing tool {name}: {message}"


async def test_describe_contract_and_snapshot_info_name_the_snapshot(served: Served) -> None:
    manifest = served.trusted.manifest
    async with Client(build_server(served), raise_exceptions=True) as client:
        contract, text = await ok(client, "describe_contract", {})
        info, info_text = await ok(client, "snapshot_info", {})
    assert [v["verdict"] for v in contract["verdicts"]] == list(VERDICTS)
    assert contract["grammar"].startswith('handle   = locator "~" check\n')
    assert contract["folding"].startswith("1. Unicode NFC.")
    assert contract["limits"]["search_results"] == MAX_RESULTS
    assert contract["snapshot"] == info["identity"]
    assert info["identity"]["snapshot_id"] == manifest.snapshot_id
    assert info["identity"]["sha256"] == manifest.sha256 and info["identity"]["seal"] == "sealed"
    assert (info["records"], info["passages"]) == (manifest.records, manifest.passages)
    assert str(served.trusted.path.parent) not in text + info_text  # no local path
    assert info_text.startswith(f"snapshot {manifest.name} {manifest.snapshot_id} (")


async def test_describe_contract_has_no_markup_and_lists_every_enforced_limit(
    served: Served,
) -> None:
    async with Client(build_server(served), raise_exceptions=True) as client:
        contract, text = await ok(client, "describe_contract", {})
    for markup in (":data:", ":func:", "``", "PINNED_SCHEMES", "FOLD_TABLE"):
        assert markup not in text, markup
    assert "for ppr, nct, setid, local\n" in contract["grammar"]
    assert "This makes fold idempotent." in contract["folding"]
    enforced = {
        "citations_per_sentence": MAX_CITATIONS_PER_SENTENCE,
        "support_claim_chars": MAX_CLAIM_CHARS,
        "support_handles": MAX_SUPPORT_HANDLES,
        "support_handle_chars": MAX_SUPPORT_HANDLE_CHARS,
        "report_chars": MAX_REPORT_CHARS,
        "cursor_chars": MAX_CURSOR_CHARS,
        "handle_chars": MAX_HANDLE_CHARS,
        "quote_chars": MAX_QUOTE_CHARS,
    }
    assert {name: contract["limits"][name] for name in enforced} == enforced
    assert "citations_per_sentence 50, " in text and "report_chars 4,194,304, " in text


async def test_concurrent_calls_are_all_answered_correctly(served: Served) -> None:
    """24 calls at once (searches, fetches, resolves, audits) give what each gives alone."""
    calls: list[tuple[str, dict[str, Any]]] = []
    for query in ("zentravir", "Farrow syndrome", "liver", "cohort", "boxed warning", "trial"):
        calls.append(("search_literature", {"query": query, "limit": 5}))
        calls.append(("search_drug_labels", {"query": query, "limit": 2}))
    calls += [("fetch_passages", {"record_ids": ["pmid:99000001", "nct:NCT99000001"]})] * 4
    calls += [("snapshot_info", {})] * 2
    async with Client(build_server(served), raise_exceptions=True) as client:
        found, _ = await ok(client, "search_literature", {"query": "zentravir", "limit": 3})
        handles = [{"handle": h["handle"]} for h in found["results"]]
        calls += [("resolve_handles", {"handles": handles})] * 3
        answer = f"Zentravir was studied [{handles[0]['handle']}].\n"
        calls += [("audit_answer", {"answer": answer})] * 3
        alone = [(await ok(client, name, args))[0] for name, args in calls]
        together: list[dict[str, Any] | None] = [None] * len(calls)

        async def one(number: int) -> None:
            together[number] = (await ok(client, *calls[number]))[0]

        async with anyio.create_task_group() as group:
            for number in range(len(calls)):
                group.start_soon(one, number)
    assert len(calls) >= 16
    for name, first, second in zip((c[0] for c in calls), alone, together, strict=True):
        assert second is not None
        if name == "audit_answer":  # the report time differs
            first, second = dict(first, created_at=None), dict(second, created_at=None)
        assert first == second, name


async def test_a_snapshot_changed_while_served_is_refused_with_restart_advice(
    demo_pair: tuple[Path, Path], tmp_path: Path
) -> None:
    path = tmp_path / demo_pair[1].name
    shutil.copyfile(demo_pair[1], path)
    shutil.copyfile(manifest_path(demo_pair[1]), manifest_path(path))
    with Served(trust_snapshot(path, TRUST), DEMO) as served:
        stat = path.stat()
        os.utime(path, ns=(stat.st_atime_ns, stat.st_mtime_ns + 1_000_000_000))
        async with Client(build_server(served), raise_exceptions=True) as client:
            for name, args in (("search_trials", {"query": "zentravir"}), ("snapshot_info", {})):
                assert await error(client, name, args) == (
                    f"Error executing tool {name}: snapshot {path.name} changed since the server "
                    "trusted it; hint: restart citeseal serve once nothing is writing the file"
                )  # the file's name: no local path reaches the model


async def test_a_snapshot_changed_after_audits_is_refused_though_its_look_ups_are_kept(
    demo_pair: tuple[Path, Path], tmp_path: Path
) -> None:
    """The server keeps what its audits looked up (audit.lookup_cache); a call still checks
    the file first, so none is answered from what was read of a file that changed since."""
    path = tmp_path / demo_pair[1].name
    shutil.copyfile(demo_pair[1], path)
    shutil.copyfile(manifest_path(demo_pair[1]), manifest_path(path))
    with Served(trust_snapshot(path, TRUST), DEMO) as served:
        async with Client(build_server(served), raise_exceptions=True) as client:
            found, _ = await ok(client, "search_literature", {"query": "zentravir", "limit": 2})
            cited = " ".join(f"[{hit['handle']}]" for hit in found["results"])
            answer = {"answer": f"Zentravir was studied in pregnancy {cited}.\n"}
            first, _ = await ok(client, "audit_answer", answer)
            again, _ = await ok(client, "audit_answer", answer)  # from the kept look-ups
            assert dict(again, created_at=None) == dict(first, created_at=None)
            stat = path.stat()
            os.utime(path, ns=(stat.st_atime_ns, stat.st_mtime_ns + 1_000_000_000))
            assert await error(client, "audit_answer", answer) == (
                f"Error executing tool audit_answer: snapshot {path.name} changed since the "
                "server trusted it; hint: restart citeseal serve once nothing is writing the file"
            )


def test_docs_serve_md_lists_every_limit_the_contract_gives() -> None:
    doc = (Path(__file__).parents[3] / "docs" / "serve.md").read_text(encoding="utf-8")
    missing = [f"`{k}` {v:,}" for k, v in describe.limits().items() if f"`{k}` {v:,}" not in doc]
    assert missing == []
