"""Scoring a judge on labelled pairs: the CSV rules, the figures, the claim-grouped parts."""

from __future__ import annotations

from typing import cast

import pytest

from audit.errors import InputError
from audit.support.evaluate import (
    DEFAULT_LABELS,
    Pair,
    Spread,
    choose,
    claim_folds,
    claim_part,
    cross_validate,
    cross_validate_tuned,
    cross_validation_text,
    parse_label_map,
    read_pairs,
    score,
    select,
    to_text,
    wilson_interval,
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


def _claims(n: int, per: int) -> list[Pair]:
    return [
        Pair(2 + i * per + j, f"Zentravir claim {i}", f"passage {j}", "supported")
        for i in range(n)
        for j in range(per)
    ]


def test_claim_folds_are_claim_grouped_cover_every_row_once_and_are_balanced() -> None:
    pairs = _claims(23, 3)
    fold_of = claim_folds(pairs, 5)
    assert len(fold_of) == len(pairs) and set(fold_of) == {0, 1, 2, 3, 4}
    by_claim: dict[str, set[int]] = {}
    for pair, fold in zip(pairs, fold_of, strict=True):
        by_claim.setdefault(pair.claim, set()).add(fold)
    assert all(len(folds) == 1 for folds in by_claim.values())
    sizes = sorted(sum(1 for f in by_claim.values() if f == {k}) for k in range(5))
    assert sizes == [4, 4, 5, 5, 5]


def test_claim_folds_are_deterministic_whatever_the_row_order_and_folding() -> None:
    pairs = _claims(12, 2)
    fold_of = dict(zip((p.row for p in pairs), claim_folds(pairs, 4), strict=True))
    shuffled = [*pairs[1::2], *pairs[::2]]
    shuffled = [
        Pair(p.row, p.claim.upper().replace(" ", "  "), p.evidence, p.gold) for p in shuffled
    ]
    again = dict(zip((p.row for p in shuffled), claim_folds(shuffled, 4), strict=True))
    assert again == fold_of


@pytest.mark.parametrize(
    ("folds", "message"),
    [
        (1, "--folds: expected 2 to 20, got 1"),
        (21, "--folds: expected 2 to 20, got 21"),
        (5, "--folds 5: the pairs hold only 3 claims"),
    ],
)
def test_claim_folds_refuse_a_fold_count_they_cannot_fill(folds: int, message: str) -> None:
    with pytest.raises(InputError) as caught:
        claim_folds(_claims(3, 2), folds)
    assert caught.value.message == message


def test_cross_validation_scores_each_fold_and_states_mean_and_sample_sd() -> None:
    pairs = _claims(4, 2)
    fold_of = claim_folds(pairs, 2)
    # fold 0: every pair right; fold 1: every pair abstained on
    predicted = ["supported" if f == 0 else "abstain" for f in fold_of]
    result = cross_validate(pairs, predicted, 2, judge="fake", judge_version="0")
    assert [f.pairs for f in result.folds] == [4, 4]
    assert [f.coverage for f in result.folds] == [1.0, 0.0]
    assert result.spread["coverage"].mean == 0.5
    assert result.spread["coverage"].sd == pytest.approx(0.5**0.5)
    assert result.spread["accuracy"].folds == 1  # fold 2 judged nothing: no accuracy
    assert result.spread["contradicted_precision"] == Spread(mean=None, sd=None, folds=0)
    assert result.pooled.coverage == 0.5 and result.pooled.pairs == 8
    assert [f.part for f in result.folds] == ["all fold 1/2", "all fold 2/2"]
    lines = cross_validation_text(result)
    assert lines[0] == "judge fake 0; part all; 2 claim-grouped folds"
    assert lines[2].split() == ["1", "4", "2", "1.000", "0.333", "1.000", "-", "-", "-", "0/0"]
    assert "coverage mean 0.500 ± 0.707" in lines
    assert "accuracy mean 1.000 ± - (over 1 of 2 folds; the others have none)" in lines


def _golds(pairs: list[Pair], golds: list[str]) -> list[Pair]:
    labelled = zip(pairs, golds, strict=True)
    return [Pair(p.row, p.claim, p.evidence, cast(SupportLabel, g)) for p, g in labelled]


def test_choose_takes_the_best_macro_f1_among_candidates_meeting_both_floors() -> None:
    pairs = _golds(_claims(4, 1), ["supported", "contradicted", "not_mentioned", "supported"])
    candidates = {
        # perfect, but never says contradicted: no contradicted precision, fails the floor
        "silent": ["supported", "abstain", "not_mentioned", "supported"],
        # right on every pair: meets both floors
        "right": ["supported", "contradicted", "not_mentioned", "supported"],
        # covers too little (1 of 4 judged)
        "shy": ["abstain", "contradicted", "abstain", "abstain"],
    }
    choice = choose(pairs, candidates, range(4))
    assert (choice.candidate, choice.met_floors, choice.training_macro_f1) == ("right", True, 1.0)


def test_choose_falls_back_to_the_best_macro_f1_and_says_no_candidate_met_the_floors() -> None:
    pairs = _golds(_claims(2, 1), ["supported", "contradicted"])
    candidates = {
        "a": ["supported", "supported"],
        "b": ["supported", "not_mentioned"],
        "c": ["supported", "not_mentioned"],
    }
    choice = choose(pairs, candidates, range(2))
    # b and c tie on the best macro-F1 (1/3); none says contradicted: the earlier, b, is chosen
    assert (choice.candidate, choice.met_floors) == ("b", False)
    assert choice.training_macro_f1 == pytest.approx(1 / 3)


def test_choose_without_a_candidate_meeting_both_floors_prefers_one_that_keeps_the_coverage() -> (
    None
):
    pairs = _golds(_claims(4, 1), ["supported", "supported", "not_mentioned", "contradicted"])
    candidates = {
        # judges every pair, two wrong: macro-F1 (0.5 + 0.667 + 0) / 3, coverage 1.0
        "broad": ["supported", "not_mentioned", "not_mentioned", "supported"],
        # right on the two pairs it judges: macro-F1 (1 + 1 + 0) / 3, coverage 0.5
        "shy": ["supported", "abstain", "not_mentioned", "abstain"],
    }  # neither says contradicted: no candidate meets the precision floor
    chosen = choose(pairs, candidates, range(4), coverage_floor=0.6)
    assert (chosen.candidate, chosen.met_floors, chosen.training_coverage) == ("broad", False, 1.0)
    chosen = choose(pairs, candidates, range(4), coverage_floor=0.4)  # both keep it: macro-F1
    assert (chosen.candidate, chosen.met_floors) == ("shy", False)
    assert chosen.training_macro_f1 == pytest.approx(2 / 3)


def test_tuning_inside_folds_chooses_on_the_other_folds_and_scores_on_the_fold_itself() -> None:
    pairs = _claims(6, 2)
    fold_of = claim_folds(pairs, 3)
    # "fits" is right on folds 1 and 2 and wrong on fold 0; "steady" is right on fold 0 only.
    fits = ["not_mentioned" if f == 0 else "supported" for f in fold_of]
    steady = ["supported" if f == 0 else "not_mentioned" for f in fold_of]
    result = cross_validate_tuned(
        pairs, {"fits": fits, "steady": steady}, 3, judge="fake", judge_version="0"
    )
    assert result.choices is not None
    chosen = [c.candidate for c in result.choices]
    # fold 0 is chosen on folds 1-2, where "fits" is right: so fold 0 is scored wrong
    assert chosen == ["fits", "fits", "fits"]
    assert [f.accuracy for f in result.folds] == [0.0, 1.0, 1.0]
    assert result.pooled.pairs == 12
    assert (
        "chose fits (training macro-F1 0.333, no candidate met the floors)"
        in (cross_validation_text(result)[2])
    )
    assert result.coverage_floor == 0.5
    assert cross_validation_text(result)[5] == (
        "chosen on the other folds: contradicted precision >= 0.8 and coverage >= 0.5, "
        "then the highest macro-F1"
    )


def test_tuning_on_one_part_chooses_on_every_claim_outside_the_fold_the_other_part_included() -> (
    None
):
    pairs = _claims(8, 2)
    scored = list(range(6))  # claims 0-2 are the part; claims 3-7 (10 pairs) are not
    # "outside" is right on the other part only, "inside" on the part only: choosing on the
    # other folds of the part alone would take "inside"; the other part outweighs them
    outside = ["not_mentioned" if i in scored else "supported" for i in range(len(pairs))]
    inside = ["supported" if i in scored else "not_mentioned" for i in range(len(pairs))]
    candidates: dict[str, list[str]] = {"outside": outside, "inside": inside}
    result = cross_validate_tuned(
        pairs, candidates, 3, judge="fake", judge_version="0", part="held-out", scored=scored
    )
    assert result.choices is not None
    assert [c.candidate for c in result.choices] == ["outside"] * 3
    assert [f.accuracy for f in result.folds] == [0.0, 0.0, 0.0]
    assert (result.pooled.pairs, result.pooled.claims, result.trained_on_all) == (6, 3, True)
    assert cross_validation_text(result)[5].startswith(
        "chosen on every other claim of the file: contradicted precision >= 0.8"
    )
    alone = cross_validate_tuned(
        [pairs[i] for i in scored], {k: [v[i] for i in scored] for k, v in candidates.items()},
        3, judge="fake", judge_version="0",
    )  # fmt: skip
    assert alone.choices is not None and {c.candidate for c in alone.choices} == {"inside"}


@pytest.mark.parametrize(
    ("k", "n", "interval"),
    [
        (5, 7, (0.3589, 0.9178)),
        (21, 24, (0.6900, 0.9566)),
        (5, 5, (0.5655, 1.0)),
        (0, 3, (0.0, 0.5615)),
        (1, 1, (0.2065, 1.0)),
    ],
)
def test_the_wilson_interval_of_a_precision(k: int, n: int, interval: tuple[float, float]) -> None:
    low, high = wilson_interval(k, n) or (-1.0, -1.0)
    assert (low, high) == (
        pytest.approx(interval[0], abs=1e-4),
        pytest.approx(interval[1], abs=1e-4),
    )


def test_the_wilson_interval_needs_a_trial_and_a_count_within_it() -> None:
    assert wilson_interval(0, 0) is None
    with pytest.raises(ValueError, match="expected 0 <= k <= n, got k=3, n=2"):
        wilson_interval(3, 2)


def test_contradicted_precision_is_stated_with_its_count_and_interval() -> None:
    pairs = [Pair(i + 2, f"claim {i}", "e", "contradicted") for i in range(3)]
    result = score(
        pairs, ["contradicted", "contradicted", "supported"], judge="j", judge_version="0"
    )
    assert result.contradicted_precision == 1.0
    assert "contradicted precision 1.000 (2 of 2; Wilson 95 % 0.342-1.000)" in to_text(result)[2]


def test_a_header_with_a_bom_before_a_spaced_name_is_read() -> None:
    text = "\ufeff claim ,evidence,label\nA claim,text,Supports\n"
    assert read_pairs(text, LABELS) == [Pair(2, "A claim", "text", "supported")]
