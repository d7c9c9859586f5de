"""The issue-21 filters on planted records: each admits, rejects, or leaves a record undecided
and counted (tests/pipeline/snapshot/planted_facets.py says which record is which)."""

from __future__ import annotations

import contextlib
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import duckdb
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from audit.errors import InputError
from audit.keys import Keyring
from pipeline.snapshot.designs import DESIGNS
from pipeline.snapshot.facets import PHASES, parse_phases, parse_term
from pipeline.snapshot.filters import CLI_NAMES, make_filters
from pipeline.snapshot.search import search_page
from pipeline.snapshot.trust import trust_snapshot
from tests.conftest import TRUST
from tests.pipeline.snapshot.planted_facets import PAPER_IDS, label_id
from tests.pipeline.snapshot.planted_search import QUERY

DEMO = Keyring.demo_keyring()
LITERATURE = ["pubmed", "europepmc", "crossref"]
# pmid:99300001 and its Europe PMC copy pmcid:PMC99300010 are one work; unfiltered, the work
# shows through PMC99300010 (same score, smaller id)
SHOWN_PAPERS = PAPER_IDS - {"pmid:99300001"}


@pytest.fixture(scope="module")
def planted(facets_snapshot: Path) -> Iterator[duckdb.DuckDBPyConnection]:
    con = trust_snapshot(facets_snapshot, TRUST).search_connection()
    yield con
    con.close()


def _kept(con: duckdb.DuckDBPyConnection, **given: Any) -> tuple[set[str], dict[str, int]]:
    page = search_page(con, QUERY, DEMO, make_filters(**given), limit=100)
    assert page.total == len(page.hits)
    return {hit.record_id for hit in page.hits}, page.excluded_unknown


def test_without_filters_every_work_is_shown_and_nothing_counted(
    planted: duckdb.DuckDBPyConnection,
) -> None:
    kept, unknown = _kept(planted, sources=LITERATURE)
    assert (kept, unknown) == (SHOWN_PAPERS, {})


# undecided in every design test: PMC99300010 and pmid:99300004 (no types), pmid:99300003
# (only Journal Article), the two Crossref records (journal-article names no design)
NO_DESIGN = 5


@pytest.mark.parametrize(
    ("designs", "kept", "unknown"),
    [
        (["rct"], {"pmid:99300001"}, NO_DESIGN),
        (["clinical-study"], {"pmid:99300001", "pmid:99300002"}, NO_DESIGN),  # narrower ones
        (["observational"], {"pmid:99300002"}, NO_DESIGN),
        # Observational Study is broader than cohort: it cannot tell
        (["cohort"], set(), NO_DESIGN + 1),
        (["review"], {"pmcid:PMC99300005"}, NO_DESIGN + 1),  # the meta-analysis may be one
        # review-article is broader; a meta-analysis overlaps a systematic review
        (["systematic-review"], set(), NO_DESIGN + 2),
        (["meta-analysis"], {"pmcid:PMC99300006"}, NO_DESIGN + 1),
        (["RCT", "Editorial"], {"pmid:99300001", "pmcid:PMC99300007"}, NO_DESIGN),
    ],
)
def test_design_filter_admits_rejects_and_counts_the_undecided(
    planted: duckdb.DuckDBPyConnection, designs: list[str], kept: set[str], unknown: int
) -> None:
    assert _kept(planted, designs=designs) == (kept, {"designs": unknown})


def test_design_filter_rejects_trials_and_labels_rather_than_counting_them(
    planted: duckdb.DuckDBPyConnection,
) -> None:
    assert _kept(planted, designs=["rct"], sources=["clinicaltrials", "openfda"]) == (
        set(),
        {"designs": 0},
    )


def test_a_work_shows_through_its_record_that_passes_and_lists_the_undecided_copy(
    planted: duckdb.DuckDBPyConnection,
) -> None:
    page = search_page(planted, QUERY, DEMO, make_filters(designs=["rct"]), limit=10)
    (hit,) = page.hits
    assert (hit.record_id, hit.work) == ("pmid:99300001", "pmcid:PMC99300010")
    (other,) = hit.also
    assert (other.record_id, other.handle, other.score) == ("pmcid:PMC99300010", None, None)


@pytest.mark.parametrize(
    ("mode", "kept"),
    [
        # PMC99300005: Europe PMC says open; PMC99300006: CC BY beats its "N"; the Crossref
        # record's CC BY-NC is an open licence too
        ("only", {"pmcid:PMC99300005", "pmcid:PMC99300006", "doi:10.5555/zorblax.8"}),
        ("exclude", {"pmcid:PMC99300007"}),  # Europe PMC says N, no open licence
    ],
)
def test_open_access_filter_decides_from_europe_pmc_and_the_licence(
    planted: duckdb.DuckDBPyConnection, mode: str, kept: set[str]
) -> None:
    # unknown: the PubMed records, PMC99300010 (nothing said) and the other: licence
    assert _kept(planted, open_access=mode, sources=LITERATURE) == (kept, {"open_access": 6})


def test_open_access_counts_registry_records_as_open_by_their_public_domain_licence(
    planted: duckdb.DuckDBPyConnection,
) -> None:
    kept, unknown = _kept(planted, open_access="only", sources=["clinicaltrials", "openfda"])
    assert (len(kept), unknown) == (9, {"open_access": 0})


@pytest.mark.parametrize(
    ("given", "kept", "unknown"),
    [
        # NCT99300003 is observational (no phase): rejected; NCT99300004 has no phases
        ({"phases": ["PHASE2"]}, {"nct:NCT99300001"}, {"phases": 1}),
        ({"phases": ["na", "Phase 3"]}, {"nct:NCT99300001", "nct:NCT99300002"}, {"phases": 1}),
        ({"has_results": "yes"}, {"nct:NCT99300001"}, {"has_results": 2}),
        ({"has_results": "NO"}, {"nct:NCT99300002"}, {"has_results": 2}),
        ({"condition": "farrow syndrome"}, {"nct:NCT99300001"}, {"condition": 1}),
        ({"condition": "FARROW"}, {"nct:NCT99300001", "nct:NCT99300002"}, {"condition": 1}),
        ({"condition": "Sjögren disease"}, {"nct:NCT99300001"}, {"condition": 1}),
        ({"condition": "sjogren"}, {"nct:NCT99300001"}, {"condition": 1}),
        ({"condition": "syndrome sjogren"}, set(), {"condition": 1}),  # two conditions
        ({"condition": "farr"}, set(), {"condition": 1}),  # whole words only
        ({"intervention": "zbx-1"}, {"nct:NCT99300001"}, {"intervention": 2}),
        ({"intervention": "pump"}, {"nct:NCT99300002"}, {"intervention": 2}),
        ({"started_from": "2021"}, {"nct:NCT99300001"}, {"started": 2}),
        ({"started_from": "2021-03-15"}, set(), {"started": 3}),  # 2021-03 straddles it
        ({"completed_to": "2020-06"}, {"nct:NCT99300002"}, {"completed": 2}),
        (
            {"completed_from": "2023-06", "completed_to": "2023-06"},
            {"nct:NCT99300001"},
            {"completed": 2},
        ),
    ],
)
def test_trial_filters_admit_reject_and_count_the_undecided(
    planted: duckdb.DuckDBPyConnection,
    given: dict[str, Any],
    kept: set[str],
    unknown: dict[str, int],
) -> None:
    assert _kept(planted, **given) == (kept, unknown)  # papers and labels: rejected


@pytest.mark.parametrize(
    ("drug", "kept"),
    [
        ("zorblaxin", {1}),  # brand
        ("Zorblax  Hydrochloride", {1}),  # generic and substance, case and space folded
        ("zorblax", {2, 3, 5}),  # label 2's brand Zörblax folds to it
        (" ZÖRBLAX ", {2, 3, 5}),
        ("zorblax hydro", set()),  # exact names, not words
    ],
)
def test_drug_filter_matches_brand_generic_and_substance_names_exactly_folded(
    planted: duckdb.DuckDBPyConnection, drug: str, kept: set[int]
) -> None:
    # label 4 names no drug: undecided
    assert _kept(planted, drug=drug) == ({label_id(n) for n in kept}, {"drug": 1})


def test_filters_combine_and_each_counts_only_what_no_other_rejects(
    planted: duckdb.DuckDBPyConnection,
) -> None:
    # NCT99300004 lists asthma but no phase: undecided on the phase only; NCT99300003 lists
    # no conditions, but the phase rejects it (observational): not counted
    kept, unknown = _kept(planted, phases=["PHASE2"], condition="asthma")
    assert (kept, unknown) == (set(), {"phases": 1, "condition": 0})


@pytest.mark.parametrize(
    ("given", "message"),
    [
        (
            {"designs": ["rtc"]},
            "--design: unknown study design 'rtc'; expected one of " + ", ".join(DESIGNS),
        ),
        (
            {"phases": ["phase 5"]},
            "--phase: unknown trial phase 'phase 5'; expected one of " + ", ".join(PHASES),
        ),
        ({"has_results": "maybe"}, "--has-results must be one of yes, no, got 'maybe'"),
        ({"open_access": "yes"}, "--open-access must be one of include, exclude, only, got 'yes'"),
        ({"condition": " -- "}, "--condition has no letter or digit to match: got ' -- '"),
        ({"drug": "x" * 201}, "--drug is 201 characters; at most 200"),
        (
            {"started_from": "2024", "started_to": "2023-12"},
            "--started-from 2024 is after --started-to 2023-12; the range holds no date",
        ),
        (
            {"completed_to": "2023-02-30"},
            "--completed-to is not a day of the calendar: got '2023-02-30'",
        ),
    ],
)
def test_invalid_values_of_the_new_filters_are_one_line_errors_in_cli_names(
    given: dict[str, Any], message: str
) -> None:
    with pytest.raises(InputError) as caught:
        make_filters(**given, names=CLI_NAMES)
    assert caught.value.message == message


def test_new_filters_are_in_the_canonical_form_a_cursor_binds() -> None:
    filters = make_filters(
        designs=["RCT"], phases=["phase 2"], drug="  Zorblax ", started_to="2020"
    )
    canonical = filters.canonical()
    assert (canonical["designs"], canonical["phases"], canonical["drug"]) == (
        ["rct"],
        ["PHASE2"],
        "Zorblax",
    )
    assert (canonical["started_from"], canonical["started_to"]) == (None, "2020")


def test_phases_are_read_as_the_registry_writes_them_or_as_people_do() -> None:
    given = ["3", "Phase III", "early phase 1", "n/a", "phase-2", "PHASE2", "iv"]
    assert parse_phases("phase", given[:6]) == ("PHASE3", "EARLY_PHASE1", "NA", "PHASE2")
    assert parse_phases("phase", given[6:]) == ("PHASE4",)


@given(st.lists(st.text(max_size=16), max_size=3), st.text(max_size=40))
@settings(max_examples=150)
def test_phase_and_term_parsers_only_ever_return_known_values_or_raise_input_error(
    phases: list[str], term: str
) -> None:
    with contextlib.suppress(InputError):
        assert set(parse_phases("phase", phases)) <= set(PHASES)
    try:
        parsed = parse_term("drug", term)
    except InputError:
        return
    assert parsed is not None and parsed == " ".join(term.split()) and parsed.strip()
