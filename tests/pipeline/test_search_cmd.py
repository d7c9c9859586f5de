"""``citeseal search`` filters: what each option keeps, and one-line errors (exit 2)."""

from __future__ import annotations

import json
import os
import subprocess
from pathlib import Path

import pytest

from pipeline.snapshot.filters import TRIAL_STATUSES
from tests.cli import citeseal
from tests.conftest import TEST_KEY_HEX
from tests.pipeline.snapshot.planted_search import QUERY, write_planted


@pytest.fixture(scope="module")
def planted(tmp_path_factory: pytest.TempPathFactory) -> str:
    folder = tmp_path_factory.mktemp("planted-cli") / "planted"
    return str(write_planted(folder / "planted-1.duckdb"))


def search(snapshot: str, *args: str) -> subprocess.CompletedProcess[str]:
    return citeseal(
        "search",
        QUERY,
        *("-s", snapshot, "--demo-key", *args),
        env={**os.environ, "CITESEAL_KEY": TEST_KEY_HEX},
    )


def test_search_options_filter_and_json_reports_total_filters_and_undecided(
    planted: str,
) -> None:
    done = search(planted, "--retracted", "only", "--from", "2020", "--to", "2020-12", "--json")
    assert done.returncode == 0, done.stderr
    result = json.loads(done.stdout)
    assert {r["record_id"] for r in result["results"]} == {"pmid:99100002"}
    assert result["results"][0]["flags"]["retracted"] is True
    assert result["results"][0]["published"] == "2020"
    assert (result["total"], result["passages"]) == (1, 2)  # one work, its two passages
    assert result["excluded_by_work"] == {}
    # pmid:99100004 is undecided on both filters (no flag known, no date): counted under each
    assert result["excluded_unknown"] == {"retracted": 1, "published": 1}
    assert result["filters"] == {
        "sources": [],
        "retracted": "only",
        "expression_of_concern": "include",
        "preprint": "include",
        "statuses": [],
        "designs": [],
        "open_access": "include",
        "phases": [],
        "has_results": None,
        "condition": None,
        "intervention": None,
        "drug": None,
        "published_from": "2020",
        "published_to": "2020-12",
        "started_from": None,
        "started_to": None,
        "completed_from": None,
        "completed_to": None,
    }


def test_search_text_says_how_many_records_a_date_range_left_out_undated(planted: str) -> None:
    done = search(planted, "--from", "2021-06", "--status", "recruiting", "--status", "TERMINATED")
    assert done.returncode == 0, done.stderr
    lines = done.stdout.splitlines()
    handles = [line.split("~")[0] for line in lines if "~" in line]
    assert handles == [
        "1. nct:NCT99100001@2025-01-15/trial.brief_summary.1",
        "2. nct:NCT99100004@2025-01-15/trial.brief_summary.1",
    ]
    # NCT99100003 has neither a date nor a status: undecided on both, counted under each
    assert lines[-2:] == [
        "left out: 1 record whose publication date is unknown or not precise enough for the range",
        "left out: 1 record whose trial overall status is unknown",
    ]
    assert "status RECRUITING — published 2022-01-10" in done.stdout


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["--retracted", "hide"], "--retracted must be one of include, exclude, only, got 'hide'"),
        (
            ["--expression-of-concern", "maybe"],
            "--expression-of-concern must be one of include, exclude, only, got 'maybe'",
        ),
        (
            ["--from", "2021-13"],
            "--from has no month 13: got '2021-13', expected YYYY, YYYY-MM or YYYY-MM-DD",
        ),
        (
            ["--from", "2022", "--to", "2021"],
            "--from 2022 is after --to 2021; the range holds no date",
        ),
        (
            ["--status", "RECRUTING"],
            "unknown trial status 'RECRUTING'; expected one of " + ", ".join(TRIAL_STATUSES),
        ),
    ],
)
def test_invalid_search_filters_exit_2_with_one_line(
    planted: str, args: list[str], message: str
) -> None:
    done = search(planted, *args)
    assert (done.returncode, done.stdout, done.stderr) == (2, "", f"error: {message}\n")


def test_search_that_filters_everything_out_says_the_filters_did(planted: str) -> None:
    done = search(planted, "--preprint", "only", "--source", "pubmed")
    assert (done.returncode, done.stdout) == (
        0,
        "no passage matches 'zorblax' with these filters\n",
    )


@pytest.fixture(scope="module")
def facets(facets_snapshot: Path) -> str:
    return str(facets_snapshot)


def in_process(*args: str) -> subprocess.CompletedProcess[str]:
    """``citeseal ARGS`` (in this process, through the CLI's error boundary)."""
    return citeseal(*args, env={**os.environ, "CITESEAL_KEY": TEST_KEY_HEX})


def test_search_design_and_trial_options_keep_exactly_the_planted_records(facets: str) -> None:
    done = in_process("search", QUERY, "-s", facets, "--design", "RCT", "--json")
    assert done.returncode == 0, done.stderr
    result = json.loads(done.stdout)
    assert [r["record_id"] for r in result["results"]] == ["pmid:99300001"]
    assert result["excluded_unknown"] == {"designs": 5}
    done = in_process(
        *("search", QUERY, "-s", facets, "--condition", "Farrow", "--phase", "phase 2"),
        *("--has-results", "yes", "--started-from", "2021"),
    )
    assert done.returncode == 0, done.stderr
    assert [line.split("~")[0] for line in done.stdout.splitlines()] == [
        "1. nct:NCT99300001@2025-01-15/trial.brief_summary.1",
        "   Zorblax trial NCT99300001 — Brief summary — clinicaltrials — status COMPLETED",
        "   Zorblax.",
    ]  # NCT99300004 is undecided on three filters, but its conditions reject it: not counted
    done = in_process(
        *("search", QUERY, "-s", facets, "--phase", "PHASE2", "--has-results", "yes"),
        *("--started-from", "2021"),
    )
    assert done.stdout.splitlines()[-3:] == [
        "left out: 1 record whose trial start date is unknown or not precise enough for the range",
        "left out: 1 record whose trial phase is unknown",
        "left out: 1 record whose trial does not say whether results are posted",
    ]


def test_search_drug_without_a_query_lists_labels_newest_first(facets: str) -> None:
    done = in_process("search", "-s", facets, "--drug", "zorblax", "--limit", "2")
    assert done.returncode == 0, done.stderr
    lines = done.stdout.splitlines()
    assert [line.split("~")[0] for line in lines if "~" in line] == [
        "1. setid:5eed0003-0000-4000-8000-000000000002@1/label.indications_and_usage.1",
        "2. setid:5eed0003-0000-4000-8000-000000000005@1/label.indications_and_usage.1",
    ]
    assert "Zorblax label 2 — Indications — openfda — published 2024-06-10" in done.stdout
    assert lines[-2:] == [
        "shown: 2 of 3 labels (--limit)",
        "left out: 1 record whose label names no brand, generic or substance",
    ]
    done = in_process("search", "-s", facets, "--drug", "zorblax", "--json")
    result = json.loads(done.stdout)
    assert (result["query"], result["total"], result["filters"]["drug"]) == (None, 3, "zorblax")


@pytest.mark.parametrize(
    ("args", "message"),
    [
        ([], "the search query is empty; give a query, or a drug name to list that drug's labels"),
        (
            [QUERY, "--phase", "5"],
            "--phase: unknown trial phase '5'; expected one of EARLY_PHASE1, PHASE1, PHASE2, "
            "PHASE3, PHASE4, NA",
        ),
        (
            [QUERY, "--open-access", "yes"],
            "--open-access must be one of include, exclude, only, got 'yes'",
        ),
        (["--drug", "!!"], "--drug has no letter or digit to match: got '!!'"),
    ],
)
def test_invalid_new_search_options_exit_2_with_one_line(
    facets: str, args: list[str], message: str
) -> None:
    done = in_process("search", "-s", facets, *args)
    assert (done.returncode, done.stdout, done.stderr) == (2, "", f"error: {message}\n")
