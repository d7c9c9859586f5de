"""The user's own documents over MCP, through the SDK's in-memory client: ``search_documents``
finds their passages, and the ``evidence://`` resources read ``local:`` ids exactly as
written (``%20``, ``%2F``, ``%25``, non-ASCII), while traversal-like values stay refused."""

from __future__ import annotations

import json
from collections.abc import Iterator

import pytest
from mcp import Client, MCPError

from audit.handles import mint, parse_handle, parse_locator, verify
from audit.local_ids import encode_local_id
from pipeline.serve.resources import PASSAGE_TEMPLATE, RECORD_TEMPLATE, exact_value
from pipeline.serve.server import build_server
from pipeline.serve.service import Served
from pipeline.settings import Settings
from pipeline.snapshot.build import build_snapshot
from pipeline.snapshot.trust import trust_snapshot
from tests.audit.references.pdfs import text_pdf
from tests.conftest import TEST_KEYRING, TRUST
from tests.pipeline.serve.conftest import DEMO
from tests.pipeline.serve.test_server import error, ok

pytestmark = pytest.mark.anyio

FILES = {  # relative path → (its id, a passage path, words of that passage)
    "my report.pdf": ("my%20report.pdf", "page.1", "Zentravir halved Farrow flares."),
    "a/b.md": ("a%2Fb.md", "body.main.p1", "Farrow flares were rare in the cohort."),
    "100%.md": ("100%25.md", "body.main.p1", "Every patient completed follow-up."),
    "étude.txt": ("%C3%A9tude.txt", "body.main.p1", "Une étude du suivi."),
}


@pytest.fixture(scope="module")
def local_served(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Served]:
    """A snapshot of a folder whose names need every kind of escape, served with the demo
    key (sealed with the test key)."""
    root = tmp_path_factory.mktemp("documents")
    docs = root / "docs"
    (docs / "a").mkdir(parents=True)
    for relative, (_, _, words) in FILES.items():
        path = docs / relative
        if relative.endswith(".pdf"):
            path.write_bytes(text_pdf([[words]]))
        else:
            path.write_text(f"{words}\n", encoding="utf-8")
    (root / "mine.toml").write_text('name = "mine"\n[local]\nfolder = "docs"\n')
    with pytest.MonkeyPatch.context() as env:
        env.setenv("CITESEAL_DATA_DIR", str(root / "data"))
        built = build_snapshot(
            root / "mine.toml", keyring=TEST_KEYRING, settings=Settings(), resume=False
        )
    with Served(trust_snapshot(built.path, TRUST), DEMO) as served:
        yield served


def test_the_ids_of_the_folder_need_every_escape() -> None:
    assert {relative: encode_local_id(relative) for relative in FILES} == {
        relative: ident for relative, (ident, _, _) in FILES.items()
    }


async def test_search_documents_finds_local_passages_with_handles_that_verify(
    local_served: Served,
) -> None:
    async with Client(build_server(local_served), raise_exceptions=True) as client:
        tools = {t.name: t for t in (await client.list_tools()).tools}
        found, text = await ok(client, "search_documents", {"query": "Farrow flares"})
        literature, _ = await ok(client, "search_literature", {"query": "Farrow flares"})
    tool = tools["search_documents"]
    assert tool.output_schema == tools["search_literature"].output_schema
    assert set(tool.input_schema["properties"]) == {"query", "limit", "cursor"}
    assert tool.annotations is not None and tool.annotations.read_only_hint is True
    assert found["sources"] == ["local"] and literature["results"] == []
    ids = [hit["record_id"] for hit in found["results"]]
    assert sorted(ids) == ["local:a%2Fb.md", "local:my%20report.pdf"]
    assert all(verify(DEMO, parse_handle(hit["handle"])) for hit in found["results"])
    assert text.splitlines()[0] == "works 1-2 of 2 for 'Farrow flares' (local):"


async def test_search_documents_says_when_nothing_matches(local_served: Served) -> None:
    async with Client(build_server(local_served), raise_exceptions=True) as client:
        found, text = await ok(client, "search_documents", {"query": "xylophone"})
        refused = await error(client, "search_documents", {"query": "x", "sources": ["local"]})
    assert found["results"] == [] and found["total"] == 0
    assert text.startswith("no passage of local matches 'xylophone'")
    assert refused == (
        "Error executing tool search_documents: sources is not an argument of search_documents"
    )


async def test_a_local_id_with_escapes_round_trips_through_both_resources(
    local_served: Served,
) -> None:
    """One client for the four files (a server per case would cost a second each)."""
    async with Client(build_server(local_served), raise_exceptions=True) as client:
        for relative, (ident, path, words) in FILES.items():
            record = await client.read_resource(f"evidence://record/local:{ident}")
            data = json.loads(record.contents[0].text)  # type: ignore[union-attr]
            assert data["record"]["record_id"] == f"local:{ident}", relative
            assert data["record"]["title"] == relative  # no Markdown title: the relative path
            (passage,) = [p for p in data["record"]["passages"] if p["path"] == path]
            handle = passage["handle"]
            assert handle.startswith(f"local:{ident}@"), relative
            read = await client.read_resource(f"evidence://passage/{handle}")
            judged = json.loads(read.contents[0].text)  # type: ignore[union-attr]
            assert (judged["handle"], judged["verdict"]) == (handle, "ok"), relative
            assert judged["passage"]["text"] == words, relative


async def test_a_local_handle_round_trips_over_the_legacy_protocol_too(
    local_served: Served,
) -> None:
    locator = f"local:my%20report.pdf@{_version(local_served, 'local:my%20report.pdf')}/page.1"
    handle = mint(DEMO, parse_locator(locator))
    async with Client(build_server(local_served), raise_exceptions=True, mode="legacy") as client:
        read = await client.read_resource(f"evidence://passage/{handle}")
    assert json.loads(read.contents[0].text)["verdict"] == "ok"  # type: ignore[union-attr]


def _version(served: Served, record_id: str) -> str:
    with served.cursor() as con:
        row = con.execute(
            "SELECT current_version FROM record_state WHERE record_id = ?", [record_id]
        ).fetchone()
    assert row is not None
    return str(row[0])


REFUSED = [  # (uri, the one-line message of its -32602 error)
    (  # decoded once it would be another id, local:a%2Fb.md: never decoded
        "evidence://record/local:a%252Fb.md",
        "local:a%252Fb.md is not in this snapshot",
    ),
    (
        "evidence://record/local%3Aa%2Fb.md",
        "local%3Aa%2Fb.md is not a record id: expected ':' after the scheme, got '%'",
    ),
    (
        "evidence://record/local:my report.pdf",
        "local:my report.pdf is not a record id: local id must be the file's path relative "
        "to the folder, with every byte outside A-Z a-z 0-9 . _ - written %XX (upper-case "
        "hex), got 'my report.pdf'",
    ),
    (
        "evidence://record/local:..%2F..%2Fetc%2Fpasswd",
        "local:..%2F..%2Fetc%2Fpasswd is not a record id: local id names an empty, '.'-led "
        "or hidden path part (got '..' in '../../etc/passwd'), got '..%2F..%2Fetc%2Fpasswd'",
    ),
    (
        "evidence://record/local:a%2F..%2F..%2Fb.md",
        "Unknown resource: evidence://record/local:a%2F..%2F..%2Fb.md",
    ),
    (
        "evidence://record/local:%2E%2E%2Fsecret.md",
        "local:%2E%2E%2Fsecret.md is not a record id: %2E encodes '.', which is written "
        "as is, got '%2E%2E%2Fsecret.md'",
    ),
    (
        "evidence://record/local:%2Fetc%2Fpasswd",
        "local:%2Fetc%2Fpasswd is not a record id: local id names an empty, '.'-led or "
        "hidden path part (got '' in '/etc/passwd'), got '%2Fetc%2Fpasswd'",
    ),
    (
        "evidence://record/local:a%2F.git%2Fconfig",
        "local:a%2F.git%2Fconfig is not a record id: local id names an empty, '.'-led or "
        "hidden path part (got '.git' in 'a/.git/config'), got 'a%2F.git%2Fconfig'",
    ),
    (
        "evidence://passage/local:%2Fetc%2Fpasswd@abcdef012345/page.1~aaaaa",
        "local id names an empty, '.'-led or hidden path part (got '' in '/etc/passwd'), "
        "got '%2Fetc%2Fpasswd'",
    ),
    ("evidence://record/local:a%00.md", "Unknown resource: evidence://record/local:a%00.md"),
    (
        "evidence://record/local:../../etc/passwd",
        "local:../../etc/passwd is not a record id: a record id is SCHEME:ID, without "
        "@version, /path or ~check",
    ),
]


async def test_a_traversal_like_local_value_is_refused(local_served: Served) -> None:
    """Whatever its encoding: by the SDK's resource security or by the id grammar."""
    refused = []
    async with Client(build_server(local_served), raise_exceptions=True) as client:
        for uri, _ in REFUSED:
            with pytest.raises(MCPError) as caught:
                await client.read_resource(uri)
            refused.append((uri, caught.value.error.code, caught.value.error.message))
    assert refused == [(uri, -32602, message) for uri, message in REFUSED]


@pytest.mark.parametrize(
    ("template", "uri", "decoded", "value"),
    [
        (RECORD_TEMPLATE, "evidence://record/local:a%2Fb.md", "local:a/b.md", "local:a%2Fb.md"),
        (RECORD_TEMPLATE, "evidence://record/pmid:1", "pmid:1", "pmid:1"),
        (PASSAGE_TEMPLATE, "evidence://passage/local:100%25.md@x/p~c", "local:100%.md@x/p~c",
         "local:100%25.md@x/p~c"),
    ],
)  # fmt: skip
def test_the_exact_value_is_the_uri_text_after_the_template_prefix(
    template: str, uri: str, decoded: str, value: str
) -> None:
    assert exact_value(template, uri, decoded) == value


def test_a_uri_that_disagrees_with_the_sdk_match_is_refused() -> None:
    from audit.errors import InputError

    with pytest.raises(InputError) as caught:
        exact_value(RECORD_TEMPLATE, "evidence://record/pmid:1", "pmid:2")
    assert caught.value.message == (
        "the resource URI is not one of evidence://record/{+record_id}: 'pmid:1' is no value"
    )
    with pytest.raises(InputError) as caught:
        exact_value(RECORD_TEMPLATE, None, "pmid:1")
    assert caught.value.message == "the resource URI is not one of evidence://record/{+record_id}"
