"""PubTator3 BioC JSON: both shapes, span mapping onto PubMed passages, batching."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import httpx
import pytest
from hypothesis import given

from pipeline.errors import ParseError
from pipeline.http import HttpClient
from pipeline.records import Annotation, Passage, Record
from pipeline.settings import Settings
from pipeline.sources import pubmed, pubtator3
from tests.conftest import reference_files, requires_reference
from tests.pipeline.sources.fuzzing import (
    FUZZ_SETTINGS,
    REFERENCE_SETTINGS,
    check_fails_closed,
    mutated,
    seeds,
)
from tests.pipeline.sources.helpers import fixture, mock_client, wrapper_body

BARE = fixture("pubtator3", "bare-list.json")


def test_bare_list_and_outer_key_give_the_same_annotations() -> None:
    wrapped = json.dumps({"PubTator3": json.loads(BARE)})
    assert pubtator3.parse(BARE) == pubtator3.parse(wrapped)


def test_annotations_land_in_title_and_labelled_sections() -> None:
    result = pubtator3.parse(BARE)
    assert result.ids == ["pmid:99300001", "pmid:99300002"]
    assert result.records == []
    assert result.annotations["pmid:99300001"] == [
        Annotation(
            path="title",
            start=0,
            end=9,
            text="Zentravir",
            type="Chemical",
            identifier="MESH:C999001",
        ),
        Annotation(
            path="title",
            start=14,
            end=29,
            text="Farrow syndrome",
            type="Disease",
            identifier="MESH:D999002",
        ),
        Annotation(
            path="abstract.1",
            start=0,
            end=15,
            text="Farrow syndrome",
            type="Disease",
            identifier="MESH:D999002",
        ),
        Annotation(
            path="abstract.2",
            start=8,
            end=17,
            text="zentravir",
            type="Chemical",
            identifier="MESH:C999001",
        ),
        Annotation(
            path="abstract.2", start=24, end=32, text="children", type="Species", identifier=None
        ),
        Annotation(
            path="abstract.3",
            start=0,
            end=9,
            text="Zentravir",
            type="Chemical",
            identifier="MESH:C999001",
        ),
    ]
    # unstructured abstract: one section; a mention whose text does not match is dropped
    assert result.annotations["pmid:99300002"] == [
        Annotation(
            path="title",
            start=17,
            end=26,
            text="zentravir",
            type="Chemical",
            identifier="MESH:C999001",
        ),
        Annotation(
            path="abstract.1",
            start=0,
            end=9,
            text="Zentravir",
            type="Chemical",
            identifier="MESH:C999001",
        ),
    ]


def test_align_uses_the_pubmed_passages_when_known() -> None:
    record = Record(
        record_id="pmid:99300002",
        source="pubmed",
        title="Invented note on zentravir.",
        passages=[
            Passage(path="title", section="Title", text="Invented note on zentravir."),
            Passage(path="abstract.1", section="Abstract", text="Zentravir is invented."),
            Passage(path="abstract.2", section="NOTE", text="nothing here is real."),
        ],
    )
    aligned = pubtator3.align(BARE, {"pmid:99300002": record})
    assert [(a.path, a.start, a.text) for a in aligned["pmid:99300002"]] == [
        ("title", 17, "zentravir"),
        ("abstract.1", 0, "Zentravir"),
    ]


def test_not_bioc_is_refused() -> None:
    with pytest.raises(ParseError) as caught:
        pubtator3.parse('{"hitCount": 1}')
    assert caught.value.message == "expected PubTator3 BioC JSON (documents with passages)"


def test_fetch_annotations_batches_sorted_ids() -> None:
    seen: list[list[str]] = []

    def handler(request: httpx.Request) -> httpx.Response:
        seen.append(request.url.params["pmids"].split(","))
        return httpx.Response(200, json={"PubTator3": []})

    with mock_client(handler) as http:
        pubtator3.fetch_annotations(http, [str(99000250 - i) for i in range(250)])
    assert [len(batch) for batch in seen] == [100, 100, 50]
    assert seen[0][0] == "99000001" and seen[-1][-1] == "99000250"


@requires_reference
@pytest.mark.parametrize("path", reference_files("pubtator3"), ids=lambda p: p.name)
def test_reference_spans_match_the_pubmed_passages(path: Path) -> None:
    records: dict[str, Record] = {}
    for efetch in reference_files("pubmed"):
        body, url = wrapper_body(efetch)
        records.update({r.record_id: r for r in pubmed.parse(body, url=url).records})
    body, _ = wrapper_body(path)
    heuristic = pubtator3.parse(body).annotations
    aligned = pubtator3.align(body, records)
    for key, found in aligned.items():
        assert found, key
        assert found == heuristic[key]
        texts = {p.path: p.text for p in records[key].passages}
        for annotation in found:
            assert texts[annotation.path][annotation.start : annotation.end] == annotation.text


@pytest.mark.live
def test_live_pubtator3_smoke() -> None:
    with HttpClient(Settings.from_env()) as http:
        found = pubtator3.fetch_annotations(http, ["30831578"])
    assert found["pmid:30831578"]


# -- fuzzing and refusals ----------------------------------------------------------------------
PUBTATOR_SEEDS = seeds("pubtator3")


@FUZZ_SETTINGS
@given(mutated(PUBTATOR_SEEDS))
def test_fuzzed_pubtator3_bodies_give_annotations_or_a_parse_error(body: bytes) -> None:
    check_fails_closed(pubtator3.parse, body)
    check_fails_closed(pubtator3.align, body, records={})


@requires_reference
@REFERENCE_SETTINGS
@given(mutated(seeds("pubtator3", extra=reference_files("pubtator3"))))
def test_fuzzed_reference_pubtator3_bodies_give_annotations_or_a_parse_error(body: bytes) -> None:
    check_fails_closed(pubtator3.parse, body)


@pytest.mark.parametrize(
    ("document", "message"),
    [
        (
            {"pmid": 99000001, "passages": [3]},
            "pubtator3: the document.passages[0] must be an object, got a number",
        ),
        (
            {"pmid": 99000001, "passages": [{"offset": "xxxxx", "text": "t"}]},
            "pubtator3: the document.passages[0].offset must be an integer, got a string",
        ),
        (
            {
                "pmid": 99000001,
                "passages": [
                    {
                        "infons": {"type": "title"},
                        "annotations": [
                            {"text": "t", "locations": [{"offset": None, "length": -4}]}
                        ],
                    }
                ],
            },
            "pubtator3: the document.passages[0].annotations[0].locations[0].length must be a "
            "non-negative integer, got -4",
        ),
    ],
)
def test_a_pubtator3_field_of_the_wrong_type_is_a_parse_error_naming_its_path(
    document: dict[str, object], message: str
) -> None:
    with pytest.raises(ParseError) as caught:
        pubtator3.parse(json.dumps(document))
    assert caught.value.message == message


def test_a_pubtator3_document_without_a_valid_pmid_is_refused_not_fatal() -> None:
    body = json.dumps(
        [{"pmid": "Health Literacy", "passages": []}, {"pmid": 99000001, "passages": []}]
    )
    result = pubtator3.parse(body)
    assert result.ids == ["pmid:99000001"]
    assert [r.value for r in result.refused] == ["Health Literacy"]


def test_the_spaces_made_plain_are_every_space_python_knows_but_the_plain_one() -> None:
    everyone = {c for c in map(chr, range(sys.maxunicode + 1)) if c.isspace()}
    assert set(pubtator3.SPACES) == everyone - {" "}
