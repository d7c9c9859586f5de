"""openFDA drug labels: parsing into setid: records, chunked sections, and harvesting."""

from __future__ import annotations

import copy
import json
import re
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

import httpx
import pytest
from hypothesis import given

from audit.errors import InputError
from audit.folding import fold
from audit.quotes import quote_in_passage
from pipeline.errors import ParseError, TerminalHarvestError
from pipeline.http import HttpClient
from pipeline.records import Record, Refusal
from pipeline.settings import Settings
from pipeline.sources import openfda
from pipeline.sources.history import lookup_label_version
from pipeline.sources.openfda import fetch_records, parse, search_plan, search_records
from tests.conftest import ROOT, reference_files, requires_reference
from tests.pipeline.sources.fuzzing import (
    FUZZ_SETTINGS,
    REFERENCE_SETTINGS,
    check_fails_closed,
    mutated,
    seeds,
)
from tests.pipeline.sources.helpers import json_values

FIXTURES = Path(__file__).resolve().parents[2] / "fixtures" / "openfda"
SETID = "5eed0001-0000-4000-8000-000000000001"
CLI = (sys.executable, "-c", "from pipeline.cli import main; main()")
PATH_GRAMMAR = re.compile(r"^label\.[a-z0-9_]+\.[1-9][0-9]*$")


def wrapper(name: str) -> dict[str, Any]:
    return json.loads((FIXTURES / name).read_text(encoding="utf-8"))


def label(name: str = "label-v3.json") -> dict[str, Any]:
    return json.loads(wrapper(name)["body"])["results"][0]


def record_of(name: str) -> Record:
    result = parse(wrapper(name)["body"])
    assert len(result.records) == 1
    return result.records[0]


def one(label_json: dict[str, Any]) -> Record:
    return parse(json.dumps({"results": [label_json]})).records[0]


def text_at(record: Record, path: str) -> str:
    return next(p.text for p in record.passages if p.path == path)


def test_label_record_identity_version_and_sections() -> None:
    record = record_of("label-v3.json")
    assert record.record_id == f"setid:{SETID}"
    assert record.source == "openfda"
    assert record.version == "3"
    assert record.version_date == "2024-11-05"
    assert record.content_type == "drug_label"
    assert record.title == "ZENTRAVIR"
    assert record.metadata["effective_time"] == "20241105"
    assert record.metadata["spl_id"] == "5eed0001-0000-4000-8000-0000000000a3"
    assert record.metadata["brand_name"] == ["ZENTRAVIR"]
    paths = [p.path for p in record.passages]
    assert paths[:3] == [
        "label.boxed_warning.1",
        "label.indications_and_usage.1",
        "label.dosage_and_administration.1",
    ]
    assert "label.package_label_principal_display_panel.1" in paths
    # tables, the ingredient word list and identifiers never become passages
    assert not [p for p in paths if "table" in p or "spl_product" in p or "openfda" in p]
    assert record.passages[0].section == "Boxed warning"
    assert record.passages[0].text.startswith("WARNING: HEPATOTOXICITY • Zentravir can cause")


def test_long_sections_are_chunked_at_sentences_with_stable_paths() -> None:
    body = label()
    sentence = "Zentravir raised liver enzymes in 2.1% of patients in trials of Farrow syndrome. "
    body["warnings_and_cautions"] = [sentence * 25, "5.2 Photosensitivity Avoid sunlight."]
    record = one(body)
    chunks = [p for p in record.passages if p.path.startswith("label.warnings_and_cautions.")]
    assert [p.path for p in chunks] == [f"label.warnings_and_cautions.{n}" for n in (1, 2, 3)]
    assert all(len(p.text) <= 1200 and p.text.endswith(".") for p in chunks)
    assert " ".join(p.text for p in chunks[:2]) == (sentence * 25).strip()
    assert chunks[2].text == "5.2 Photosensitivity Avoid sunlight."
    assert [p.path for p in one(body).passages] == [p.path for p in record.passages]


def test_unknown_sections_are_kept_after_the_known_ones() -> None:
    body = label()
    body["zz_new_section"] = ["A section openFDA adds later."]
    body["aa_other"] = ["Another one."]
    body["empty_section"] = [""]
    paths = [p.path for p in one(body).passages]
    assert paths[-2:] == ["label.aa_other.1", "label.zz_new_section.1"]
    assert "label.empty_section.1" not in paths


@pytest.mark.parametrize(
    ("harmonised", "title"),
    [
        (
            {"brand_name": ["Zentrava"], "generic_name": ["zentravir sodium"]},
            "Zentrava (zentravir sodium)",
        ),
        ({"brand_name": ["ZENTRAVIR"], "generic_name": ["zentravir"]}, "ZENTRAVIR"),
        ({"generic_name": ["zentravir"]}, "zentravir"),
        (None, f"Drug label {SETID}"),
    ],
)
def test_title_from_brand_and_generic_names(harmonised: dict[str, Any] | None, title: str) -> None:
    body = label()
    if harmonised is None:
        del body["openfda"]
    else:
        body["openfda"] = harmonised
    assert one(body).title == title


def test_no_match_404_body_is_an_empty_result() -> None:
    w = wrapper("no-match.json")
    assert w["status"] == 404
    result = parse(w["body"], url=w["url"])
    assert result.records == []
    assert result.count == 0


@pytest.mark.parametrize(
    ("body", "message"),
    [
        (
            '{"error": {"code": "BAD_REQUEST", "message": "Invalid search"}}',
            "openFDA answered with an error: BAD_REQUEST: Invalid search",
        ),
        (
            "<html>",
            "expected openFDA drug label JSON, got text that is not JSON "
            "(line 1, column 1: Expecting value)",
        ),
        ('["a"]', "expected an openFDA JSON object, got a JSON list"),
        (
            '{"meta": {}, "studies": []}',
            "expected an openFDA drug label response with 'results', got keys: meta, studies",
        ),
    ],
)
def test_unusable_bodies_are_refused(body: str, message: str) -> None:
    with pytest.raises(ParseError) as info:
        parse(body)
    assert str(info.value) == message


def test_same_version_parsed_twice_gives_identical_paths_and_hash() -> None:
    first, second = record_of("label-v3.json"), record_of("label-v3.json")
    assert [p.path for p in first.passages] == [p.path for p in second.passages]
    assert first.content_hash() == second.content_hash()


def test_the_old_label_still_verifies_a_quote_after_the_new_one_is_parsed() -> None:
    old, new = record_of("label-v3.json"), record_of("label-v4.json")
    assert (old.version, new.version) == ("3", "4")
    assert new.version_date == "2025-05-20"
    quote = "Zentravir can cause serious liver injury"
    assert quote_in_passage(quote, fold(text_at(old, "label.boxed_warning.1")))
    assert not quote_in_passage(quote, fold(text_at(new, "label.boxed_warning.1")))
    # unchanged sections keep their text and path across versions
    assert text_at(old, "label.contraindications.1") == text_at(new, "label.contraindications.1")


# -- harvest ---------------------------------------------------------------------------------


def client_for(handler: Callable[[httpx.Request], httpx.Response]) -> HttpClient:
    return HttpClient(Settings(), transport=httpx.MockTransport(handler), sleep=lambda _: None)


def labels_response(n: int, total: int, headers: dict[str, str] | None = None) -> httpx.Response:
    results = []
    for i in range(n):
        item = copy.deepcopy(label())
        item["set_id"] = f"5eed0001-0000-4000-8000-{i:012d}"
        results.append(item)
    meta = {"results": {"skip": 0, "limit": n, "total": total}}
    return httpx.Response(200, json={"meta": meta, "results": results}, headers=headers)


NO_MATCH = {"error": {"code": "NOT_FOUND", "message": "No matches found!"}}


def test_search_pages_with_skip_and_limit(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(openfda, "MAX_LIMIT", 2)
    seen: list[dict[str, str]] = []

    def handler(request: httpx.Request) -> httpx.Response:
        seen.append(dict(request.url.params))
        return labels_response(int(request.url.params["limit"]), total=9)

    with client_for(handler) as client:
        records = search_records(client, "openfda.brand_name:zentravir", limit=5)
    assert len(records) == 5
    assert [(p["skip"], p["limit"]) for p in seen] == [("0", "2"), ("2", "2"), ("4", "1")]
    assert {p["sort"] for p in seen} == {"effective_time:desc"}


def test_search_beyond_the_skip_cap_uses_search_after(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(openfda, "MAX_LIMIT", 2)
    monkeypatch.setattr(openfda, "MAX_SKIP", 1)
    assert search_plan(3) == "skip"
    assert search_plan(4) == "search_after"
    seen: list[str] = []

    def handler(request: httpx.Request) -> httpx.Response:
        seen.append(str(request.url))
        if "search_after" not in request.url.params:
            nxt = "https://api.fda.gov/drug/label.json?search=x&limit=2&sort=effective_time:desc&search_after=0%3Dabc"
            return labels_response(2, total=10, headers={"Link": f'<{nxt}>; rel="Next"'})
        return labels_response(2, total=10)  # no Link header: the last page

    with client_for(handler) as client:
        records = search_records(client, "x", limit=6)
    assert len(records) == 4
    assert len(seen) == 2
    assert "skip=" not in seen[0]
    assert "search_after=0%3Dabc" in seen[1]


def test_search_without_matches_is_empty() -> None:
    with client_for(lambda r: httpx.Response(404, json=NO_MATCH)) as client:
        assert search_records(client, 'openfda.brand_name:"nothing"', limit=10) == []


def test_a_404_that_is_not_a_no_match_is_an_error() -> None:
    answer = httpx.Response(404, json={"error": {"code": "X"}})
    with client_for(lambda r: answer) as client, pytest.raises(TerminalHarvestError) as info:
        search_records(client, "x", limit=1)
    assert str(info.value) == (
        "GET https://api.fda.gov/drug/label.json answered HTTP 404 without openFDA's no-match body"
    )


def test_search_needs_an_expression() -> None:
    with client_for(lambda r: httpx.Response(500)) as client, pytest.raises(InputError) as info:
        search_records(client, "  ", limit=1)
    assert str(info.value) == (
        "an openFDA search needs a search expression, e.g. openfda.brand_name:zentravir"
    )


def test_fetch_ors_sorted_unique_set_ids_and_skips_missing_ones() -> None:
    seen: list[dict[str, str]] = []
    other = "5eed0001-0000-4000-8000-000000000000"

    def handler(request: httpx.Request) -> httpx.Response:
        seen.append(dict(request.url.params))
        return labels_response(1, total=1)  # only set id ...000000000000 exists

    with client_for(handler) as client:
        records = fetch_records(client, [SETID, f"setid:{other.upper()}", SETID])
    assert [r.record_id for r in records] == [f"setid:{other}"]
    assert seen == [{"search": f'set_id:"{other}" OR set_id:"{SETID}"', "limit": "2"}]


def test_fetch_refuses_a_malformed_set_id() -> None:
    with client_for(lambda r: httpx.Response(500)) as client, pytest.raises(InputError) as info:
        fetch_records(client, ["warfarin"])
    assert str(info.value) == "not an openFDA set id: 'warfarin' (expected a lower-case UUID)"


def test_a_label_version_lookup_is_off_by_default_and_asks_nothing() -> None:
    def handler(request: httpx.Request) -> httpx.Response:
        raise AssertionError(f"unexpected request {request.url}")

    with client_for(handler) as client:
        lookup = lookup_label_version(client, SETID, "3")
    assert lookup.outcome == "disabled"
    assert lookup.record is None


# -- conformance ---------------------------------------------------------------------------------


@requires_reference
@pytest.mark.parametrize("path", reference_files("openfda"), ids=lambda p: p.name)
def test_reference_responses_conform(path: Path) -> None:
    w = json.loads(path.read_text(encoding="utf-8"))
    result = parse(w["body"], url=w["url"])
    if w["status"] == 404:
        assert result.records == []
        return
    assert len(result.records) == len(json.loads(w["body"])["results"]) > 0
    for record in result.records:
        assert record.version
        assert re.fullmatch(r"\d{4}-\d{2}-\d{2}", record.version_date or "")
        assert len(record.passages) >= 3
        assert all(p.text.strip() and len(p.text) <= 1200 for p in record.passages)
        assert all(PATH_GRAMMAR.match(p.path) for p in record.passages)
        assert len({p.path for p in record.passages}) == len(record.passages)


@requires_reference
def test_cli_parse_of_the_no_match_404_exits_0() -> None:
    no_match = next((p for p in reference_files("openfda") if "zzzqqq" in p.name), None)
    assert no_match is not None
    done = subprocess.run(
        [*CLI, "parse", "openfda", str(no_match), "--json"],
        capture_output=True,
        text=True,
        cwd=ROOT,
        timeout=60,
        check=False,
    )
    if "No such command" in done.stderr:
        pytest.skip("citeseal parse is not built yet")
    assert done.returncode == 0, done.stderr
    assert json.loads(done.stdout)["records"] == []


_JSON = json_values(
    [
        "results",
        "error",
        "code",
        "meta",
        "set_id",
        "version",
        "effective_time",
        "openfda",
        "brand_name",
        "boxed_warning",
        "x_table",
        "x",
    ]
)


@given(_JSON)
def test_any_json_gives_records_or_a_parse_error(data: object) -> None:
    try:
        result = parse(json.dumps(data))
    except ParseError:
        return
    assert all(r.record_id.startswith("setid:") for r in result.records)


# -- fuzzing and refusals ----------------------------------------------------------------------
OPENFDA_SEEDS = seeds("openfda")


@FUZZ_SETTINGS
@given(mutated(OPENFDA_SEEDS))
def test_fuzzed_openfda_bodies_give_records_or_a_parse_error(body: bytes) -> None:
    check_fails_closed(parse, body)


@requires_reference
@REFERENCE_SETTINGS
@given(mutated(seeds("openfda", extra=reference_files("openfda"))))
def test_fuzzed_reference_openfda_bodies_give_records_or_a_parse_error(body: bytes) -> None:
    check_fails_closed(parse, body)


def _label_body(**fields: object) -> str:
    wrapper = json.loads((FIXTURES / "label-v4.json").read_text(encoding="utf-8"))
    label = json.loads(wrapper["body"])["results"][0]
    label.update(fields)
    return json.dumps({"meta": {"results": {"total": 1}}, "results": [label]})


def test_a_label_whose_version_is_not_a_handle_version_is_refused_with_its_set_id() -> None:
    result = parse(_label_body(version="4 rev"))
    assert result.records == []
    set_id = json.loads(_label_body())["results"][0]["set_id"].lower()
    assert result.refused == [
        Refusal(
            reason="version must start with a letter or digit and contain only letters, "
            "digits, '.' and '-' (at most 40 characters)",
            value="4 rev",
            record_id=f"setid:{set_id}",
        )
    ]


def test_a_label_without_a_valid_set_id_is_refused() -> None:
    result = parse(_label_body(set_id="not-a-uuid"))
    assert result.records == []
    assert [(r.reason, r.value) for r in result.refused] == [
        ("setid must be a lower-case UUID (8-4-4-4-12 hex digits)", "not-a-uuid")
    ]
