"""The MCP search tools' filters and cursors, through the SDK's in-memory client, on the
planted snapshot (tests/pipeline/snapshot/planted_search.py)."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from mcp import Client

from pipeline.serve.server import build_server
from pipeline.serve.service import Served
from pipeline.snapshot.designs import DESIGNS
from pipeline.snapshot.facets import MAX_TERM_CHARS, PHASES
from pipeline.snapshot.filters import TRIAL_STATUSES
from pipeline.snapshot.trust import trust_snapshot
from tests.conftest import TRUST
from tests.pipeline.serve.conftest import DEMO
from tests.pipeline.serve.test_server import error, ok
from tests.pipeline.snapshot.planted_facets import label_id
from tests.pipeline.snapshot.planted_search import QUERY, write_planted

pytestmark = pytest.mark.anyio
HINT = "; hint: search again without a cursor to start from the first page"


@pytest.fixture(scope="module")
def planted_path(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return write_planted(tmp_path_factory.mktemp("planted-mcp") / "planted" / "planted-1.duckdb")


@pytest.fixture
def planted(planted_path: Path) -> Iterator[Served]:
    with Served(trust_snapshot(planted_path, TRUST), DEMO) as value:
        yield value


def _ids(value: dict[str, Any]) -> set[str]:
    return {hit["record_id"] for hit in value["results"]}


async def test_literature_filters_keep_exactly_the_planted_records(planted: Served) -> None:
    async with Client(build_server(planted), raise_exceptions=True) as client:
        value, text = await ok(
            client,
            "search_literature",
            {"query": QUERY, "limit": 50, "retracted": "exclude", "published_from": "2021-06"},
        )
        assert _ids(value) == {"ppr:PPR99100005", "pmcid:PMC99100006"}
        assert value["excluded_unknown"] == {"retracted": 1, "published": 4}
        assert value["next_cursor"] is None
        assert all(hit["flags"]["retracted"] is False for hit in value["results"])
        assert text.splitlines()[-2] == (
            "left out: 4 records whose publication date is unknown or not precise enough "
            "for the range"
        )
        value, _ = await ok(client, "search_literature", {"query": QUERY, "preprint": "only"})
        assert _ids(value) == {"ppr:PPR99100005"}
        assert value["results"][0]["flags"]["preprint"] is True


async def test_trial_status_filter_and_its_errors(planted: Served) -> None:
    async with Client(build_server(planted), raise_exceptions=True) as client:
        value, _ = await ok(client, "search_trials", {"query": QUERY, "status": ["COMPLETED"]})
        assert _ids(value) == {"nct:NCT99100002"}
        assert value["excluded_unknown"] == {"statuses": 1}
        message = await error(client, "search_trials", {"query": QUERY, "status": ["DONE"]})
        assert message == (
            "Error executing tool search_trials: unknown trial status 'DONE'; expected one of "
            + ", ".join(TRIAL_STATUSES)
        )


@pytest.mark.parametrize(
    ("args", "message"),
    [
        ({"retracted": "hide"}, "retracted must be one of include, exclude, only, got 'hide'"),
        (
            {"published_to": "2021-6"},
            "published_to is not a date: got '2021-6', expected YYYY, YYYY-MM or YYYY-MM-DD",
        ),
        (
            {"cursor": "bm90IGEgY3Vyc29y"},
            "the cursor is not one this server issued: its signature does not verify "
            f"(altered, truncated or made up){HINT}",
        ),
        (
            {"cursor": ""},
            f"the cursor is not one this server issued: it is empty (leave cursor out for the "
            f"first page){HINT}",
        ),
    ],
)
async def test_bad_filters_and_cursors_are_is_error_results_with_the_message(
    planted: Served, args: dict[str, Any], message: str
) -> None:
    async with Client(build_server(planted), raise_exceptions=True) as client:
        got = await error(client, "search_literature", {"query": QUERY, **args})
        assert got == f"Error executing tool search_literature: {message}"


async def test_paging_with_next_cursor_until_null_covers_every_result_once(
    planted: Served,
) -> None:
    async with Client(build_server(planted), raise_exceptions=True) as client:
        everything, _ = await ok(client, "search_literature", {"query": QUERY, "limit": 50})
        pages: list[list[str]] = []
        args: dict[str, Any] = {"query": QUERY, "limit": 3}
        while True:
            value, text = await ok(client, "search_literature", args)
            pages.append([hit["handle"] or hit["record_id"] for hit in value["results"]])
            if value["next_cursor"] is None:
                break
            assert text.splitlines()[-2].endswith(f"cursor={value['next_cursor']}")
            args = {**args, "cursor": value["next_cursor"]}
        flat = [h for page in pages for h in page]
        assert flat == [hit["handle"] or hit["record_id"] for hit in everything["results"]]
        # one result per work: the 8 planted papers, each its own work, 15 passages in all
        assert len(set(flat)) == len(flat) == everything["total"] == 8
        assert everything["passages"] == 15
        assert [len(page) for page in pages] == [3, 3, 2]


async def test_a_cursor_with_another_query_or_tool_is_refused(planted: Served) -> None:
    async with Client(build_server(planted), raise_exceptions=True) as client:
        first, _ = await ok(client, "search_literature", {"query": QUERY, "limit": 2})
        cursor = first["next_cursor"]
        other = await error(
            client, "search_literature", {"query": "finding", "limit": 2, "cursor": cursor}
        )
        assert other == (
            "Error executing tool search_literature: the cursor belongs to another query "
            f"('zorblax'); pass the query it was issued for{HINT}"
        )
        tool = await error(client, "search_trials", {"query": QUERY, "cursor": cursor})
        assert tool == (
            "Error executing tool search_trials: the cursor pages through search_literature, "
            f"not search_trials{HINT}"
        )
        truncated = await error(
            client, "search_literature", {"query": QUERY, "limit": 2, "cursor": cursor[:-3]}
        )
        assert truncated.startswith(
            "Error executing tool search_literature: the cursor is not one this server issued: "
        )


@pytest.fixture
def facets(facets_snapshot: Path) -> Iterator[Served]:
    with Served(trust_snapshot(facets_snapshot, TRUST), DEMO) as value:
        yield value


async def test_literature_design_and_open_access_filters_over_mcp(facets: Served) -> None:
    async with Client(build_server(facets), raise_exceptions=True) as client:
        value, text = await ok(client, "search_literature", {"query": QUERY, "design": ["rct"]})
        assert _ids(value) == {"pmid:99300001"}
        assert (value["filters"]["designs"], value["excluded_unknown"]) == (["rct"], {"designs": 5})
        assert text.splitlines()[-2] == (
            "left out: 5 records whose publication types do not tell whether they are of that "
            "study design"
        )
        value, _ = await ok(client, "search_literature", {"query": QUERY, "open_access": "exclude"})
        assert _ids(value) == {"pmcid:PMC99300007"}
        assert value["excluded_unknown"] == {"open_access": 6}


async def test_trial_condition_intervention_phase_results_and_date_filters_over_mcp(
    facets: Served,
) -> None:
    async with Client(build_server(facets), raise_exceptions=True) as client:
        args = {"query": QUERY, "condition": "sjogren", "intervention": "ZBX-1"}
        value, _ = await ok(client, "search_trials", args)
        assert _ids(value) == {"nct:NCT99300001"}
        assert value["excluded_unknown"] == {"condition": 1, "intervention": 1}
        value, _ = await ok(
            client,
            "search_trials",
            {"query": QUERY, "phase": ["NA"], "has_results": "no", "completed_to": "2020"},
        )
        assert _ids(value) == {"nct:NCT99300002"}
        message = await error(client, "search_trials", {"query": QUERY, "phase": ["PHASE5"]})
        assert message == (
            "Error executing tool search_trials: phase: unknown trial phase 'PHASE5'; expected "
            "one of EARLY_PHASE1, PHASE1, PHASE2, PHASE3, PHASE4, NA"
        )


async def test_drug_labels_without_a_query_list_the_drug_newest_first_page_by_page(
    facets: Served,
) -> None:
    async with Client(build_server(facets), raise_exceptions=True) as client:
        value, text = await ok(client, "search_drug_labels", {"drug": "zorblax", "limit": 2})
        assert value["query"] is None
        assert [hit["record_id"] for hit in value["results"]] == [label_id(2), label_id(5)]
        assert (value["total"], value["excluded_unknown"]) == (3, {"drug": 1})
        assert text.splitlines()[0] == "labels 1-2 of 3 naming 'zorblax', newest first:"
        value, _ = await ok(
            client,
            "search_drug_labels",
            {"drug": "zorblax", "limit": 2, "cursor": value["next_cursor"]},
        )
        assert [hit["record_id"] for hit in value["results"]] == [label_id(3)]
        assert value["next_cursor"] is None
        value, _ = await ok(
            client, "search_drug_labels", {"query": "warnings", "drug": "ZORBLAXIN"}
        )
        assert [hit["path"] for hit in value["results"]] == ["label.warnings.1"]
        message = await error(client, "search_drug_labels", {})
        assert message == (
            "Error executing tool search_drug_labels: the search query is empty; give a "
            "query, or a drug name to list that drug's labels"
        )


async def test_the_new_filters_are_in_the_search_tools_input_schemas(facets: Served) -> None:
    async with Client(build_server(facets), raise_exceptions=True) as client:
        tools = {tool.name: tool.input_schema for tool in (await client.list_tools()).tools}
    literature = tools["search_literature"]["properties"]
    assert literature["design"]["items"]["enum"] == list(DESIGNS)
    assert literature["design"]["maxItems"] == len(DESIGNS)
    assert literature["open_access"]["enum"] == ["include", "exclude", "only"]
    trials = tools["search_trials"]["properties"]
    assert trials["phase"]["items"]["enum"] == list(PHASES)
    assert trials["has_results"]["enum"] == ["yes", "no", None]
    for name in ("condition", "intervention"):
        assert (trials[name]["minLength"], trials[name]["maxLength"]) == (1, MAX_TERM_CHARS)
    for name in ("started_from", "started_to", "completed_from", "completed_to"):
        assert trials[name]["pattern"] == r"^\d{4}(-\d{2}(-\d{2})?)?$"
    labels = tools["search_drug_labels"]
    assert "query" not in labels.get("required", [])  # optional when drug is given
    assert labels["properties"]["drug"]["maxLength"] == MAX_TERM_CHARS
    assert "query" in tools["search_literature"]["required"]
