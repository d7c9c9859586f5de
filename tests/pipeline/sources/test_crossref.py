"""Crossref works: update-to/updated-by, relations, preprints, apply_relations."""

from __future__ import annotations

from pathlib import Path

import pytest
from hypothesis import given

from pipeline.errors import ParseError
from pipeline.http import HttpClient
from pipeline.records import Flags, Record, Relation
from pipeline.settings import Settings
from pipeline.sources import crossref
from tests.conftest import reference_files, requires_reference
from tests.pipeline.sources.fuzzing import (
    FUZZ_SETTINGS,
    REFERENCE_SETTINGS,
    check_fails_closed,
    mutated,
    seeds,
)
from tests.pipeline.sources.helpers import assert_conformant, fixture, wrapper_body


def test_a_retracted_work_via_updated_by_from_two_sources() -> None:
    [record] = crossref.parse(fixture("crossref", "work-retracted.json")).records
    assert record.record_id == "doi:10.5555/xref.0001"
    assert record.flags == Flags(retracted=True, expression_of_concern=None, preprint=False)
    assert record.relations == [
        Relation(
            kind="retraction_in",
            target="doi:10.5555/xref.notice",
            source="crossref",
            detail=(
                "Retraction; source: publisher | Retraction; source: retraction-watch; "
                "record 990123"
            ),
            date="2022-01-05",
        ),
        Relation(
            kind="correction_in",
            target="doi:10.5555/xref.erratum",
            source="crossref",
            detail="Correction; source: publisher",
            date="2021-06-01",
        ),
    ]
    assert [(p.path, p.section, p.text) for p in record.passages] == [
        ("title", "Title", "An invented article that was retracted"),
        ("abstract.1", "Background", "Invented background with p<0.05."),
        ("abstract.2", "Results", "Invented results."),
    ]


def test_a_posted_content_preprint_and_its_relations() -> None:
    [record] = crossref.parse(fixture("crossref", "work-preprint.json")).records
    assert (record.content_type, record.year) == ("preprint", 2020)
    assert record.flags == Flags(retracted=None, expression_of_concern=None, preprint=True)
    assert [(r.kind, r.target) for r in record.relations] == [
        ("preprint_of", "doi:10.5555/xref.0002"),
        ("version_of", "doi:10.5555/xref.preprint.v2"),
    ]


def test_updates_filter_list_gives_notices_for_the_filtered_doi_only() -> None:
    body, url = wrapper_body(
        Path(__file__).parents[2] / "fixtures/crossref/updates-retraction.json"
    )
    result = crossref.parse(body, url=url)
    assert [r.content_type for r in result.records] == [
        "retraction_notice",
        "expression_of_concern",
    ]
    assert result.notices == [
        Relation(
            kind="retraction_in",
            target="doi:10.5555/xref.0004",
            source="crossref",
            detail="Retraction; source: publisher; updates doi:10.5555/xref.0003",
            date="2023-03-01",
        ),
        Relation(
            kind="expression_of_concern_in",
            target="doi:10.5555/xref.0005",
            source="crossref",
            detail="Expression of Concern; source: publisher; updates doi:10.5555/xref.0003",
            date="2022-09-01",
        ),
    ]
    unfiltered = crossref.parse(body)  # without the URL every update-to entry is a notice
    assert len(unfiltered.notices) == 3


def _record(flags: Flags) -> Record:
    return Record(record_id="pmid:99000002", source="pubmed", title="t", flags=flags)


@pytest.mark.parametrize(
    ("before", "kinds", "after"),
    [
        (Flags(), ["retraction_in"], Flags(retracted=True)),
        (Flags(retracted=False), ["correction_in"], Flags(retracted=False)),
        (Flags(), ["correction_in"], Flags()),  # unknown stays unknown
        (Flags(retracted=False), ["retraction_in"], Flags(retracted=True)),  # True wins
        (
            Flags(expression_of_concern=False),
            ["expression_of_concern_in"],
            Flags(expression_of_concern=True),
        ),
        (Flags(preprint=None), ["preprint_of"], Flags(preprint=True)),
    ],
)
def test_apply_relations_merges_tri_state_flags(
    before: Flags, kinds: list[str], after: Flags
) -> None:
    relations = [Relation(kind=k, target="doi:10.5555/n", source="crossref") for k in kinds]
    merged = crossref.apply_relations(_record(before), relations)
    assert merged.flags == after
    assert merged.relations == relations


def test_apply_relations_does_not_duplicate() -> None:
    relation = Relation(kind="retraction_in", target="doi:10.5555/n", source="crossref")
    once = crossref.apply_relations(_record(Flags()), [relation])
    assert crossref.apply_relations(once, [relation]).relations == [relation]


def test_not_crossref_is_refused() -> None:
    with pytest.raises(ParseError) as caught:
        crossref.parse('{"status": "ok"}')
    assert caught.value.message == "expected Crossref works JSON (an object with 'message')"


@requires_reference
@pytest.mark.parametrize("path", reference_files("crossref"), ids=lambda p: p.name)
def test_reference_responses_conform(path: Path) -> None:
    body, url = wrapper_body(path)
    assert_conformant(crossref.parse(body, url=url))


@requires_reference
def test_wakefield_retraction_notice_via_crossref() -> None:
    [path] = [p for p in reference_files("crossref") if "11096" in p.name]
    body, url = wrapper_body(path)
    notices = crossref.parse(body, url=url).notices
    retracted = crossref.apply_relations(_record(Flags(retracted=False)), notices)
    assert retracted.flags.retracted is True
    assert ("retraction_in", "doi:10.1016/s0140-6736(10)60175-4") in [
        (r.kind, r.target) for r in retracted.relations
    ]


@pytest.mark.live
def test_live_crossref_smoke() -> None:
    with HttpClient(Settings.from_env()) as http:
        wakefield = "10.1016/s0140-6736(97)11096-0"
        relations = crossref.fetch_update_notices(http, [wakefield])[wakefield]
    assert any(r.kind == "retraction_in" for r in relations)


# -- fuzzing -----------------------------------------------------------------------------------
CROSSREF_SEEDS = seeds("crossref")
UPDATES_URL = "https://api.crossref.org/works?filter=updates:10.5555/demo.0002&rows=100"


@FUZZ_SETTINGS
@given(mutated(CROSSREF_SEEDS))
def test_fuzzed_crossref_bodies_give_records_or_a_parse_error(body: bytes) -> None:
    check_fails_closed(crossref.parse, body, url=UPDATES_URL)


@requires_reference
@REFERENCE_SETTINGS
@given(mutated(seeds("crossref", extra=reference_files("crossref"))))
def test_fuzzed_reference_crossref_bodies_give_records_or_a_parse_error(body: bytes) -> None:
    check_fails_closed(crossref.parse, body, url=UPDATES_URL)


@pytest.mark.parametrize(
    ("body", "message"),
    [
        (
            b'{"status": "ok", "message-type": "work-list", "message": []}',
            "crossref: message must be an object, got a list",
        ),
        (
            b'{"status": "ok", "message": {"items": [{"DOI": "10.5555/x", "title": 7}]}}',
            "crossref: message.items[0].title must be a list, got a number",
        ),
        (
            b'{"status": "ok", "message": {"DOI": "10.5555/x", "issued": {"date-parts": [["H"]]}}}',
            "crossref: message.issued.date-parts[0][0] must be an integer, got a string",
        ),
        (
            b'{"status": "ok", "message": {"items": [{"DOI": "10.5555/x", "update-to": true}]}}',
            "crossref: message.items[0].update-to must be a list, got a boolean",
        ),
        (
            b'{"status": "ok", "message": {"DOI": "10.5555/x", "relation": {"has-preprint": 1}}}',
            "crossref: message.relation.has-preprint must be a list, got a number",
        ),
        (
            b'{"message": ' + b"[" * 100_000 + b"]" * 100_000 + b"}",
            "expected Crossref works JSON but the JSON is nested deeper than 64 levels",
        ),
    ],
)
def test_a_crossref_answer_of_the_wrong_shape_is_a_parse_error_naming_the_field(
    body: bytes, message: str
) -> None:
    with pytest.raises(ParseError) as caught:
        crossref.parse(body)
    assert caught.value.message == message


def test_upstream_text_in_a_crossref_error_is_quoted_on_one_line() -> None:
    body = b'{"status": "failed", "message": "bad\\nfilter\\r\\n  value"}'
    with pytest.raises(ParseError) as caught:
        crossref.parse(body)
    assert caught.value.message == "Crossref answered with an error: bad filter value"
