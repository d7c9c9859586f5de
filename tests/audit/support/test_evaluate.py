"""Scoring a judge on labelled pairs: the CSV rules, the figures, the claim-grouped parts."""

from __future__ import annotations

from typing import cast

import pytest

from audit.errors import InputError
from audit.support.evaluate import (
    DEFAULT_LABELS,
    Pair,
    claim_part,
    parse_label_map,
    read_pairs,
    score,
    select,
    to_text,
)
from audit.support.model import SupportLabel

LABELS = parse_label_map(DEFAULT_LABELS)
EXPECTED = "expected one of supported, contradicted, not_mentioned"
CSV = (
    "id,evidence,claim,label\n"
    '1,"Zentravir does not increase the risk, says the trial.",Zentravir raises the risk,Refutes\n'
    "2,Zentravir raised the risk.,Zentravir raises the risk,supports\n"
    "3,Farrowland is sunny.,Zentravir raises the risk,Neutral\n"
)


def test_read_pairs_reads_healthvers_columns_in_any_order_and_maps_labels() -> None:
    pairs = read_pairs(CSV, LABELS)
    assert [(p.row, p.gold) for p in pairs] == [
        (2, "contradicted"),
        (3, "supported"),
        (4, "not_mentioned"),
    ]
    assert pairs[0].evidence == "Zentravir does not increase the risk, says the trial."


def test_read_pairs_takes_other_column_names() -> None:
    pairs = read_pairs(
        "sentence,passage,gold\nA claim,Some text,yes\n",
        parse_label_map("yes=supported"),
        claim="sentence",
        evidence="passage",
        label="gold",
    )
    assert pairs == [Pair(2, "A claim", "Some text", "supported")]


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("", "f.csv is empty; expected a header row"),
        (
            "id,evidence,label\n1,x,Supports\n",
            "f.csv has no 'claim' column for the claim (header: id, evidence, label)",
        ),
        ("claim,evidence,label\n", "f.csv has a header but no rows"),
        ("claim,evidence,label\na,b,Supports\na,b\n", "f.csv row 3: expected 3 fields, got 2"),
        (
            "claim,evidence,label\na,b,Maybe\n",
            "f.csv row 2: label 'Maybe' is not mapped (mapped: neutral, refutes, supports)",
        ),
        ("claim,evidence,label\n ,b,Supports\n", "f.csv row 2: the claim is empty"),
        (
            'claim,evidence,label\na,b,Supports\n"a,b,Supports\n',
            "f.csv row 3: unexpected end of data",
        ),
    ],
)  # fmt: skip
def test_a_malformed_csv_is_one_error_naming_the_row(text: str, message: str) -> None:
    with pytest.raises(InputError) as caught:
        read_pairs(text, LABELS, source="f.csv")
    assert caught.value.message == message


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("Supports", "--labels: expected NAME=LABEL, got 'Supports'"),
        ("Supports=yes", f"--labels: 'yes' is not a verdict; {EXPECTED}"),
        ("Supports=abstain", f"--labels: 'abstain' is not a verdict; {EXPECTED}"),
        ("=supported", "--labels: expected NAME=LABEL, got '=supported'"),
    ],
)  # fmt: skip
def test_a_bad_label_map_is_one_error(text: str, message: str) -> None:
    with pytest.raises(InputError) as caught:
        parse_label_map(text)
    assert caught.value.message == message


def _pairs(golds: list[str]) -> list[Pair]:
    return [
        Pair(i + 2, f"claim {i % 3}", "text", cast(SupportLabel, g)) for i, g in enumerate(golds)
    ]


def test_score_counts_abstentions_apart_and_states_coverage() -> None:
    golds = ["supported"] * 4 + ["contradicted"] * 3 + ["not_mentioned"] * 3
    predicted = [
        "supported", "supported", "not_mentioned", "abstain",
        "contradicted", "supported", "abstain",
        "not_mentioned", "not_mentioned", "abstain",
    ]  # fmt: skip
    result = score(_pairs(golds), predicted, judge="fake", judge_version="0")
    assert (result.pairs, result.abstained, result.coverage) == (10, 3, 0.7)
    assert result.abstention_rate == pytest.approx(0.3)
    supported, contradicted, not_mentioned = result.classes
    assert (supported.precision, supported.recall) == (2 / 3, 2 / 3)
    assert supported.recall_all == 0.5
    assert (contradicted.precision, contradicted.recall, contradicted.f1) == (1.0, 0.5, 2 / 3)
    assert (not_mentioned.precision, not_mentioned.recall) == (2 / 3, 1.0)
    assert result.contradicted_precision == 1.0
    assert result.macro_f1 == pytest.approx((2 / 3 + 2 / 3 + 0.8) / 3)
    assert result.accuracy == pytest.approx(5 / 7)
    assert result.confusion["supported"] == {
        "supported": 2, "contradicted": 0, "not_mentioned": 1, "abstain": 1,
    }  # fmt: skip
    assert result.claims == 3


def test_a_class_never_predicted_has_no_precision_and_f1_zero() -> None:
    result = score(
        _pairs(["supported", "contradicted"]),
        ["supported", "supported"],
        judge="fake",
        judge_version="0",
    )
    assert result.contradicted_precision is None
    assert result.classes[1].f1 == 0.0
    assert "contradicted precision -" in to_text(result)[2]


def test_a_prediction_that_is_no_support_label_is_a_programming_error() -> None:
    with pytest.raises(ValueError, match=r"not support labels: \['maybe'\]"):
        score(_pairs(["supported"]), ["maybe"], judge="fake", judge_version="0")


def test_every_abstention_leaves_no_figure_to_divide_by() -> None:
    result = score(_pairs(["supported"]), ["abstain"], judge="fake", judge_version="0")
    assert (result.coverage, result.macro_f1, result.accuracy) == (0.0, 0.0, None)


def test_claim_parts_keep_every_pair_of_a_claim_together_and_split_the_claims() -> None:
    pairs = [Pair(i, f"Claim  number {i % 40}", "e", "supported") for i in range(400)]
    tune, held = select(pairs, "tune"), select(pairs, "held-out")
    assert len(tune) + len(held) == 400
    assert {p.claim for p in tune}.isdisjoint({p.claim for p in held})
    assert 10 <= len({p.claim for p in tune}) <= 30  # about half the claims
    assert claim_part("claim NUMBER 3") == claim_part("Claim  number 3")
    assert select(pairs, "all") == pairs
