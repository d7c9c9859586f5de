"""Refusal at parse time: the one refuse-or-keep step of the six parsers, and PMCID fields."""

from __future__ import annotations

import pytest

from pipeline.records import Record, Refusal, refusal_counts
from pipeline.sources import citable

PMID_RULE = "pmid must be 1 to 10 digits without a leading zero"
NCT_RULE = "nct id must be NCT followed by 8 digits"


def _trial(nct: str, version: str | None = "2024-01-02") -> Record:
    return Record(record_id=f"nct:{nct}", source="clinicaltrials", version=version)


def test_partition_keeps_citable_records_in_order_and_refuses_the_rest() -> None:
    early = Refusal(reason=NCT_RULE, value="NCT1")  # refused before its record was built
    good, later = _trial("NCT99000001"), _trial("NCT99000002")
    bad_version = _trial("NCT99000003", version="4 rev")
    kept, refused = citable.partition([good, early, bad_version, later], citable.of_record)
    assert kept == [good, later]
    assert refused == [
        early,
        Refusal(
            reason="version must start with a letter or digit and contain only letters, digits, "
            "'.' and '-' (at most 40 characters)",
            value="4 rev",
            record_id="nct:NCT99000003",
        ),
    ]


def test_partition_checks_ids_and_without_a_check_keeps_what_is_not_refused() -> None:
    kept, refused = citable.partition(
        ["99000001", "Health Literacy", "0"], lambda pmid: citable.refusal(f"pmid:{pmid}")
    )
    assert kept == ["99000001"]
    assert [(r.reason, r.value) for r in refused] == [
        (PMID_RULE, "Health Literacy"),
        (PMID_RULE, "0"),
    ]
    early = Refusal(reason=PMID_RULE, value="x")
    assert citable.partition(["a", early, "b"]) == (["a", "b"], [early])


@pytest.mark.parametrize("value", ["PMC1", "PMC99200002", "PMC9999999999"])
def test_a_pmcid_of_the_handle_grammar_is_kept(value: str) -> None:
    assert citable.pmcid(value) == value


@pytest.mark.parametrize(
    "value",
    [
        None,
        "",
        "PMC",
        "PMC0",
        "PMC012",
        "pmc12",
        "12",
        "PMC12345678901",
        "PMC1 ",
        "PMC1/x",
        "PMC1@2",
    ],
)
def test_a_pmcid_outside_the_handle_grammar_is_dropped(value: str | None) -> None:
    assert citable.pmcid(value) is None


def test_refusals_are_counted_once_by_reason_in_first_seen_order() -> None:
    refusals = [
        Refusal(reason=NCT_RULE, value="NCT1"),
        Refusal(reason=PMID_RULE, value="x"),
        Refusal(reason=NCT_RULE, value="NCT2"),
    ]
    assert refusal_counts(iter(refusals)) == {NCT_RULE: 2, PMID_RULE: 1}
