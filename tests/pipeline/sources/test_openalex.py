"""OpenAlex works: the parser (fields, flags, errors), the DOI batch and the title search."""

from __future__ import annotations

import httpx
import pytest
from hypothesis import given

from pipeline.errors import ParseError, TerminalHarvestError
from pipeline.records import Flags, Passage
from pipeline.sources import openalex
from pipeline.sources.spec_types import DOI
from tests.pipeline.sources.fuzzing import FUZZ_SETTINGS, check_fails_closed, mutated, seeds
from tests.pipeline.sources.helpers import assert_conformant, fixture, mock_client


def test_a_work_list_gives_one_openalex_record_per_work_with_its_ids_and_flags() -> None:
    result = openalex.parse(fixture("openalex", "works-doi.json"))
    first = result.records[0]
    assert result.count == 2 and result.ids == ["openalex:W9900000001", "openalex:W9900000002"]
    assert first.record_id == "openalex:W9900000001"
    assert (first.doi, first.pmid, first.pmcid) == ("10.5555/oa.0001", "99200001", "PMC99200001")
    assert first.title == "Synthetic ketone bodies and cognition in ageing rats"
    assert (first.year, first.journal) == (2098, "Journal of Invented Neuroscience")
    assert first.authors == ["Ana Núñez", "Piet van Dijk"]
    assert first.flags == Flags(retracted=None, expression_of_concern=None, preprint=False)
    assert first.passages[1] == Passage(
        path="abstract.1", section="Abstract", text="Ketone bodies improved recall."
    )
    assert_conformant(result)


def test_is_retracted_true_flags_a_retraction_and_type_preprint_a_preprint() -> None:
    second = openalex.parse(fixture("openalex", "works-doi.json")).records[1]
    assert second.doi == "10.5555/oa.0002"  # lower case, as every DOI is held
    assert second.flags == Flags(retracted=True, expression_of_concern=None, preprint=True)
    assert second.authors == ["Roe, R."]  # the raw name when OpenAlex has no display name
    assert second.journal is None and second.content_type == "preprint"
    assert second.title == "A retracted synthetic trial of nothing at all"  # markup dropped


def test_one_work_object_is_one_record() -> None:
    body = b'{"id": "https://openalex.org/W99000001", "title": "One", "type": "article"}'
    [record] = openalex.parse(body).records
    assert record.record_id == "openalex:W99000001" and record.doi is None


@pytest.mark.parametrize(
    ("body", "message"),
    [
        (
            fixture("openalex", "error.json"),
            "OpenAlex answered with an error: doi is not a valid filter value: 10.5555/x|",
        ),
        (
            fixture("openalex", "bad-id.json"),
            "openalex: results[0].id must be an OpenAlex work id (…/W + digits), got a string",
        ),
        (b"[]", "expected OpenAlex works JSON (an object), got a list"),
        (
            b'{"meta": {}}',
            "expected an OpenAlex work list ('results') or one work ('id'), got neither",
        ),
    ],
)
def test_a_body_of_the_wrong_shape_is_one_parse_error(body: bytes, message: str) -> None:
    with pytest.raises(ParseError) as raised:
        openalex.parse(body)
    assert raised.value.message == message


def test_dois_are_asked_in_one_or_filter_and_a_title_by_search() -> None:
    seen: list[httpx.URL] = []

    def answer(request: httpx.Request) -> httpx.Response:
        seen.append(request.url)
        return httpx.Response(200, content=fixture("openalex", "works-doi.json"))

    with mock_client(answer) as client:
        records = openalex.fetch_works(client, ["10.5555/OA.0001", "10.5555/oa.0002"])
        assert [r.record_id for r in records] == ["openalex:W9900000001", "openalex:W9900000002"]
        assert len(openalex.search_title(client, "Synthetic ketone bodies", 1)) == 1
    assert seen[0].params["filter"] == "doi:10.5555/oa.0001|10.5555/oa.0002"
    assert seen[0].params["per-page"] == "2"
    assert (seen[1].params["search"], seen[1].params["per-page"]) == (
        "Synthetic ketone bodies",
        "1",
    )


def test_a_batch_over_the_cap_or_holding_a_separator_is_refused_before_any_request() -> None:
    with (
        mock_client(lambda request: httpx.Response(500)) as client,
        pytest.raises(TerminalHarvestError) as raised,
    ):
        openalex.fetch_works(client, ["10.5555/a|b"])
    assert raised.value.message == (
        "cannot ask OpenAlex for 1 DOIs in one filter: at most 50, none holding a '|' or ','"
    )
    assert DOI.match("10.5555/a|b")  # the spec grammar allows it: the fetch is what refuses


OPENALEX_SEEDS = seeds("openalex")


@FUZZ_SETTINGS
@given(mutated(OPENALEX_SEEDS))
def test_fuzzed_openalex_bodies_give_records_or_a_parse_error(body: bytes) -> None:
    check_fails_closed(openalex.parse, body)
