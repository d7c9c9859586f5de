"""The evaluation reports, whole: every figure of to_text and cross_validation_text in place."""

from __future__ import annotations

import pytest

from audit.errors import InputError
from audit.support.evaluate import (
    Pair,
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
from tests.audit.support.test_evaluate import _claims, _golds

GOLD = ["supported", "contradicted", "not_mentioned", "contradicted", "supported", "supported"]
PREDICTED = ["supported", "contradicted", "abstain", "supported", "supported", "not_mentioned"]


def pairs() -> list[Pair]:
    return _golds(_claims(3, 2), GOLD)


REPORT = [
    "judge j 1; part tune: 6 pairs, 3 claims",
    "coverage 0.833 (5 judged, 1 abstained; abstention rate 0.167)",
    "macro-F1 0.444 over judged pairs; accuracy 0.600; contradicted precision 1.000 (1 of 1;"
    " Wilson 95 % 0.207-1.000)",
    "class           gold  pred      P      R  R(all)     F1",
    "supported          3     3  0.667  0.667   0.667  0.667",
    "contradicted       2     1  1.000  0.500   0.500  0.667",
    "not_mentioned      1     1  0.000      -   0.000  0.000",
    "confusion (rows gold, columns predicted):",
    "                   supported  contradicted not_mentioned       abstain",
    "supported                  2             0             1             0",
    "contradicted               1             1             0             0",
    "not_mentioned              0             0             0             1",
]


def test_the_report_of_an_evaluation_states_every_figure() -> None:
    result = score(pairs(), PREDICTED, judge="j", judge_version="1", part="tune")
    assert to_text(result) == REPORT


CROSS_VALIDATION = [
    "judge j 1; part all; 3 claim-grouped folds",
    "fold   pairs claims  cover macroF1    acc contra P      R  R(all)   k/n",
    "1          2      1  0.500   0.000  0.000        -  0.000   0.000   0/0",
    "2          2      1  1.000   0.222  0.500        -      -       -   0/0",
    "3          2      1  1.000   0.667  1.000    1.000  1.000   1.000   1/1",
    "coverage mean 0.833 ± 0.289",
    "abstention_rate mean 0.167 ± 0.289",
    "macro_f1 mean 0.296 ± 0.339",
    "accuracy mean 0.500 ± 0.500",
    "contradicted_precision mean 1.000 ± - (over 1 of 3 folds; the others have none)",
    "contradicted_recall mean 0.500 ± 0.707 (over 2 of 3 folds; the others have none)",
    "contradicted_recall_all mean 0.500 ± 0.707 (over 2 of 3 folds; the others have none)",
    "pooled over the folds:",
]


def test_the_report_of_a_cross_validation_states_each_fold_the_spread_and_the_pool() -> None:
    result = cross_validate(pairs(), PREDICTED, 3, judge="j", judge_version="1")
    pooled = [REPORT[0].replace("part tune", "part all"), *REPORT[1:]]
    assert cross_validation_text(result) == CROSS_VALIDATION + pooled


# --- the rules around the figures -----------------------------------------------------------


def test_a_header_may_carry_a_bom_and_spaces_and_blank_rows_are_skipped() -> None:
    text = "\ufeff claim , evidence ,label\n\n  A claim ,,  REFUTES \n\nB,text,neutral\n"
    labels = parse_label_map(" Refutes = contradicted , Neutral=not_mentioned")
    assert read_pairs(text, labels) == [
        Pair(3, "A claim", "", "contradicted"),
        Pair(5, "B", "text", "not_mentioned"),
    ]


@pytest.mark.parametrize(
    ("text", "message"),
    [
        (
            "claim,label\na,Supports\n",
            "the CSV has no 'evidence' column for the evidence (header: claim, label)",
        ),
        (
            "claim,evidence\na,b\n",
            "the CSV has no 'label' column for the label (header: claim, evidence)",
        ),
        ('"claim\n', "the CSV row 1: unexpected end of data"),
        ("claim,evidence,label\n\n", "the CSV has a header but no rows"),
        ("claim,evidence,label\na,b,\n", "the CSV row 2: label '' is not mapped (mapped: yes)"),
    ],
)
def test_each_column_missing_and_each_bad_row_is_named(text: str, message: str) -> None:
    with pytest.raises(InputError) as caught:
        read_pairs(text, parse_label_map("yes=supported"))
    assert caught.value.message == message


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("Supports=", "--labels: expected NAME=LABEL, got 'Supports='"),
        ("a=supported, ", "--labels: expected NAME=LABEL, got ''"),
    ],
)
def test_a_label_map_item_without_a_label_is_refused(text: str, message: str) -> None:
    with pytest.raises(InputError) as caught:
        parse_label_map(text)
    assert caught.value.message == message


def test_score_needs_one_prediction_per_pair() -> None:
    with pytest.raises(ValueError, match=r"^one prediction per pair$"):
        score(pairs(), PREDICTED[:-1], judge="j", judge_version="1")
    empty = score([], [], judge="j", judge_version="1")
    assert (empty.pairs, empty.coverage, empty.abstention_rate, empty.accuracy) == (
        0,
        0.0,
        0.0,
        None,
    )


def test_the_wilson_interval_refuses_a_negative_count() -> None:
    with pytest.raises(ValueError, match=r"^expected 0 <= k <= n, got k=-1, n=2$"):
        wilson_interval(-1, 2)


def test_tuning_needs_candidates_of_one_prediction_per_pair() -> None:
    with pytest.raises(ValueError, match=r"^one prediction per pair for every candidate$"):
        cross_validate_tuned(
            pairs(), {"a": PREDICTED, "b": PREDICTED[:2]}, 2, judge="j", judge_version="1"
        )
    with pytest.raises(ValueError, match=r"^no candidates to choose from$"):
        choose(pairs(), {}, range(6))


def test_a_quoted_cell_keeps_its_line_breaks_as_written() -> None:
    text = 'claim,evidence,label\r\nA claim,"line 1\r\nline 2\rline 3",yes\r\n'
    (pair,) = read_pairs(text, parse_label_map("yes=supported"))
    assert pair.evidence == "line 1\r\nline 2\rline 3"


def test_a_column_name_is_only_stripped_of_its_bom_and_spaces() -> None:
    text = "\ufeffXclaim,evidence,label\nA claim,text,yes\n"
    pairs = read_pairs(text, parse_label_map("yes=supported"), claim="Xclaim")
    assert pairs == [Pair(2, "A claim", "text", "supported")]


def test_a_broken_first_row_is_named_row_2() -> None:
    with pytest.raises(InputError) as caught:
        read_pairs('claim,evidence,label\n"a,b,Supports\n', parse_label_map("yes=supported"))
    assert caught.value.message == "the CSV row 2: unexpected end of data"


# --- parts, folds and tuning ----------------------------------------------------------------


def test_each_claim_goes_to_the_part_its_hash_names_for_good() -> None:
    parts = [claim_part(f"Zentravir claim {i}") for i in range(8)]
    assert parts == ["held-out", "tune", "tune", "tune", "held-out", "held-out", "held-out", "tune"]
    every = _claims(8, 1)
    assert [p.claim for p in select(every, "tune")] == [
        f"Zentravir claim {i}" for i in (1, 2, 3, 7)
    ]
    assert [p.claim for p in select(every, "held-out")] == [
        f"Zentravir claim {i}" for i in (0, 4, 5, 6)
    ]


def test_twenty_folds_is_the_most_and_allowed() -> None:
    assert sorted(claim_folds(_claims(20, 1), 20)) == list(range(20))


def test_the_part_scored_is_named_by_default_and_as_given() -> None:
    assert score(pairs(), PREDICTED, judge="j", judge_version="1").part == "all"
    result = cross_validate(pairs(), PREDICTED, 3, judge="j", judge_version="1", part="tune")
    assert (result.part, result.pooled.part) == ("tune", "tune")
    tuned = cross_validate_tuned(pairs(), {"a": PREDICTED}, 3, judge="j", judge_version="1")
    assert (tuned.part, tuned.pooled.part) == ("all", "all")
    tuned = cross_validate_tuned(
        pairs(), {"a": PREDICTED}, 3, judge="j", judge_version="1", part="held-out"
    )
    assert (tuned.part, tuned.pooled.part, tuned.folds[0].part) == (
        "held-out",
        "held-out",
        "held-out fold 1/3",
    )


def test_an_older_evaluation_without_an_interval_shows_no_contradicted_precision() -> None:
    result = score(pairs(), PREDICTED, judge="j", judge_version="1")
    older = result.model_copy(update={"contradicted_precision_interval": None})
    assert to_text(older)[2] == (
        "macro-F1 0.444 over judged pairs; accuracy 0.600; contradicted precision -"
    )


def _two_folds() -> tuple[list[Pair], list[int]]:
    every = _claims(4, 2)
    return every, claim_folds(every, 2)


def test_each_fold_is_scored_with_the_candidate_its_own_training_part_chose() -> None:
    every, fold_of = _two_folds()
    right_on_0 = ["supported" if f == 0 else "not_mentioned" for f in fold_of]
    right_on_1 = ["supported" if f == 1 else "not_mentioned" for f in fold_of]
    result = cross_validate_tuned(
        every, {"x": right_on_0, "y": right_on_1}, 2, judge="j", judge_version="1"
    )
    assert result.choices is not None
    assert [c.candidate for c in result.choices] == ["y", "x"]  # each chosen on the other fold
    assert [f.accuracy for f in result.folds] == [0.0, 0.0]


def test_the_coverage_floor_given_is_the_one_each_fold_chooses_by() -> None:
    golds = ["supported", "supported", "not_mentioned", "contradicted"] * 4
    every = _golds(_claims(4, 4), golds)
    broad = ["supported", "not_mentioned", "not_mentioned", "supported"] * 4
    shy = ["supported", "abstain", "not_mentioned", "abstain"] * 4
    candidates = {"broad": broad, "shy": shy}
    kept = cross_validate_tuned(
        every, candidates, 2, judge="j", judge_version="1", coverage_floor=0.6
    )
    assert kept.choices is not None and [c.candidate for c in kept.choices] == ["broad"] * 2
    assert kept.coverage_floor == 0.6
    default = cross_validate_tuned(every, candidates, 2, judge="j", judge_version="1")
    assert default.choices is not None and [c.candidate for c in default.choices] == ["shy"] * 2


def test_a_fold_whose_choice_met_the_floors_says_only_what_it_chose() -> None:
    golds = ["supported", "contradicted"] * 4
    every = _golds(_claims(4, 2), golds)
    result = cross_validate_tuned(
        every, {"right": golds, "wrong": ["supported"] * 8}, 2, judge="j", judge_version="1"
    )
    lines = cross_validation_text(result)
    assert lines[2:4] == [
        "1          4      2  1.000   0.667  1.000    1.000  1.000   1.000   2/2"
        "  chose right (training macro-F1 0.667)",
        "2          4      2  1.000   0.667  1.000    1.000  1.000   1.000   2/2"
        "  chose right (training macro-F1 0.667)",
    ]


def test_a_contradicted_precision_of_exactly_the_floor_meets_it() -> None:
    golds = ["contradicted"] * 4 + ["supported", "not_mentioned"]
    every = _golds(_claims(6, 1), golds)
    eight = ["contradicted"] * 5 + ["supported"]  # 4 of 5 right: 0.8, the floor
    other = ["contradicted"] * 3 + ["supported", "contradicted", "not_mentioned"]  # 0.75
    choice = choose(every, {"eight": eight, "other": other}, range(6))
    assert (choice.candidate, choice.met_floors) == ("eight", True)
    assert (choice.training_contradicted_precision, choice.training_coverage) == (0.8, 1.0)


def test_the_wilson_interval_is_exactly_0_and_1_at_its_ends() -> None:
    assert wilson_interval(0, 3) == (0.0, pytest.approx(0.5615, abs=1e-4))
    assert (wilson_interval(0, 3) or (1.0, 1.0))[0] == 0.0
    assert (wilson_interval(24, 24) or (0.0, 0.0))[1] == 1.0


def test_a_label_map_item_is_cut_at_its_first_equals_sign() -> None:
    with pytest.raises(InputError) as caught:
        parse_label_map("a=b=supported")
    assert caught.value.message == (
        "--labels: 'b=supported' is not a verdict; expected one of supported, contradicted,"
        " not_mentioned"
    )


def test_a_csv_with_old_mac_line_ends_is_read_row_by_row() -> None:
    text = "claim,evidence,label\rA claim,text,yes\rB claim,more,yes\r"
    assert [p.claim for p in read_pairs(text, parse_label_map("yes=supported"))] == [
        "A claim",
        "B claim",
    ]
