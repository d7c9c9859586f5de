"""reaudit_report, the cite_by_handle prompt, the evidence:// resources and the audit view App,
through the SDK's in-memory client on the demo snapshot (demo key)."""

from __future__ import annotations

import base64
import hashlib
import json
import os
import re
import shutil
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from markupsafe import escape
from mcp import Client, MCPError
from mcp.client.extension import advertise
from mcp.server.apps import APP_MIME_TYPE, EXTENSION_ID
from mcp.types import INVALID_PARAMS

from audit.citations import parse_answer
from audit.engine import CitationInput, judge_citations
from audit.handles import mint, parse_handle, parse_locator, verify
from audit.keys import Keyring
from audit.render_html import STATIC_DIR
from pipeline.serve import service
from pipeline.serve.app import VIEW_META_KEY, VIEW_URI
from pipeline.serve.prompt import QUOTE_WORDS, example_passage, quote_of
from pipeline.serve.reaudit import MAX_REPORT_CHARS
from pipeline.serve.server import build_server
from pipeline.serve.service import Served
from pipeline.serve.surface import prompt_arguments_error
from pipeline.snapshot.manifest import manifest_path
from pipeline.snapshot.trust import trust_snapshot
from tests.conftest import TRUST
from tests.pipeline.serve.conftest import DEMO
from tests.pipeline.serve.test_server import error, ok, text_of

pytestmark = pytest.mark.anyio

OUTCOME = "nct:NCT99000001@2025-01-15/trial.primary_outcome.1"
QUOTE = "Number of Farrow flares per participant"
APPS = advertise(EXTENSION_ID, {"mimeTypes": [APP_MIME_TYPE]})
HANDLE = mint(DEMO, parse_locator(OUTCOME))
HANDLE_LIKE = re.compile(r"(?:pmid|pmcid|ppr|nct|setid):\S*~[0-9a-z]{5}")


def published_report(first: Path, keyring: Keyring = DEMO) -> dict[str, Any]:
    """A report audited against the first demo snapshot (as published then), as JSON."""
    handle = mint(keyring, parse_locator(OUTCOME))
    answer = f'The trial counts flares [{handle} "{QUOTE}"].\n'
    with Served(trust_snapshot(first, TRUST), keyring) as then:
        report = service.audit(then, answer=answer).value
    return report.model_dump(mode="json")


# reaudit_report ---------------------------------------------------------------------------


async def test_reaudit_report_lists_the_citations_that_changed_since_publication(
    served: Served, demo_pair: tuple[Path, Path]
) -> None:
    report = published_report(demo_pair[0])
    async with Client(build_server(served), raise_exceptions=True) as client:
        tools = {t.name: t for t in (await client.list_tools()).tools}
        again, text = await ok(client, "reaudit_report", {"report": report})
        as_text, _ = await ok(client, "reaudit_report", {"report": json.dumps(report)})
    annotations = tools["reaudit_report"].annotations
    assert annotations is not None and annotations.read_only_hint is True
    assert annotations.open_world_hint is False and tools["reaudit_report"].output_schema
    handle = mint(DEMO, parse_locator(OUTCOME))
    snapshot_id = served.trusted.manifest.snapshot_id
    assert text.splitlines() == [
        f"pass → pass against demo {snapshot_id}; check codes verified again with the public "
        "demo key",
        f"  [1.1] {handle}: ok → ok [version_changed] (current version 2025-06-02 (this "
        "passage changed))",
    ]
    assert (again["published_verdict"], again["verdict"]) == ("pass", "pass")
    assert again["changes"] == [
        {
            "sentence": 1,
            "number": 1,
            "handle": handle,
            "kinds": ["new version"],
            "was": "ok",
            "now": "ok [version_changed]",
            "details": ["current version 2025-06-02 (this passage changed)"],
        }
    ]
    assert again["against"]["snapshot_id"] == snapshot_id
    assert again["report"]["snapshot"]["snapshot_id"] == snapshot_id
    for value in (as_text, again):
        del value["report"]["created_at"]
    assert as_text == again  # an object or its JSON text: the same re-audit


async def test_reaudit_report_under_another_key_takes_check_codes_as_published(
    served: Served, demo_pair: tuple[Path, Path]
) -> None:
    other = Keyring([b"the key of the installation that published it"])
    report = published_report(demo_pair[0], other)
    async with Client(build_server(served), raise_exceptions=True) as client:
        again, text = await ok(client, "reaudit_report", {"report": report})
    assert again["method"] == (
        f"check codes taken as published (the key {other.fingerprint} is not available to this "
        "build)"
    )
    assert [c["now"] for c in again["changes"]] == ["ok [version_changed]"]  # corpus rechecked
    assert text.splitlines()[0].endswith(again["method"])


async def test_reaudit_report_of_a_report_made_here_changes_nothing(served: Served) -> None:
    handle = mint(DEMO, parse_locator("pmid:99000001/abstract.1"))
    async with Client(build_server(served), raise_exceptions=True) as client:
        report, _ = await ok(client, "audit_answer", {"answer": f"A claim [{handle}].\n"})
        again, text = await ok(client, "reaudit_report", {"report": report})
    assert again["changes"] == [] and again["verdict"] == report["verdict"]
    assert text.splitlines()[1] == "  no citation changed status since publication"


@pytest.mark.parametrize(
    ("report", "message"),
    [
        (
            {"verdict": "pass"},
            "malformed report (the report argument): contract_version: Field required (and 7 "
            "more problems); hint: a report is the JSON that `citeseal audit --format json` "
            "writes",
        ),
        (
            "{not json",
            "malformed report (the report argument): not valid JSON (Invalid JSON: key must be a "
            "string at line 1 column 2); hint: a report is the JSON that `citeseal audit "
            "--format json` writes",
        ),
        (
            " ",
            "the report is empty; hint: a report is the JSON that `citeseal audit --format "
            "json` writes",
        ),
        (
            "x" * (MAX_REPORT_CHARS + 1),
            f"the report is {MAX_REPORT_CHARS + 1:,} characters of JSON (limit "
            f"{MAX_REPORT_CHARS:,})",
        ),
    ],
    ids=["not-a-report", "not-json", "empty", "too-long"],
)
async def test_reaudit_report_refuses_a_body_that_is_not_a_report_with_an_actionable_error(
    served: Served, report: Any, message: str
) -> None:
    async with Client(build_server(served), raise_exceptions=True) as client:
        assert await error(client, "reaudit_report", {"report": report}) == (
            f"Error executing tool reaudit_report: {message}"
        )


# cite_by_handle ---------------------------------------------------------------------------


async def test_cite_by_handle_renders_with_a_live_example_from_the_snapshot(
    served: Served,
) -> None:
    async with Client(build_server(served), raise_exceptions=True) as client:
        prompts = {p.name: p for p in (await client.list_prompts()).prompts}
        rendered = await client.get_prompt("cite_by_handle", {})
    assert prompts["cite_by_handle"].description
    [message] = rendered.messages
    text = message.content.text  # type: ignore[union-attr]
    example = example_passage(served)
    assert example is not None
    assert f'    [{example.handle} "{example.quote}"]' in text.splitlines()
    for rule in ("Never invent a handle", "One quote per handle", "forged", "stale", "fetch it"):
        assert rule in text
    assert "PUBLIC demo key" in text


async def test_an_unexpected_prompt_argument_is_invalid_params_naming_it_without_traceback(
    served: Served, caplog: pytest.LogCaptureFixture
) -> None:
    async with Client(build_server(served), raise_exceptions=True) as client:
        with pytest.raises(MCPError) as caught:
            await client.get_prompt("cite_by_handle", {"x": "y"})
    assert caught.value.error.code == INVALID_PARAMS
    assert caught.value.error.message == (
        "prompt cite_by_handle takes no arguments; unexpected argument x"
    )
    assert not [record for record in caplog.records if record.exc_info]


def test_prompt_arguments_error_names_missing_and_unexpected_arguments() -> None:
    assert prompt_arguments_error("p", {"a", "b"}, {"a"}, {"a", "c", "d"}) == (
        "prompt p takes a, b; unexpected argument c, d"
    )
    assert prompt_arguments_error("p", {"a", "b"}, {"a"}, {"b"}) == "prompt p needs argument a"
    assert prompt_arguments_error("p", {"a", "b"}, {"a"}, {"a"}) is None


async def test_every_handle_in_the_prompt_verifies_or_is_rejected_as_malformed(
    served: Served,
) -> None:
    async with Client(build_server(served), raise_exceptions=True) as client:
        rendered = await client.get_prompt("cite_by_handle", {})
    text = rendered.messages[0].content.text  # type: ignore[union-attr]
    parsed = parse_answer(text)
    citations = [c for s in parsed.sentences for c in s.citations]
    judged = [
        CitationInput.from_text(c.raw if c.handle is None else str(c.handle.text), c.quote)
        for c in citations
    ]
    with served.corpus() as corpus:
        results = judge_citations(judged, corpus, served.keyring)
    verdicts = [r.verdict for r in results]
    assert set(verdicts) <= {"ok", "malformed"}, list(zip(verdicts, citations, strict=True))
    genuine = [r for r in results if r.verdict == "ok"]
    assert len(genuine) == 1 and genuine[0].quote is not None  # the live example, quoted
    assert len(HANDLE_LIKE.findall(text)) == len(genuine)  # no verifying span was missed


@settings(max_examples=300, deadline=None)
@given(st.text(alphabet=st.characters(codec="utf-8", exclude_categories=("Cs",)), max_size=200))
def test_the_example_quote_is_verbatim_and_cannot_break_its_citation(text: str) -> None:
    quote = quote_of(text)
    if quote is None:
        return
    assert 3 <= len(quote.split()) <= QUOTE_WORDS
    assert quote == " ".join(text.split()[: len(quote.split())])  # the passage's first words
    assert not any(char in quote for char in '"“”„«»[]()')


# evidence:// resources --------------------------------------------------------------------


async def test_resource_templates_are_listed(served: Served) -> None:
    async with Client(build_server(served), raise_exceptions=True) as client:
        templates = (await client.list_resource_templates()).resource_templates
    listed = {t.uri_template: t.mime_type for t in templates}
    assert listed == {
        "evidence://record/{+record_id}": "application/json",
        "evidence://passage/{+handle}": "application/json",
    }


async def test_a_record_id_resolves_to_the_record_with_freshly_minted_handles(
    served: Served,
) -> None:
    async with Client(build_server(served), raise_exceptions=True) as client:
        read = await client.read_resource("evidence://record/pmid:99000001")
    [content] = read.contents
    assert content.mime_type == "application/json"
    data = json.loads(content.text)  # type: ignore[union-attr]
    assert data["record"]["record_id"] == "pmid:99000001" and data["demo_key"] is True
    handles = [p["handle"] for p in data["record"]["passages"]]
    assert handles and all(verify(DEMO, parse_handle(h)) for h in handles)
    assert data["passages_total"] == len(handles) and data["truncated"] is False


async def test_a_full_handle_resolves_to_its_passage_and_verdict(served: Served) -> None:
    handle = mint(DEMO, parse_locator(OUTCOME))
    async with Client(build_server(served), raise_exceptions=True) as client:
        read = await client.read_resource(f"evidence://passage/{handle}")
    data = json.loads(read.contents[0].text)  # type: ignore[union-attr]
    assert (data["handle"], data["verdict"]) == (handle, "ok")
    assert data["passage"]["text"].startswith(QUOTE)
    assert [f["name"] for f in data["flags"]] == ["version_changed"]
    assert data["current_passage"] is not None


@pytest.mark.parametrize(
    ("uri", "message"),
    [
        ("evidence://record/pmid:99999998", "pmid:99999998 is not in this snapshot"),
        (
            "evidence://record/pmid:0123",
            "pmid:0123 is not a record id: pmid must be 1 to 10 digits without a leading zero, "
            "got '0123'",
        ),
        (
            "evidence://record/nct:NCT99000001@2025-01-15",
            "nct:NCT99000001@2025-01-15 is not a record id: a record id is SCHEME:ID, "
            "without @version, /path or ~check",
        ),
        (
            "evidence://passage/pmid:99999998/abstract.1~aaaaa",
            None,  # a well-formed handle with a wrong check: judged, see below
        ),
    ],
    ids=["unknown-record", "bad-record-id", "pinned-record-id", "forged-handle"],
)
async def test_an_unknown_id_is_a_clean_mcp_error(
    served: Served, uri: str, message: str | None
) -> None:
    async with Client(build_server(served), raise_exceptions=True) as client:
        if message is None:
            read = await client.read_resource(uri)
            data = json.loads(read.contents[0].text)  # type: ignore[union-attr]
            assert data["verdict"] == "forged"  # a handle's answer is its verdict
            return
        with pytest.raises(MCPError) as caught:
            await client.read_resource(uri)
    assert (caught.value.error.code, caught.value.error.message) == (-32602, message)


@pytest.mark.parametrize(
    ("uri", "message"),
    [
        (
            "evidence://record/../../etc/passwd",
            "Unknown resource: evidence://record/../../etc/passwd",
        ),
        (
            "evidence://record/%2E%2E%2F%2E%2E%2Fetc",
            "Unknown resource: evidence://record/%2E%2E%2F%2E%2E%2Fetc",
        ),
        (
            "evidence://record/pmid:1%2F..%2F..%2Fx",
            "Unknown resource: evidence://record/pmid:1%2F..%2F..%2Fx",
        ),
        (
            "evidence://passage/pmid:99000001/..%2F..%2Fabstract.1~aaaaa",
            "Unknown resource: evidence://passage/pmid:99000001/..%2F..%2Fabstract.1~aaaaa",
        ),
        ("evidence://record/pmid:1%00", "Unknown resource: evidence://record/pmid:1%00"),
        (
            "evidence://passage/pmid:99000001/abstract..1~aaaaa",
            "path segments must be lower-case letters, digits or '_' separated by '.', got an "
            "empty segment in 'abstract..1'",
        ),
    ],
    ids=["dotdot", "percent-encoded", "encoded-inside-id", "encoded-in-handle", "nul", "grammar"],
)
async def test_a_path_traversal_like_value_is_rejected(
    served: Served, uri: str, message: str
) -> None:
    """The SDK's default resource security stays on (it refuses ``..`` segments, however
    encoded, and NUL); what it lets through must still parse under the handle grammar."""
    async with Client(build_server(served), raise_exceptions=True) as client:
        with pytest.raises(MCPError) as caught:
            await client.read_resource(uri)
    assert (caught.value.error.code, caught.value.error.message) == (-32602, message)


# the audit view (MCP App) -----------------------------------------------------------------


def _hash(text: str) -> str:
    return base64.b64encode(hashlib.sha256(text.encode("utf-8")).digest()).decode("ascii")


async def test_the_audit_view_lists_reads_and_carries_the_csp(served: Served) -> None:
    async with Client(build_server(served), raise_exceptions=True) as client:
        listed = {str(r.uri): r for r in (await client.list_resources()).resources}
        read = await client.read_resource(VIEW_URI)
        tools = {t.name: t for t in (await client.list_tools()).tools}
    assert listed[VIEW_URI].mime_type == APP_MIME_TYPE
    [content] = read.contents
    assert content.mime_type == APP_MIME_TYPE
    html = content.text  # type: ignore[union-attr]
    script = (STATIC_DIR / "audit-view.js").read_text(encoding="utf-8")
    css = (STATIC_DIR / "site.css").read_text(encoding="utf-8")
    csp = (
        f"default-src 'none'; script-src 'sha256-{_hash(script)}'; style-src "
        f"'sha256-{_hash(css)}'; img-src 'self'; base-uri 'none'; form-action 'none'"
    )
    assert f'<meta http-equiv="Content-Security-Policy" content="{escape(csp)}">' in html
    assert f"<script>{script}</script>" in html and html.count("<script") == 1
    assert tools["audit_answer"].meta == {"ui": {"resourceUri": VIEW_URI}}


HOSTILE = (
    '<script>alert("x")</script> Zentravir <img src=x onerror=alert(1)> was studied '
    "[{handle}].\n\nAn uncited </main><iframe srcdoc=x> claim.\n"
)


async def test_hostile_text_in_an_answer_is_escaped_in_the_audit_view(served: Served) -> None:
    handle = mint(DEMO, parse_locator("pmid:99000001/abstract.1"))
    answer = HOSTILE.format(handle=handle)
    async with Client(build_server(served), raise_exceptions=True, extensions=[APPS]) as client:
        result = await client.call_tool("audit_answer", {"answer": answer})
    assert not result.is_error, text_of(result)
    assert result.meta is not None
    page = result.meta[VIEW_META_KEY]["html"]
    assert "&lt;script&gt;alert(&#34;x&#34;)&lt;/script&gt;" in page
    assert "&lt;img src=x onerror=alert(1)&gt;" in page
    assert "&lt;/main&gt;&lt;iframe srcdoc=x&gt;" in page
    assert "<script" not in page and "<img" not in page and "<iframe" not in page
    assert page.count("</main>") == 1
    assert "Content-Security-Policy" in page and "script-src" not in page  # the report's own


async def test_a_client_without_apps_gets_no_rendered_page(served: Served) -> None:
    handle = mint(DEMO, parse_locator("pmid:99000001/abstract.1"))
    async with Client(build_server(served), raise_exceptions=True) as client:
        result = await client.call_tool("audit_answer", {"answer": f"A claim [{handle}].\n"})
    assert not result.is_error
    assert VIEW_META_KEY not in (result.meta or {})


async def test_a_snapshot_changed_while_served_fails_the_prompt_resources_and_reaudit(
    demo_pair: tuple[Path, Path], tmp_path: Path
) -> None:
    path = tmp_path / demo_pair[1].name
    shutil.copyfile(demo_pair[1], path)
    shutil.copyfile(manifest_path(demo_pair[1]), manifest_path(path))
    report = published_report(demo_pair[0])
    changed = (
        f"snapshot {path.name} changed since the server trusted it; hint: restart citeseal serve "
        "once nothing is writing the file"
    )
    with Served(trust_snapshot(path, TRUST), DEMO) as served:
        stat = path.stat()
        os.utime(path, ns=(stat.st_atime_ns, stat.st_mtime_ns + 1_000_000_000))
        async with Client(build_server(served), raise_exceptions=True) as client:
            for uri in ("evidence://record/pmid:99000001", f"evidence://passage/{HANDLE}"):
                with pytest.raises(MCPError) as caught:
                    await client.read_resource(uri)
                assert (caught.value.error.code, caught.value.error.message) == (-32603, changed)
            with pytest.raises(MCPError) as caught:
                await client.get_prompt("cite_by_handle", {})
            assert (caught.value.error.code, caught.value.error.message) == (-32603, changed)
            assert await error(client, "reaudit_report", {"report": report}) == (
                f"Error executing tool reaudit_report: {changed}"
            )
