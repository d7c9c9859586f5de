"""Corpus specs: the demo spec, the spec hash, and errors that name the line and the key."""

from __future__ import annotations

from pathlib import Path

import pytest

from pipeline.errors import SpecError
from pipeline.snapshot.spec import load_spec, parse_spec
from tests.pipeline.snapshot.conftest import DEMO_SPEC

SPEC = """\
name = "x"
description = "test corpus"

[pubmed]
queries = [{ term = "zentravir", limit = 10 }]
ids = ["99000003"]
annotations = true

[clinicaltrials]
ids = ["NCT99000001"]
"""
WHERE = Path("snapshots/x.toml")


def test_the_demo_spec_harvests_all_six_sources() -> None:
    spec = load_spec(DEMO_SPEC)
    assert spec.name == "demo"
    assert spec.sources() == [
        "pubmed",
        "europepmc",
        "pubtator3",
        "crossref",
        "clinicaltrials",
        "openfda",
    ]
    assert spec.replay == ["demo/replay"]
    assert spec.pubmed is not None and spec.pubmed.ids == ["99000003", "99000005"]


def test_spec_hash_ignores_description_and_replay_but_not_limits() -> None:
    base = parse_spec(SPEC, WHERE).spec_hash()
    assert parse_spec(SPEC.replace("test corpus", "other words"), WHERE).spec_hash() == base
    assert parse_spec('replay = ["r"]\n' + SPEC, WHERE).spec_hash() == base
    assert parse_spec(SPEC.replace("limit = 10", "limit = 11"), WHERE).spec_hash() != base
    assert len(base) == 64


def test_dates_are_checked_and_europe_pmc_windows_become_query_syntax() -> None:
    text = SPEC + (
        '\n[europepmc]\nqueries = [{ query = "zentravir", limit = 5, '
        'mindate = 2020-01-01, maxdate = "2021" }]\n'
    )
    spec = parse_spec(text, WHERE)
    assert spec.europepmc is not None
    assert spec.europepmc.queries[0].effective_query() == (
        "(zentravir) AND FIRST_PDATE:[2020-01-01 TO 2021-12-31]"
    )


@pytest.mark.parametrize(
    ("old", "new", "message"),
    [
        (
            "limit = 10",
            'limit = "ten"',
            "snapshots/x.toml:5: [pubmed].queries[0].limit: "
            "Input should be a valid integer, got 'ten'",
        ),
        (
            "limit = 10",
            "limit = 0",
            "snapshots/x.toml:5: [pubmed].queries[0].limit: "
            "Input should be greater than or equal to 1, got 0",
        ),
        (
            "annotations = true",
            "annotations = true\ncolour = 1",
            "snapshots/x.toml:8: [pubmed].colour: unknown key; "
            "expected one of annotations, baseline, ids, queries, updates",
        ),
        (
            "[clinicaltrials]",
            "[clinicaltrial]",
            "snapshots/x.toml:9: [clinicaltrial]: unknown section; "
            "expected one of arxiv, clinicaltrials, crossref, europepmc, local, openalex, openfda, "
            "pubmed",
        ),
        (
            '"99000003"',
            '"099000003"',
            "snapshots/x.toml:6: [pubmed].ids: '099000003' is not a PMID (1 to 10 digits)",
        ),
        (
            '"NCT99000001"',
            '"NCT9900001"',
            "snapshots/x.toml:10: [clinicaltrials].ids: "
            "'NCT9900001' is not an NCT id (NCT + 8 digits)",
        ),
        (
            "annotations = true",
            "annotations = 1",
            "snapshots/x.toml:7: [pubmed].annotations: Input should be a valid boolean, got 1",
        ),
        (
            'name = "x"',
            'name = "My corpus"',
            "snapshots/x.toml:1: name: expected lower-case letters, digits, '-' or '_' "
            "(at most 64, starting with a letter or digit), got 'My corpus'",
        ),
        (
            'name = "x"\n',
            "",
            "snapshots/x.toml: name: required key is missing",
        ),
        (
            "limit = 10 }",
            'limit = 10, mindate = "2020-13" }',
            "snapshots/x.toml:5: [pubmed].queries[0].mindate: "
            "expected a date YYYY, YYYY-MM or YYYY-MM-DD, got '2020-13'",
        ),
        (
            "limit = 10 }",
            'limit = 10, mindate = "2021", maxdate = "2020" }',
            "snapshots/x.toml:5: [pubmed].queries[0]: mindate 2021 is after maxdate 2020",
        ),
        (
            'ids = ["NCT99000001"]',
            'ids = ["NCT99000001"]\nqueries = [{ limit = 3 }]',
            "snapshots/x.toml:11: [clinicaltrials].queries[0]: "
            "a query needs at least one of term, cond, intr or filters",
        ),
        (
            'name = "x"',
            "name = ",
            "snapshots/x.toml:1: invalid TOML: Invalid value",
        ),
    ],
)
def test_spec_errors_name_the_line_and_the_key(old: str, new: str, message: str) -> None:
    assert old in SPEC
    with pytest.raises(SpecError) as caught:
        parse_spec(SPEC.replace(old, new, 1), WHERE)
    assert str(caught.value) == message


def test_array_of_tables_errors_point_at_the_right_table() -> None:
    text = (
        'name = "x"\n\n[[pubmed.queries]]\nterm = "a"\nlimit = 5\n\n'
        '[[pubmed.queries]]\nterm = "b"\nlimit = "many"\n'
    )
    with pytest.raises(SpecError) as caught:
        parse_spec(text, WHERE)
    assert str(caught.value) == (
        "snapshots/x.toml:9: [pubmed].queries[1].limit: Input should be a valid integer, got 'many'"
    )


def test_a_missing_spec_file_is_a_one_line_error(tmp_path: Path) -> None:
    with pytest.raises(SpecError) as caught:
        load_spec(tmp_path / "nope.toml")
    assert str(caught.value) == f"corpus spec {tmp_path / 'nope.toml'} does not exist"


IDS = SPEC + '\n[crossref]\ndois = ["10.5555/Demo.0001"]\n\n[europepmc]\npmcids = ["PMC99000001"]\n'


def test_works_can_be_asked_for_by_doi_and_by_pmcid_and_dois_are_compared_in_lower_case() -> None:
    spec = parse_spec(IDS, WHERE)
    assert spec.crossref is not None and spec.crossref.dois == ["10.5555/demo.0001"]
    assert spec.europepmc is not None and spec.europepmc.pmcids == ["PMC99000001"]
    assert spec.sources() == ["pubmed", "europepmc", "pubtator3", "crossref", "clinicaltrials"]
    upper = parse_spec(IDS.replace("Demo.0001", "DEMO.0001"), WHERE)
    assert upper.spec_hash() == spec.spec_hash()


@pytest.mark.parametrize(
    ("bad", "message"),
    [
        (
            '"doi:10.5555/demo.0001"',
            "snapshots/x.toml:13: [crossref].dois: 'doi:10.5555/demo.0001' is not a DOI "
            "(10.NNNN/suffix, printable ASCII without blanks or ',')",
        ),
        (
            '"https://doi.org/10.5555/demo.0001"',
            "snapshots/x.toml:13: [crossref].dois: 'https://doi.org/10.5555/demo.0001' is not "
            "a DOI (10.NNNN/suffix, printable ASCII without blanks or ',')",
        ),
        (
            '"10.5555/a,b"',
            "snapshots/x.toml:13: [crossref].dois: '10.5555/a,b' is not a DOI "
            "(10.NNNN/suffix, printable ASCII without blanks or ',')",
        ),
        (
            '"10.55/short"',
            "snapshots/x.toml:13: [crossref].dois: '10.55/short' is not a DOI "
            "(10.NNNN/suffix, printable ASCII without blanks or ',')",
        ),
        (
            "10.5555",  # a TOML float
            "snapshots/x.toml:13: [crossref].dois[0]: Input should be a valid string, got 10.5555",
        ),
    ],
)
def test_a_doi_that_breaks_the_grammar_names_the_line_and_the_key(bad: str, message: str) -> None:
    with pytest.raises(SpecError) as caught:
        parse_spec(IDS.replace('"10.5555/Demo.0001"', bad), WHERE)
    assert str(caught.value) == message


@pytest.mark.parametrize("bad", ["PMC0", "99000001", "pmc99000001", "PMC1234567890123"])
def test_a_pmcid_that_breaks_the_grammar_names_the_line_and_the_key(bad: str) -> None:
    with pytest.raises(SpecError) as caught:
        parse_spec(IDS.replace("PMC99000001", bad), WHERE)
    assert str(caught.value) == (
        f"snapshots/x.toml:16: [europepmc].pmcids: {bad!r} is not a PMCID (PMC + 1 to 10 digits)"
    )
