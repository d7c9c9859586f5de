"""Passage search (BM25) and cite: ranked passages with handles that verify."""

from __future__ import annotations

import json
import os
import subprocess
from collections.abc import Iterator
from pathlib import Path

import duckdb
import pytest

from audit.errors import InputError
from audit.handles import parse_handle, verify
from audit.keys import Keyring
from pipeline.snapshot.search import (
    handle_for,
    locator_for,
    open_snapshot,
    record_passages,
    search_page,
    search_passages,
)
from tests.cli import citeseal
from tests.conftest import TEST_KEY_HEX

DEMO = Keyring.demo_keyring()
TRIAL = "nct:NCT99000001"


@pytest.fixture
def con(demo_pair: tuple[Path, Path]) -> Iterator[duckdb.DuckDBPyConnection]:
    connection = open_snapshot(demo_pair[1])
    yield connection
    connection.close()


def test_search_ranks_passages_best_first_with_handles_that_verify(
    con: duckdb.DuckDBPyConnection,
) -> None:
    hits = search_passages(con, "Farrow syndrome risk", DEMO, limit=8)
    assert len(hits) == 8
    scores = [h.score for h in hits]
    assert scores == sorted(scores, reverse=True)  # type: ignore[type-var]
    for hit in hits:
        assert hit.handle is not None
        handle = parse_handle(hit.handle)
        assert verify(DEMO, handle)
        assert handle.locator.record_id == hit.record_id
        assert handle.locator.path == hit.path
        assert "farrow" in hit.text.lower() or "risk" in hit.text.lower()
    top = hits[0]
    assert top.text.startswith("Zentravir exposure does not increase the risk of Farrow syndrome")


def test_search_only_ranks_current_versions(con: duckdb.DuckDBPyConnection) -> None:
    hits = search_passages(con, "zentravir", DEMO, sources=["clinicaltrials"], limit=100)
    assert hits and {h.source for h in hits} == {"clinicaltrials"}
    trial = [h for h in hits if h.record_id == TRIAL]
    assert trial and {h.version for h in trial} == {"2025-06-02"}
    assert all(h.handle and h.handle.startswith(f"{TRIAL}@2025-06-02/") for h in trial)


def test_search_respects_the_limit_and_the_source_filter(con: duckdb.DuckDBPyConnection) -> None:
    assert len(search_passages(con, "zentravir", DEMO, limit=3)) == 3
    labels = search_passages(con, "hepatotoxicity liver", DEMO, sources=["openfda"], limit=5)
    assert labels and all(h.record_id.startswith("setid:") for h in labels)
    assert all("@4/label." in (h.handle or "") for h in labels)
    assert search_passages(con, "qwertyuiop", DEMO) == []


@pytest.mark.parametrize(
    ("query", "kwargs", "message"),
    [
        ("  ", {}, "the search query is empty"),
        ("x", {"limit": 0}, "--limit must be between 1 and 1000, got 0"),
        (
            "x",
            {"sources": ["pubmedd"]},
            "unknown source 'pubmedd'; expected one of pubmed, europepmc, pubtator3, crossref, "
            "clinicaltrials, openfda, arxiv, openalex, local",
        ),
    ],
)
def test_bad_search_input_is_a_one_line_error(
    con: duckdb.DuckDBPyConnection, query: str, kwargs: dict[str, object], message: str
) -> None:
    with pytest.raises(InputError) as caught:
        search_passages(con, query, DEMO, **kwargs)  # type: ignore[arg-type]
    assert str(caught.value) == message


def test_cite_prints_every_passage_of_a_version_pinned_for_registries(
    con: duckdb.DuckDBPyConnection,
) -> None:
    old = record_passages(con, TRIAL, DEMO, version="2025-01-15")
    new = record_passages(con, TRIAL, DEMO)
    assert old.versions == ["2025-01-15", "2025-06-02"]
    assert (old.version, new.version, new.current_version) == (
        "2025-01-15",
        "2025-06-02",
        "2025-06-02",
    )
    assert [p.path for p in old.passages][:3] == [
        "trial.brief_title.1",
        "trial.official_title.1",
        "trial.brief_summary.1",
    ]
    for view, version in ((old, "2025-01-15"), (new, "2025-06-02")):
        for passage in view.passages:
            assert passage.handle is not None
            handle = parse_handle(passage.handle)
            assert handle.locator.version == version
            assert verify(DEMO, handle)
    summary = {p.path: p.text for p in old.passages}["trial.brief_summary.1"]
    assert summary != {p.path: p.text for p in new.passages}["trial.brief_summary.1"]


def test_cite_leaves_pubmed_handles_unpinned_and_shows_relations(
    con: duckdb.DuckDBPyConnection,
) -> None:
    view = record_passages(con, "pmid:99000002", DEMO)
    assert view.flags["retracted"] is True
    relations = {(r["kind"], r["target"], r["source"]) for r in view.relations}
    # PubMed's notice names the DOI Crossref reports: one retraction, one relation
    assert ("retraction_in", "pmid:99000003", "pubmed") in relations
    assert not any(target == "doi:10.5555/demo.0003" for _, target, _ in relations)
    assert view.passages[0].handle is not None
    assert view.passages[0].handle.startswith("pmid:99000002/title~")


@pytest.mark.parametrize(
    ("record_id", "version", "message"),
    [
        ("pmid:1", None, "pmid:1 is not in this snapshot"),
        ("nct:NCT99999999", None, "nct:NCT99999999 is not in this snapshot"),
        (
            "garbage",
            None,
            "garbage is not a record id: unknown scheme 'garbage' "
            "(expected one of pmid, pmcid, ppr, nct, setid, local)",
        ),
        (
            "pmid:abc",
            None,
            "pmid:abc is not a record id: pmid must be 1 to 10 digits without a leading zero, "
            "got 'abc'",
        ),
        (
            "nct:NCT99000001@2025-01-15",
            None,
            "nct:NCT99000001@2025-01-15 is not a record id: a record id is SCHEME:ID, "
            "without @version, /path or ~check",
        ),
        (
            "pmid:99000001/../x",
            None,
            "pmid:99000001/../x is not a record id: a record id is SCHEME:ID, "
            "without @version, /path or ~check",
        ),
        (
            "pmid:99000001/title~aaaaa",
            None,
            "pmid:99000001/title~aaaaa is not a record id: a record id is SCHEME:ID, "
            "without @version, /path or ~check",
        ),
        (
            TRIAL,
            "2024-01-01",
            f"{TRIAL} has no version '2024-01-01' in this snapshot; "
            "it holds 2025-01-15, 2025-06-02",
        ),
    ],
)
def test_cite_errors(
    con: duckdb.DuckDBPyConnection, record_id: str, version: str | None, message: str
) -> None:
    with pytest.raises(InputError) as caught:
        record_passages(con, record_id, DEMO, version=version)
    assert str(caught.value) == message


def test_locators_pin_only_nct_setid_and_ppr() -> None:
    assert locator_for("nct:NCT99000001", "2025-06-02", "trial.arms.1") is not None
    assert locator_for("pmid:99000001", "2", "title").version is None  # type: ignore[union-attr]
    assert locator_for("ppr:PPR990001", "1", "abstract.1").version == "1"  # type: ignore[union-attr]
    assert locator_for("doi:10.5555/demo.0003", "1", "title") is None
    assert handle_for(DEMO, "pmid:99000001", "1", "Not A Path") is None


def run_cli(*args: str) -> subprocess.CompletedProcess[str]:
    """The CLI, holding the key that sealed the demo pair (handles: ``--demo-key``)."""
    return citeseal(*args, env={**os.environ, "CITESEAL_KEY": TEST_KEY_HEX})


def test_search_and_cite_commands(demo_pair: tuple[Path, Path]) -> None:
    corpus = str(demo_pair[1].parent)
    done = run_cli("search", "boxed warning liver", "-s", corpus, "--demo-key", "-n", "2")
    assert done.returncode == 0, done.stderr
    first = done.stdout.splitlines()[0]
    assert first.startswith("1. setid:5eed0001-0000-4000-8000-000000000001@4/label.")
    assert done.stderr == "note: handles minted with the public demo key\n"
    as_json = json.loads(
        run_cli("search", "zentravir", "-s", corpus, "--demo-key", "--json").stdout
    )
    assert as_json["demo_key"] is True and len(as_json["results"]) == 10
    for result in as_json["results"]:
        assert verify(DEMO, parse_handle(result["handle"]))
    cite = run_cli("cite", TRIAL, "-s", corpus, "--version", "2025-01-15", "--demo-key")
    assert cite.returncode == 0, cite.stderr
    lines = cite.stdout.splitlines()
    assert lines[0] == (
        f"{TRIAL} @2025-01-15: Zentravir for Children With Farrow Syndrome (ZEN-FARROW-1)"
    )
    assert lines[2].startswith(f"{TRIAL}@2025-01-15/trial.brief_title.1~")
    missing = run_cli("cite", "pmid:1", "-s", corpus, "--demo-key")
    assert (missing.returncode, missing.stderr) == (2, "error: pmid:1 is not in this snapshot\n")


def test_search_results_show_a_registry_withdrawn_trial(demo_pair: tuple[Path, Path]) -> None:
    con = open_snapshot(demo_pair[1])
    try:
        hits = search_passages(con, "extended-release", DEMO, sources=["clinicaltrials"])
    finally:
        con.close()
    withdrawn = [hit for hit in hits if hit.record_id == "nct:NCT99000002"]
    assert withdrawn and {hit.status for hit in withdrawn} == {"WITHDRAWN"}
    corpus = str(demo_pair[1].parent)
    done = run_cli("search", "extended-release", "-s", corpus, "--demo-key", "-n", "1")
    assert done.returncode == 0, done.stderr
    assert done.stdout.splitlines()[1] == (
        "   Extended-Release Zentravir in Adults With Farrow Syndrome — Brief title — "
        "clinicaltrials — status WITHDRAWN — published 2024-05-02"
    )
    as_json = json.loads(run_cli("search", "extended-release", "-s", corpus, "--json").stdout)
    assert as_json["results"][0]["status"] == "WITHDRAWN"


def test_the_demo_papers_pubmed_and_europe_pmc_records_are_one_result_not_hits_1_and_2(
    demo_pair: tuple[Path, Path],
) -> None:
    """docs/snapshots.md once showed pmcid:PMC99000001/abstract.4 and pmid:99000001/abstract.4
    as hits 1 and 2: one paper, two sources. Now they are one work, shown once."""
    con = open_snapshot(demo_pair[1])
    try:
        page = search_page(con, "Farrow syndrome risk", DEMO, limit=3)
    finally:
        con.close()
    first = page.hits[0]
    assert (first.record_id, first.path, first.work) == (
        "pmcid:PMC99000001",
        "abstract.4",
        "pmcid:PMC99000001",
    )
    assert [(o.record_id, o.source) for o in first.also] == [("pmid:99000001", "pubmed")]
    assert first.also[0].handle is not None
    assert first.also[0].handle.startswith("pmid:99000001/abstract.4~")
    assert "pmid:99000001" not in {hit.record_id for hit in page.hits}
    assert len({hit.work for hit in page.hits}) == len(page.hits) == 3
