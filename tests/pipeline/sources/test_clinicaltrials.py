"""ClinicalTrials.gov API v2: parsing study JSON into nct: records, and harvesting."""

from __future__ import annotations

import copy
import json
import re
from collections.abc import Callable
from pathlib import Path
from typing import Any
from urllib.parse import parse_qs, urlsplit

import httpx
import pytest
from hypothesis import given

from audit.errors import InputError
from audit.folding import fold
from audit.quotes import quote_in_passage
from pipeline.errors import ParseError
from pipeline.http import HttpClient
from pipeline.records import Record
from pipeline.settings import Settings
from pipeline.sources import clinicaltrials
from pipeline.sources.clinicaltrials import FIELDS, fetch_records, parse, search_records
from pipeline.sources.history import lookup_trial_version
from tests.conftest import reference_files, requires_reference
from tests.pipeline.sources.fuzzing import (
    FUZZ_SETTINGS,
    REFERENCE_SETTINGS,
    check_fails_closed,
    mutated,
    seeds,
)
from tests.pipeline.sources.helpers import json_values

FIXTURES = Path(__file__).resolve().parents[2] / "fixtures" / "clinicaltrials"
PATH_GRAMMAR = re.compile(r"^trial\.[a-z0-9_]+\.[1-9][0-9]*$")


def wrapper(name: str) -> dict[str, Any]:
    return json.loads((FIXTURES / name).read_text(encoding="utf-8"))


def study(name: str) -> dict[str, Any]:
    return json.loads(wrapper(name)["body"])


def record_of(name: str) -> Record:
    w = wrapper(name)
    result = parse(w["body"], url=w["url"])
    assert len(result.records) == 1
    return result.records[0]


def text_at(record: Record, path: str) -> str:
    return next(p.text for p in record.passages if p.path == path)


# -- records -------------------------------------------------------------------------------


def test_trial_record_identity_version_and_passage_paths() -> None:
    record = record_of("trial-v2025-01-15.json")
    assert record.record_id == "nct:NCT99000001"
    assert record.source == "clinicaltrials"
    assert record.version == "2025-01-15"
    assert record.version_date == "2025-01-15"
    assert record.content_type == "trial"
    assert record.status == "RECRUITING"
    assert record.title == "Zentravir for Children With Farrow Syndrome (ZEN-FARROW-1)"
    assert record.year == 2024
    assert record.metadata["version_basis"] == "last_update_post_date"
    assert record.metadata["lead_sponsor"] == "Farrow Research Consortium (fictional)"
    assert [p.path for p in record.passages] == [
        "trial.brief_title.1",
        "trial.official_title.1",
        "trial.brief_summary.1",
        "trial.detailed_description.1",
        "trial.detailed_description.2",
        "trial.conditions.1",
        "trial.interventions.1",
        "trial.interventions.2",
        "trial.arms.1",
        "trial.arms.2",
        "trial.eligibility_inclusion.1",
        "trial.eligibility_inclusion.2",
        "trial.eligibility_inclusion.3",
        "trial.eligibility_exclusion.1",
        "trial.eligibility_exclusion.2",
        "trial.eligibility_exclusion.3",
        "trial.primary_outcome.1",
        "trial.secondary_outcome.1",
    ]


def test_passage_texts_are_readable_and_unescaped() -> None:
    record = record_of("trial-v2025-01-15.json")
    assert text_at(record, "trial.conditions.1") == "Farrow Syndrome"
    assert text_at(record, "trial.interventions.1") == (
        "Drug: Zentravir. Zentravir 5 mg/kg orally once daily."
    )
    assert text_at(record, "trial.arms.2") == (
        "Placebo (Placebo comparator): Matching placebo tablets orally once daily. "
        "Interventions: Drug: Placebo."
    )
    # the Markdown escape "\<60" upstream reads "<60" on the website and in the passage
    assert text_at(record, "trial.eligibility_exclusion.2") == (
        "eGFR <60 mL/min/1.73 m2 at screening"
    )
    assert text_at(record, "trial.primary_outcome.1") == (
        "Number of Farrow flares per participant. Time frame: 24 weeks. "
        "Flares are confirmed by a blinded adjudication committee."
    )


def test_withdrawn_trial_keeps_status_and_reason() -> None:
    record = record_of("trial-withdrawn.json")
    assert record.status == "WITHDRAWN"
    assert record.metadata["overall_status"] == "WITHDRAWN"
    assert record.metadata["why_stopped"] == (
        "Sponsor decision before enrolment; no participants were enrolled."
    )
    assert record.metadata["enrollment"] == 0


def test_posted_results_are_written_as_sentences() -> None:
    record = record_of("trial-results.json")
    assert record.status == "COMPLETED"
    assert record.metadata["has_results"] is True
    assert text_at(record, "trial.results.1") == (
        "Primary outcome: Change from baseline in the Farrow Symptom Score at week 12. "
        "The score ranges from 0 to 40; higher is worse. Time frame: Baseline and week 12. "
        "Analysis population: All randomized participants. "
        "Participants analysed: Zentravir 60; Placebo 60. "
        "Mean: Zentravir -6.2 score on a scale (SD 3.1); Placebo -2.4 score on a scale (SD 3.4). "
        "Statistical analysis (Zentravir vs Placebo): Mean Difference (Final Values) -3.8 "
        "(95% CI -5.0 to -2.6), p<0.001, ANCOVA, superiority test."
    )
    assert text_at(record, "trial.results.2") == (
        "Secondary outcome: Number of participants with a serious adverse event. "
        "Time frame: 12 weeks. Participants analysed: Zentravir 60; Placebo 60. "
        "Count of participants: Zentravir 2 Participants; Placebo 3 Participants."
    )


def test_results_with_categories_ranges_and_unposted_measures() -> None:
    body = study("trial-results.json")
    measure = body["resultsSection"]["outcomeMeasuresModule"]["outcomeMeasures"][0]
    measure.update(paramType="MEDIAN", dispersionType="INTER_QUARTILE_RANGE")
    measure["classes"] = [
        {
            "title": "Week 12",
            "categories": [
                {
                    "title": "Per protocol",
                    "measurements": [
                        {"groupId": "OG000", "value": "-6", "lowerLimit": "-8", "upperLimit": "-4"},
                        {"groupId": "OG001", "value": "NA", "comment": "Not estimable"},
                    ],
                }
            ],
        }
    ]
    measure["analyses"] = []
    unposted = {"type": "OTHER_PRE_SPECIFIED", "title": "Taste", "reportingStatus": "NOT_POSTED"}
    body["resultsSection"]["outcomeMeasuresModule"]["outcomeMeasures"] = [measure, unposted]
    record = parse(json.dumps(body)).records[0]
    assert (
        "Median (Week 12 — Per protocol): Zentravir -6 score on a scale (IQR -8 to -4); "
        "Placebo NA score on a scale [Not estimable]."
    ) in text_at(record, "trial.results.1")
    assert text_at(record, "trial.results.2") == (
        "Other pre specified outcome: Taste. Results not posted."
    )


def test_eligibility_without_headers_and_with_nested_items() -> None:
    body = study("trial-withdrawn.json")
    body["protocolSection"]["eligibilityModule"]["eligibilityCriteria"] = (
        "Adults with Farrow syndrome.\n\n**Inclusion Criteria:**\n\n1. Age ≥18 years\n"
        "2. One of:\n\n   * a flare in the past year\n   * a positive Farrow test\n\n"
        "EXCLUSION CRITERIA: pregnancy"
    )
    record = parse(json.dumps(body)).records[0]
    assert text_at(record, "trial.eligibility.1") == "Adults with Farrow syndrome."
    assert text_at(record, "trial.eligibility_inclusion.1") == "Age ≥18 years"
    assert text_at(record, "trial.eligibility_inclusion.2") == (
        "One of: * a flare in the past year * a positive Farrow test"
    )
    assert text_at(record, "trial.eligibility_exclusion.1") == "pregnancy"


def test_long_text_is_chunked_with_consecutive_numbers() -> None:
    body = study("trial-withdrawn.json")
    sentence = "Zentravir was planned for adults with Farrow syndrome in this withdrawn study. "
    body["protocolSection"]["descriptionModule"]["briefSummary"] = sentence * 40
    record = parse(json.dumps(body)).records[0]
    chunks = [p for p in record.passages if p.path.startswith("trial.brief_summary.")]
    assert [p.path for p in chunks] == [f"trial.brief_summary.{n}" for n in (1, 2, 3)]
    assert all(len(p.text) <= 1200 for p in chunks)
    assert " ".join(p.text for p in chunks) == (sentence * 40).strip()


def test_same_version_parsed_twice_gives_identical_paths_and_hash() -> None:
    first, second = record_of("trial-results.json"), record_of("trial-results.json")
    assert [p.path for p in first.passages] == [p.path for p in second.passages]
    assert first.content_hash() == second.content_hash()


def test_the_old_version_still_verifies_a_quote_after_the_new_one_is_parsed() -> None:
    old = record_of("trial-v2025-01-15.json")
    new = record_of("trial-v2025-06-02.json")
    assert (old.version, new.version) == ("2025-01-15", "2025-06-02")
    assert old.record_id == new.record_id
    quote = "Participants take zentravir or placebo once daily for 24 weeks."
    path = "trial.brief_summary.1"
    assert quote_in_passage(quote, fold(text_at(old, path)))
    assert not quote_in_passage(quote, fold(text_at(new, path)))
    assert text_at(old, "trial.primary_outcome.1") != text_at(new, "trial.primary_outcome.1")
    assert old.content_hash() != new.content_hash()


@pytest.mark.parametrize(
    ("drop", "version", "basis"),
    [
        (("lastUpdatePostDateStruct",), "2025-01-15", "last_update_submit_date"),
        (("lastUpdatePostDateStruct", "lastUpdateSubmitDate"), "2024-02-20", "first_post_date"),
    ],
)
def test_version_falls_back_to_other_dates(drop: tuple[str, ...], version: str, basis: str) -> None:
    body = study("trial-v2025-01-15.json")
    for key in drop:
        del body["protocolSection"]["statusModule"][key]
    record = parse(json.dumps(body)).records[0]
    assert (record.version, record.metadata["version_basis"]) == (version, basis)


def test_no_date_at_all_gives_no_version() -> None:
    body = {"protocolSection": {"identificationModule": {"nctId": "NCT99000009"}}}
    record = parse(json.dumps(body)).records[0]
    assert record.version is None
    assert "version_basis" not in record.metadata
    assert record.title == "NCT99000009"
    assert record.passages == []


def test_field_projection_keeps_what_exists_and_says_so() -> None:
    projected = {
        "totalCount": 1,
        "studies": [
            {
                "protocolSection": {
                    "identificationModule": {"nctId": "NCT99000001", "briefTitle": "Zentravir"},
                    "statusModule": {"lastUpdatePostDateStruct": {"date": "2025-01-15"}},
                    "armsInterventionsModule": {"interventions": [{"name": "Zentravir"}]},
                }
            }
        ],
    }
    url = "https://clinicaltrials.gov/api/v2/studies?query.term=zentravir&fields=NCTId,BriefTitle"
    result = parse(json.dumps(projected), url=url)
    record = result.records[0]
    assert result.count == 1
    assert result.next is None
    assert [(p.path, p.text) for p in record.passages] == [
        ("trial.brief_title.1", "Zentravir"),
        ("trial.interventions.1", "Zentravir."),
    ]
    assert record.metadata["projection"] == "NCTId,BriefTitle"


def test_list_body_gives_ids_and_next_page_token() -> None:
    body = {
        "studies": [study("trial-withdrawn.json"), study("trial-results.json")],
        "nextPageToken": "tok2",
    }
    result = parse(json.dumps(body).encode("utf-8"))
    assert result.source == "clinicaltrials"
    assert result.ids == ["NCT99000002", "NCT99000003"]
    assert result.next == "tok2"


# -- refused formats -------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("body", "message"),
    [
        (
            '{"FullStudiesResponse": {"APIVrs": "1.01.05", "FullStudies": []}}',
            "this is a legacy ClinicalTrials.gov classic API (v1) JSON response "
            "(FullStudiesResponse), retired in 2024; citeseal reads API v2 JSON",
        ),
        (
            '<?xml version="1.0"?>\n<clinical_study rank="1"><id_info/></clinical_study>',
            "this is a classic ClinicalTrials.gov XML record (<clinical_study>), retired in "
            "2024; citeseal reads API v2 JSON",
        ),
        (
            "<PubmedArticleSet></PubmedArticleSet>",
            "expected ClinicalTrials.gov API v2 JSON, got XML (<PubmedArticleSet>)",
        ),
        (
            "studies: none",
            "expected ClinicalTrials.gov API v2 JSON, got text that is not JSON "
            "(line 1, column 1: Expecting value)",
        ),
        ("[1, 2]", "expected a ClinicalTrials.gov API v2 JSON object, got a JSON list"),
        (
            '{"resultList": {}, "hitCount": 0}',
            "expected a ClinicalTrials.gov API v2 study list ('studies') or study "
            "('protocolSection'), got an object with keys: hitCount, resultList",
        ),
    ],
)
def test_unusable_bodies_are_refused_with_a_clear_error(body: str, message: str) -> None:
    with pytest.raises(ParseError) as info:
        parse(body)
    assert str(info.value) == message


def test_legacy_formats_point_to_api_v2() -> None:
    with pytest.raises(ParseError) as info:
        parse('{"FullStudy": {"Study": {}}}')
    assert info.value.advice == (
        "fetch the study from API v2: https://clinicaltrials.gov/api/v2/studies/NCT…"
    )


# -- harvest ---------------------------------------------------------------------------------


def client_for(handler: Callable[[httpx.Request], httpx.Response]) -> HttpClient:
    return HttpClient(Settings(), transport=httpx.MockTransport(handler), sleep=lambda _: None)


def studies_response(studies: list[dict[str, Any]], token: str | None = None) -> httpx.Response:
    body: dict[str, Any] = {"studies": studies}
    if token:
        body["nextPageToken"] = token
    return httpx.Response(200, json=body)


def numbered(n: int) -> dict[str, Any]:
    body = copy.deepcopy(study("trial-withdrawn.json"))
    body["protocolSection"]["identificationModule"]["nctId"] = f"NCT990000{n:02d}"
    return body


def test_search_follows_page_tokens_with_the_same_query() -> None:
    seen: list[dict[str, str]] = []

    def handler(request: httpx.Request) -> httpx.Response:
        params = dict(request.url.params)
        seen.append(params)
        if "pageToken" not in params:
            return studies_response([numbered(1), numbered(2)], "p2")
        return studies_response([numbered(3), numbered(4)], "p3")

    with client_for(handler) as client:
        records = search_records(
            client, cond="Farrow syndrome", filters={"overallStatus": "WITHDRAWN"}, limit=3
        )
    assert [r.record_id for r in records] == [
        "nct:NCT99000001",
        "nct:NCT99000002",
        "nct:NCT99000003",
    ]
    assert seen[0] == {
        "query.cond": "Farrow syndrome",
        "filter.overallStatus": "WITHDRAWN",
        "fields": FIELDS,
        "pageSize": "3",
        "format": "json",
    }
    assert seen[1] == {**seen[0], "pageToken": "p2"}
    assert len(seen) == 2  # the limit is reached: p3 is never asked for


def test_search_stops_on_the_last_page() -> None:
    calls: list[str] = []

    def handler(request: httpx.Request) -> httpx.Response:
        calls.append(str(request.url))
        return studies_response([numbered(1)])

    with client_for(handler) as client:
        records = search_records(client, term="zentravir", limit=50)
    assert [r.record_id for r in records] == ["nct:NCT99000001"]
    assert len(calls) == 1


def test_search_needs_a_query() -> None:
    with client_for(lambda r: httpx.Response(500)) as client, pytest.raises(InputError) as info:
        search_records(client, limit=5)
    assert str(info.value) == (
        "a ClinicalTrials.gov search needs at least one of term, cond, intr or filters"
    )


def test_fetch_batches_sorted_unique_ids_and_skips_unknown_ones() -> None:
    seen: list[dict[str, str]] = []

    def handler(request: httpx.Request) -> httpx.Response:
        seen.append(dict(request.url.params))
        # the real API returns a nextPageToken even when every id was found
        return studies_response([numbered(2), numbered(1)], "unused")

    with client_for(handler) as client:
        records = fetch_records(client, ["NCT99000002", "nct:NCT99000001", "NCT99000002"])
    assert [r.record_id for r in records] == ["nct:NCT99000002", "nct:NCT99000001"]
    assert seen == [
        {
            "filter.ids": "NCT99000001,NCT99000002",
            "fields": FIELDS,
            "pageSize": "2",
            "format": "json",
        }
    ]

    def missing(request: httpx.Request) -> httpx.Response:
        return studies_response([numbered(1)])

    with client_for(missing) as client:
        assert [r.record_id for r in fetch_records(client, ["NCT99000001", "NCT99000077"])] == [
            "nct:NCT99000001"
        ]


def test_fetch_refuses_a_malformed_id_before_any_request() -> None:
    with client_for(lambda r: httpx.Response(500)) as client, pytest.raises(InputError) as info:
        fetch_records(client, ["NCT123"])
    assert str(info.value) == "not an NCT id: 'NCT123' (expected NCT followed by 8 digits)"


def test_a_trial_version_lookup_is_off_by_default_and_asks_nothing() -> None:
    def handler(request: httpx.Request) -> httpx.Response:
        raise AssertionError(f"unexpected request {request.url}")

    with client_for(handler) as client:
        lookup = lookup_trial_version(client, "NCT99000001", "2025-01-15")
    assert lookup.outcome == "disabled"
    assert lookup.record is None


# -- conformance over the recorded reference responses ---------------------------------------------


@requires_reference
@pytest.mark.parametrize("path", reference_files("clinicaltrials"), ids=lambda p: p.name)
def test_reference_responses_conform(path: Path) -> None:
    w = json.loads(path.read_text(encoding="utf-8"))
    result = parse(w["body"], url=w["url"])
    studies = json.loads(w["body"])["studies"]
    assert len(result.records) == len(studies) > 0
    for record in result.records:
        assert re.fullmatch(r"\d{4}-\d{2}-\d{2}", record.version or "")
        assert record.status
        # Field-projected lists (fields=NCTId,BriefTitle,...) hold no summary, eligibility or
        # outcomes; what they do hold (titles, conditions, interventions) still gives ≥ 3
        # passages, and metadata.projection tells a reader the record is partial.
        assert len(record.passages) >= 3
        assert all(p.text.strip() for p in record.passages)
        assert all(PATH_GRAMMAR.match(p.path) for p in record.passages)
        assert len({p.path for p in record.passages}) == len(record.passages)
        assert record.metadata.get("projection") == parse_qs(urlsplit(w["url"]).query)["fields"][0]


_JSON = json_values(
    [
        "studies",
        "protocolSection",
        "identificationModule",
        "nctId",
        "statusModule",
        "resultsSection",
        "outcomeMeasuresModule",
        "outcomeMeasures",
        "classes",
        "categories",
        "measurements",
        "eligibilityModule",
        "eligibilityCriteria",
        "x",
    ]
)


@given(_JSON)
def test_any_json_gives_records_or_a_parse_error(data: object) -> None:
    try:
        result = parse(json.dumps(data))
    except ParseError:
        return
    assert all(r.record_id.startswith("nct:NCT") for r in result.records)


# -- fuzzing and refusals ----------------------------------------------------------------------
CTGOV_SEEDS = seeds("clinicaltrials")


@FUZZ_SETTINGS
@given(mutated(CTGOV_SEEDS))
def test_fuzzed_clinicaltrials_bodies_give_records_or_a_parse_error(body: bytes) -> None:
    check_fails_closed(clinicaltrials.parse, body)


@requires_reference
@REFERENCE_SETTINGS
@given(mutated(seeds("clinicaltrials", extra=reference_files("clinicaltrials"))))
def test_fuzzed_reference_clinicaltrials_bodies_give_records_or_a_parse_error(
    body: bytes,
) -> None:
    check_fails_closed(clinicaltrials.parse, body)


def test_a_study_without_a_valid_nct_id_is_refused_and_the_others_are_kept() -> None:
    wrapper = json.loads((FIXTURES / "trial-v2025-06-02.json").read_text(encoding="utf-8"))
    good = json.loads(wrapper["body"])
    bad = copy.deepcopy(good)
    bad["protocolSection"]["identificationModule"]["nctId"] = "NCT123"
    result = parse(json.dumps({"studies": [bad, good]}))
    assert [r.record_id for r in result.records] == ["nct:NCT99000001"]
    assert [(r.reason, r.value) for r in result.refused] == [
        ("nct id must be NCT followed by 8 digits", "NCT123")
    ]


def test_a_study_nested_100000_deep_is_a_parse_error_not_a_recursion_error() -> None:
    body = '{"studies": ' + "[" * 100_000 + "]" * 100_000 + "}"
    with pytest.raises(ParseError) as caught:
        parse(body)
    assert caught.value.message == (
        "expected ClinicalTrials.gov API v2 JSON but the JSON is nested deeper than 64 levels"
    )


def test_upstream_keys_in_a_clinicaltrials_error_are_quoted_on_one_line() -> None:
    with pytest.raises(ParseError) as caught:
        parse('{"bad\\nkey": 1}')
    assert caught.value.message == (
        "expected a ClinicalTrials.gov API v2 study list ('studies') or study "
        "('protocolSection'), got an object with keys: bad key"
    )
