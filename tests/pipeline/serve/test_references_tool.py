"""``check_references`` through the SDK's in-memory client, on the demo snapshot: the same JSON
as ``citeseal check --format json``, strict arguments, errors as the other tools give them."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest
from mcp import Client
from typer.testing import CliRunner

from pipeline.cli import app
from pipeline.serve.references import MAX_CHECK_CHARS, TEXT_FORMATS
from pipeline.serve.server import build_server
from pipeline.serve.service import Served
from pipeline.snapshot.manifest import manifest_path
from tests.conftest import TEST_KEY_HEX
from tests.pipeline.check_demo_golden import DOCUMENT, golden_path
from tests.pipeline.serve.test_server import error, ok

pytestmark = pytest.mark.anyio
BIBTEX = (
    "@article{a, title={Prenatal zentravir exposure and Farrow syndrome in offspring: a "
    "nationwide cohort study}, doi={10.5555/demo.0001}}\n"
    "@article{b, title={Something else entirely}, doi={10.5555/demo.0001}}\n"
)


async def test_check_references_returns_what_citeseal_check_prints_as_json(
    served: Served, monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    text = DOCUMENT.read_text(encoding="utf-8")
    async with Client(build_server(served), raise_exceptions=True) as client:
        data, block = await ok(client, "check_references", {"text": text})
    (tmp_path / "mcp").write_text(text, encoding="utf-8")  # the name the tool gives the text
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("CITESEAL_KEY", TEST_KEY_HEX)
    # the CLI reads a copy of the served file (same bytes): DuckDB refuses a second connection
    # to an open file with another configuration
    snapshot = Path(shutil.copy(served.trusted.path, tmp_path))
    shutil.copy(manifest_path(served.trusted.path), manifest_path(snapshot))
    args = ["check", "mcp", "--input-format", "markdown", "-s", str(snapshot)]
    printed = CliRunner().invoke(app, [*args, "--format", "json"])
    assert (printed.exit_code, printed.stderr) == (0, ""), repr(printed.exception)
    assert data == json.loads(printed.stdout)
    assert block == CliRunner().invoke(app, args).stdout  # the text block: the text report
    golden = json.loads(golden_path("json").read_text(encoding="utf-8"))
    assert data["counts"] == golden["counts"]


async def test_check_references_is_the_json_of_the_check_report_model(served: Served) -> None:
    from audit.references.check import CheckReport

    async with Client(build_server(served), raise_exceptions=True) as client:
        tools = {t.name: t for t in (await client.list_tools()).tools}
        data, _ = await ok(
            client,
            "check_references",
            {"text": BIBTEX, "format": "bibtex"},
        )
    report = CheckReport.model_validate(data)
    assert report.model_dump(mode="json") == data
    assert [c.tier for c in report.documents[0].references] == ["verified", "hallucinated"]
    tool = tools["check_references"]
    assert tool.output_schema is not None
    assert (
        tool.output_schema["properties"].keys()
        == CheckReport.model_json_schema()["properties"].keys()
    )
    props = tool.input_schema["properties"]
    assert props["text"]["maxLength"] == MAX_CHECK_CHARS
    assert props["format"]["enum"] == [*TEXT_FORMATS, None]
    assert tool.annotations is not None and tool.annotations.read_only_hint is True


@pytest.mark.parametrize(
    ("args", "message"),
    [
        ({"text": 5}, "text must be a string, got an integer"),
        ({"text": "x", "format": 3}, "format must be a string, got an integer"),
        ({"text": "x", "fmt": "bibtex"}, "fmt is not an argument of check_references"),
        ({}, "argument text is required"),
        (
            {"text": "x", "format": "pdf"},
            "format must be one of markdown, text, html, bibtex, ris, csl-json, got 'pdf'",
        ),
        (
            {"text": "@article{broken,", "format": "bibtex"},
            "mcp: line 1: a block that does not parse (Unexpectedly reached end of file.): "
            "@article{broken,",
        ),
    ],
)
async def test_bad_arguments_are_one_line_errors(served: Served, args: dict, message: str) -> None:
    async with Client(build_server(served), raise_exceptions=True) as client:
        got = await error(client, "check_references", args)
    assert got.startswith(f"Error executing tool check_references: {message}"), got


async def test_the_title_index_is_built_once_per_served_snapshot(served: Served) -> None:
    from pipeline.serve import references

    untitled = "# References\n\n1. Okonedo R. Farrow syndrome in twins: a case report. 2021.\n"
    async with Client(build_server(served), raise_exceptions=True) as client:
        first, _ = await ok(client, "check_references", {"text": untitled})
        built = references._cached_titles(served)  # pyright: ignore[reportPrivateUsage]
        second, _ = await ok(client, "check_references", {"text": untitled})
    assert built is not None
    assert references._cached_titles(served) is built  # pyright: ignore[reportPrivateUsage]
    assert first == second
    assert first["documents"][0]["references"][0]["tier"] == "needs_review"
