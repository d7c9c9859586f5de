"""Version backfill from ClinicalTrials.gov record history and DailyMed SPL history."""

from __future__ import annotations

import copy
import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

import httpx
import pytest
from hypothesis import given, settings

from pipeline.errors import ParseError
from pipeline.http import HttpClient
from pipeline.replay import ReplayTransport
from pipeline.settings import Settings
from pipeline.sources import history
from pipeline.sources.history import (
    HistoryEntry,
    lookup_label_version,
    lookup_trial_version,
    parse_label_history,
    parse_trial_history,
    parse_trial_version,
    trial_candidates,
)
from tests.pipeline.sources.fuzzing import (
    EXAMPLES,
    FUZZ_SETTINGS,
    check_fails_closed,
    mutated,
    seeds,
)

FIXTURES = Path(__file__).resolve().parents[2] / "fixtures"
HISTORY = FIXTURES / "history"
SETID = "5eed0001-0000-4000-8000-000000000001"
ON = Settings(history_backfill=True)


def replay(settings: Settings = ON) -> HttpClient:
    return HttpClient(settings, transport=ReplayTransport([HISTORY]))


def mock(handler: Callable[[httpx.Request], httpx.Response]) -> HttpClient:
    return HttpClient(ON, transport=httpx.MockTransport(handler), sleep=lambda _: None)


def body_of(rel: str) -> str:
    return json.loads((FIXTURES / rel).read_text(encoding="utf-8"))["body"]


# -- ClinicalTrials.gov ------------------------------------------------------------------------


def test_an_older_trial_version_is_fetched_from_the_history() -> None:
    with replay() as client:
        lookup = lookup_trial_version(client, "NCT99000001", "2025-01-15")
    assert lookup.outcome == "fetched"
    assert lookup.detail == "version 2025-01-15 of NCT99000001 is history version 1"
    record = lookup.record
    assert record is not None
    assert (record.record_id, record.version, record.status) == (
        "nct:NCT99000001",
        "2025-01-15",
        "RECRUITING",
    )
    assert record.metadata["history_version"] == "1"
    summary = next(p.text for p in record.passages if p.path == "trial.brief_summary.1")
    assert summary.endswith("once daily for 24 weeks.")


def test_a_trial_version_lookup_gives_the_record() -> None:
    with replay() as client:
        lookup = lookup_trial_version(client, "NCT99000001", "2025-06-02")
    record = lookup.record
    assert lookup.outcome == "fetched"
    assert record is not None
    assert record.version == "2025-06-02"
    assert record.status == "ACTIVE_NOT_RECRUITING"


def test_a_version_the_history_lacks_is_not_retained_never_the_current_one() -> None:
    with replay() as client:
        lookup = lookup_trial_version(client, "NCT99000001", "2024-12-01")
    assert lookup.outcome == "not_retained"
    assert lookup.record is None
    assert lookup.detail == (
        "the ClinicalTrials.gov history of NCT99000001 has no version last updated on 2024-12-01"
    )


def test_backfill_is_off_unless_the_setting_is_on() -> None:
    with replay(Settings()) as client:
        lookup = lookup_trial_version(client, "NCT99000001", "2025-01-15")
    assert lookup.outcome == "disabled"
    assert lookup.detail == (
        "version history backfill is off (set CITESEAL_HISTORY_BACKFILL=1 to enable it)"
    )


def test_unknown_trial_history_is_not_found() -> None:
    with mock(lambda r: httpx.Response(404, text="Not Found")) as client:
        lookup = lookup_trial_version(client, "NCT99000042", "2025-01-15")
    assert (lookup.outcome, lookup.detail) == (
        "not_found",
        "ClinicalTrials.gov has no record history for NCT99000042",
    )


def test_history_dated_by_submission_still_finds_the_posted_version() -> None:
    """If the history's dates are submission dates, the version posted on D is the newest
    one submitted before D — accepted only because its own last-update-posted date is D."""
    listing = {
        "changes": [{"version": 0, "date": "2024-02-18"}, {"version": 1, "date": "2025-01-13"}]
    }
    study = json.loads(body_of("history/clinicaltrials/version-NCT99000001-1.json"))
    asked: list[str] = []

    def handler(request: httpx.Request) -> httpx.Response:
        asked.append(request.url.path)
        if request.url.path.endswith("/history"):
            return httpx.Response(200, json=listing)
        return httpx.Response(200, json=study)

    with mock(handler) as client:
        lookup = lookup_trial_version(client, "NCT99000001", "2025-01-15")
    assert lookup.outcome == "fetched"
    assert asked == [
        "/api/int/studies/NCT99000001/history",
        "/api/int/studies/NCT99000001/history/1",
    ]


def test_a_candidate_with_another_posted_date_is_rejected() -> None:
    listing = {"changes": [{"version": 0, "date": "2025-01-15"}]}
    study = json.loads(body_of("history/clinicaltrials/version-NCT99000001-2.json"))  # 2025-06-02

    def handler(request: httpx.Request) -> httpx.Response:
        return httpx.Response(200, json=listing if request.url.path.endswith("/history") else study)

    with mock(handler) as client:
        assert lookup_trial_version(client, "NCT99000001", "2025-01-15").outcome == "not_retained"


def test_history_listing_shapes() -> None:
    flat = json.dumps(
        {
            "changes": [
                {"version": 1, "date": "2025-01-15", "status": "RECRUITING"},
                {"version": 0, "date": "2024-02-20"},
                {"version": True},
            ]
        }
    )
    nested = '{"history": {"changes": [{"version": "0", "date": "2024-02-20"}]}}'
    assert parse_trial_history(flat) == [
        HistoryEntry("0", "2024-02-20", None),
        HistoryEntry("1", "2025-01-15", "RECRUITING"),
    ]
    assert parse_trial_history(nested) == [HistoryEntry("0", "2024-02-20", None)]
    with pytest.raises(ParseError) as info:
        parse_trial_history('{"studies": []}')
    assert str(info.value) == (
        "expected a ClinicalTrials.gov record history with a 'changes' list, got none"
    )
    with pytest.raises(ParseError) as info:
        parse_trial_history("<html>")
    assert (
        str(info.value)
        == "expected ClinicalTrials.gov record history JSON, got text that is not JSON"
    )


def test_candidates_are_same_day_entries_then_the_newest_before() -> None:
    entries = [
        HistoryEntry("0", "2024-01-01"),
        HistoryEntry("1", "2024-05-01"),
        HistoryEntry("2", "2024-05-01"),
        HistoryEntry("3", "2024-09-01"),
    ]
    assert [e.version for e in trial_candidates(entries, "2024-05-01")] == ["2", "1", "0"]
    assert [e.version for e in trial_candidates(entries, "2024-06-30")] == ["2"]
    assert trial_candidates(entries, "2023-01-01") == []


def test_an_old_study_without_a_posted_date_takes_the_history_date() -> None:
    data: dict[str, Any] = json.loads(body_of("history/clinicaltrials/version-NCT99000001-0.json"))
    status = data["study"]["protocolSection"]["statusModule"]
    del status["lastUpdatePostDateStruct"], status["lastUpdateSubmitDate"]
    record = parse_trial_version(json.dumps(data), HistoryEntry("0", "2024-02-21"))
    assert (record.version, record.metadata["version_basis"]) == ("2024-02-21", "history_date")
    bare = parse_trial_version(json.dumps(copy.deepcopy(data["study"])), HistoryEntry("0", None))
    assert bare.version == "2024-02-20"  # first-posted fallback, no history date to use
    with pytest.raises(ParseError) as info:
        parse_trial_version('{"error": "x"}', HistoryEntry("0", None))
    assert str(info.value) == (
        "expected a ClinicalTrials.gov history version with a 'study', got none"
    )


# -- DailyMed --------------------------------------------------------------------------------


def test_dailymed_history_listing_is_parsed_oldest_first() -> None:
    entries = parse_label_history(body_of("history/dailymed/history-5eed0001.json"))
    assert entries == [
        HistoryEntry("1", "2023-03-14"),
        HistoryEntry("3", "2024-11-05"),
        HistoryEntry("4", "2025-05-20"),
    ]
    with pytest.raises(ParseError) as info:
        parse_label_history('{"metadata": {}}')
    assert str(info.value) == "expected a DailyMed SPL history with data.history, got none"


def test_a_listed_label_version_is_reported_as_unfetchable() -> None:
    with replay() as client:
        lookup = lookup_label_version(client, SETID, "3")
    assert lookup.outcome == "unfetchable"
    assert lookup.record is None
    assert lookup.detail == (
        f"DailyMed lists version 3 of set id {SETID} (published 2024-11-05), but citeseal "
        "cannot fetch the text of an earlier SPL version"
    )


def test_an_unlisted_label_version_is_not_retained() -> None:
    with replay() as client:
        lookup = lookup_label_version(client, f"setid:{SETID}", "2")
    assert (lookup.outcome, lookup.detail) == (
        "not_retained",
        f"DailyMed's history of set id {SETID} has no version 2",
    )


def test_label_backfill_off_and_unknown_set_id() -> None:
    with replay(Settings()) as client:
        assert lookup_label_version(client, SETID, "3") is history.DISABLED
    with mock(lambda r: httpx.Response(404, text="no such setid")) as client:
        lookup = lookup_label_version(client, SETID, "3")
    assert (lookup.outcome, lookup.detail) == (
        "not_found",
        f"DailyMed has no SPL history for set id {SETID}",
    )


# -- fuzzing ------------------------------------------------------------------------------------
HISTORY_SEEDS = seeds("history") + seeds("backfill")
ENTRY = HistoryEntry(version="1", date="2025-01-15")


@settings(FUZZ_SETTINGS, max_examples=max(20, EXAMPLES // 3))  # three parsers per example
@given(mutated(HISTORY_SEEDS))
def test_fuzzed_history_bodies_give_versions_or_a_parse_error(body: bytes) -> None:
    check_fails_closed(history.parse_trial_history, body)
    check_fails_closed(history.parse_label_history, body)
    check_fails_closed(history.parse_trial_version, body, entry=ENTRY)


def test_a_dailymed_version_number_of_5000_digits_is_ordered_not_a_crash() -> None:
    body = json.dumps({"data": {"history": [{"spl_version": "9" * 5000}, {"spl_version": 2}]}})
    assert [e.version[:3] for e in history.parse_label_history(body)] == ["2", "999"]
