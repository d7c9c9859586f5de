"""``citeseal evaluate-support``: through the CLI's one error boundary, in-process."""

from __future__ import annotations

import json
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

from pipeline.cli import evaluate_support_cmd, main

CSV = (
    "id,evidence,claim,label,topic_ip,question\n"
    '1,"In this cohort, zentravir does not increase the risk of stroke.",'
    "Zentravir raises the risk of stroke in older adults with kidney disease,Refutes,1,q\n"
    "2,Zentravir use was associated with a higher risk of stroke.,"
    "Zentravir raises the risk of stroke in older adults with kidney disease,Supports,1,q\n"
    "3,The invented registry followed patients in Farrowland.,"
    "Zentravir raises the risk of stroke in older adults with kidney disease,Neutral,1,q\n"
    "4,Zentravir may not lower mortality.,Zentravir lowers mortality,Refutes,2,q\n"
)


@dataclass
class Done:
    code: int
    out: str
    err: str


def run(*args: str, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]) -> Done:
    monkeypatch.setattr(sys, "argv", ["citeseal", "evaluate-support", *args])
    code = 0
    try:
        main()
    except SystemExit as exit_:
        code = int(exit_.code or 0)
    out, err = capsys.readouterr()
    return Done(code, out, err)


@pytest.fixture
def labelled(tmp_path: Path) -> Path:
    path = tmp_path / "pairs.csv"
    path.write_text(CSV, encoding="utf-8")
    return path


def test_text_output_states_coverage_macro_f1_classes_and_the_confusion_matrix(
    labelled: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    done = run(str(labelled), monkeypatch=monkeypatch, capsys=capsys)
    assert done.code == 0, done.err
    lines = done.out.splitlines()
    assert lines[0] == "judge rules 1.5; part all: 4 pairs, 2 claims"
    assert lines[1] == "coverage 0.750 (3 judged, 1 abstained; abstention rate 0.250)"
    assert lines[2] == (
        "macro-F1 1.000 over judged pairs; accuracy 1.000; contradicted precision 1.000 "
        "(1 of 1; Wilson 95 % 0.207-1.000)"
    )
    assert lines[4].split() == ["supported", "1", "1", "1.000", "1.000", "1.000", "1.000"]
    assert lines[5].split() == ["contradicted", "2", "1", "1.000", "1.000", "0.500", "1.000"]
    assert lines[-2].split() == ["contradicted", "0", "1", "0", "1"]


def test_json_output_is_the_same_figures_as_data(
    labelled: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    done = run(str(labelled), "--json", monkeypatch=monkeypatch, capsys=capsys)
    assert done.code == 0, done.err
    data = json.loads(done.out)
    assert (data["judge"], data["pairs"], data["abstained"]) == ("rules", 4, 1)
    assert data["contradicted_precision"] == 1.0
    assert data["contradicted_precision_interval"] == [pytest.approx(0.2065, abs=1e-4), 1.0]
    assert data["confusion"]["contradicted"] == {
        "supported": 0, "contradicted": 1, "not_mentioned": 0, "abstain": 1,
    }  # fmt: skip
    assert [c["label"] for c in data["classes"]] == ["supported", "contradicted", "not_mentioned"]


def test_mapped_labels_and_named_columns(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    path = tmp_path / "mine.csv"
    path.write_text("s,p,g\nZentravir raises mortality,Zentravir raised mortality.,yes\n")
    done = run(
        str(path), "--labels", "yes=supported,no=contradicted", "--claim-column", "s",
        "--evidence-column", "p", "--label-column", "g", "--json",
        monkeypatch=monkeypatch, capsys=capsys,
    )  # fmt: skip
    assert done.code == 0, done.err
    assert json.loads(done.out)["classes"][0]["correct"] == 1


@pytest.mark.parametrize(
    ("content", "args", "message"),
    [
        (CSV + "5,only two\n", (), "error: {path} row 6: expected 6 fields, got 2"),
        (
            CSV.replace("Neutral", "Unsure"),
            (),
            "error: {path} row 4: label 'Unsure' is not mapped"
            " (mapped: neutral, refutes, supports)",
        ),
        (
            CSV,
            ("--judge", "oracle"),
            "error: unknown judge 'oracle' (expected one of llm-anthropic, llm-openai, rules)",
        ),
        (CSV, ("--part", "half"), "error: --part: expected one of all, tune, held-out, got 'half'"),
        (CSV, ("--labels", "Supports"), "error: --labels: expected NAME=LABEL, got 'Supports'"),
        (b"claim,evidence,label\n\xff,b,Supports\n", (), "error: {path} is not UTF-8 (byte 21)"),
        (
            b"\xef\xbb\xbfclaim,evidence,label\n\xff,b,Supports\n",  # the offset counts the BOM
            (),
            "error: {path} is not UTF-8 (byte 24)",
        ),
    ],
)  # fmt: skip
def test_bad_input_is_one_error_line_and_exit_2(
    tmp_path: Path,
    content: str | bytes,
    args: tuple[str, ...],
    message: str,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    path = tmp_path / "bad.csv"
    if isinstance(content, bytes):
        path.write_bytes(content)
    else:
        path.write_text(content, encoding="utf-8")
    done = run(str(path), *args, monkeypatch=monkeypatch, capsys=capsys)
    assert (done.code, done.out) == (2, "")
    assert done.err.splitlines() == [message.format(path=path)]


def test_a_missing_file_is_one_error_line(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    done = run(str(tmp_path / "none.csv"), monkeypatch=monkeypatch, capsys=capsys)
    assert (done.code, done.err) == (2, f"error: {tmp_path / 'none.csv'} does not exist\n")


def test_folds_print_one_line_per_fold_the_spread_and_the_pooled_figures(
    labelled: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    done = run(str(labelled), "--folds", "2", monkeypatch=monkeypatch, capsys=capsys)
    assert done.code == 0, done.err
    lines = done.out.splitlines()
    assert lines[0] == "judge rules 1.5; part all; 2 claim-grouped folds"
    assert [line.split()[:3] for line in lines[2:4]] == [["1", "1", "1"], ["2", "3", "1"]]
    assert lines[4].startswith("coverage mean ")
    assert lines[11] == "pooled over the folds:"
    assert lines[12] == "judge rules 1.5; part all: 4 pairs, 2 claims"


def test_folds_as_json_hold_each_fold_the_spread_and_the_pooled_evaluation(
    labelled: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    done = run(str(labelled), "--folds", "2", "--json", monkeypatch=monkeypatch, capsys=capsys)
    assert done.code == 0, done.err
    data = json.loads(done.out)
    assert (data["k"], [f["pairs"] for f in data["folds"]]) == (2, [1, 3])
    assert data["pooled"]["pairs"] == 4
    assert sum(f["pairs"] for f in data["folds"]) == data["pooled"]["pairs"]
    assert set(data["spread"]) >= {"macro_f1", "coverage", "contradicted_precision"}


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (("--folds", "1"), "error: --folds: expected 2 to 20, got 1"),
        (("--folds", "3"), "error: --folds 3: the pairs hold only 2 claims"),
    ],
)
def test_a_fold_count_that_cannot_be_filled_is_one_error_line_and_exit_2(
    labelled: Path,
    args: tuple[str, ...],
    message: str,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    done = run(str(labelled), *args, monkeypatch=monkeypatch, capsys=capsys)
    assert (done.code, done.out, done.err.splitlines()) == (2, "", [message])


def test_tuned_folds_name_the_thresholds_each_fold_chose(
    labelled: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    done = run(
        str(labelled), "--folds", "2", "--tune-thresholds", "--json",
        monkeypatch=monkeypatch, capsys=capsys,
    )  # fmt: skip
    assert done.code == 0, done.err
    data = json.loads(done.out)
    assert len(data["choices"]) == 2
    assert all(c["candidate"].startswith("mention=") for c in data["choices"])


@pytest.mark.parametrize(("args", "floor"), [((), 0.5), (("--min-coverage", "0.35"), 0.35)])
def test_the_coverage_floor_reaches_the_choice_inside_each_fold(
    labelled: Path,
    args: tuple[str, ...],
    floor: float,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    floors: list[float] = []
    tuned = evaluate_support_cmd.cross_validate_tuned

    def spy(*a: Any, **kw: Any) -> Any:
        floors.append(kw["coverage_floor"])
        return tuned(*a, **kw)

    monkeypatch.setattr(evaluate_support_cmd, "cross_validate_tuned", spy)
    done = run(
        str(labelled), "--folds", "2", "--tune-thresholds", *args, "--json",
        monkeypatch=monkeypatch, capsys=capsys,
    )  # fmt: skip
    assert done.code == 0, done.err
    assert floors == [floor]


def test_with_a_coverage_floor_of_one_a_fold_whose_training_pairs_all_abstain_meets_no_floor(
    labelled: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    done = run(
        str(labelled), "--folds", "2", "--tune-thresholds", "--min-coverage", "1", "--json",
        monkeypatch=monkeypatch, capsys=capsys,
    )  # fmt: skip
    assert done.code == 0, done.err
    # one fold trains on the planted claim (all three pairs judged, right), the other on the
    # hedged denial, which every candidate abstains on
    choices = [(c["met_floors"], c["training_coverage"]) for c in json.loads(done.out)["choices"]]
    assert sorted(choices) == [(False, 0.0), (True, 1.0)]


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (
            ("--tune-thresholds",),
            "error: --tune-thresholds needs --folds K (thresholds are chosen per fold)",
        ),
        (
            ("--folds", "2", "--tune-thresholds", "--judge", "llm-openai"),
            "error: --tune-thresholds: only the rules judge has thresholds, not 'llm-openai'",
        ),
        (
            ("--folds", "2", "--min-coverage", "0.4"),
            "error: --min-coverage needs --tune-thresholds (it bounds the choice)",
        ),
        (
            ("--folds", "2", "--tune-thresholds", "--min-coverage", "1.5"),
            "error: --min-coverage: expected 0 to 1, got 1.5",
        ),
    ],
)  # fmt: skip
def test_tuning_without_folds_or_for_another_judge_or_a_bad_coverage_floor_is_refused(
    labelled: Path,
    args: tuple[str, ...],
    message: str,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    done = run(str(labelled), *args, monkeypatch=monkeypatch, capsys=capsys)
    assert (done.code, done.out, done.err.splitlines()) == (2, "", [message])
