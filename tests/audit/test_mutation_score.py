"""The mutation score tally (tests/audit/mutation_score.py, ``make mutation``)."""

from __future__ import annotations

import json
import os
from datetime import UTC, datetime
from pathlib import Path

import pytest

from tests.audit.mutation_score import (
    ROOT,
    audit_modules,
    ledger_table,
    load_equivalent,
    load_ledger,
    main,
    score_module,
    source_digest,
    table,
)

CODES = {"m.x_a__mutmut_1": 1, "m.x_a__mutmut_2": 0, "m.x_a__mutmut_3": 36, "m.x_b__mutmut_1": 33}


def test_a_timeout_counts_as_killed_and_an_equivalent_survivor_leaves_the_denominator() -> None:
    score = score_module("audit/m.py", CODES, ["m.x_a__mutmut_2", "other.x__mutmut_1"])
    assert (score.killed, score.survived, score.no_tests) == (
        2,
        ["m.x_a__mutmut_2"],
        ["m.x_b__mutmut_1"],
    )
    assert (score.mutants, score.equivalent, score.counted) == (4, 1, 3)
    text, total = table([score])
    assert "| audit/m.py | 4 | 2 | 1 | 1 | 1 | 66.7 % | 0 |" in text
    assert total == pytest.approx(200 / 3)


def test_a_killed_mutant_listed_as_equivalent_is_an_error() -> None:
    with pytest.raises(
        ValueError, match=r"m\.x_a__mutmut_1 is listed as equivalent but was killed"
    ):
        score_module("audit/m.py", CODES, ["m.x_a__mutmut_1"])


@pytest.mark.parametrize("timeout", [36, -24, 24, 152, 255])
def test_a_listed_equivalent_that_ran_out_of_time_is_equivalent_not_killed(timeout: int) -> None:
    codes = {"m.x_a__mutmut_1": timeout, "m.x_a__mutmut_2": 1}
    score = score_module("audit/m.py", codes, ["m.x_a__mutmut_1"])
    assert (score.killed, score.survived, score.equivalent, score.counted) == (
        1,
        ["m.x_a__mutmut_1"],
        1,
        1,
    )
    unlisted = score_module("audit/m.py", codes)
    assert (unlisted.killed, unlisted.survived) == (2, [])  # not listed: a timeout is a kill


def test_a_module_with_unchecked_mutants_is_not_run_and_not_counted() -> None:
    done = score_module("audit/m.py", {"m.x_a__mutmut_1": 1})
    pending = score_module("audit/n.py", {"n.x_a__mutmut_1": 0, "n.x_a__mutmut_2": None})
    text, total = table([done, pending])
    assert "| audit/n.py | 2 | 0 | 1 | 0 | 0 | not run (1 left) | 0 |" in text
    assert total == 100.0


def write_meta(root: Path, module: str, codes: dict[str, int | None]) -> None:
    meta = root / "audit" / f"{module}.meta"
    meta.parent.mkdir(parents=True, exist_ok=True)
    durations = dict.fromkeys(codes, 1.5)
    meta.write_text(
        json.dumps({"exit_code_by_key": codes, "durations_by_key": durations}), encoding="utf-8"
    )


def test_the_command_fails_below_the_floor_and_without_results(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(["--mutants", str(tmp_path)]) == 2
    assert "error: no mutmut results in" in capsys.readouterr().err
    write_meta(tmp_path, "m.py", {"audit.m.x_a__mutmut_1": 1, "audit.m.x_a__mutmut_2": 0})
    assert main(["--mutants", str(tmp_path), "--min", "50"]) == 0
    assert main(["--mutants", str(tmp_path), "--min", "92", "--survivors"]) == 1
    captured = capsys.readouterr()
    assert "| audit/m.py | 2 | 1 | 1 | 0 | 0 | 50.0 % | 3 |" in captured.out
    assert "- audit.m.x_a__mutmut_2: survived" in captured.out
    assert "error: mutation score 50.0 % is below 92 %" in captured.err


def test_every_listed_equivalent_mutant_has_a_reason() -> None:
    listed = load_equivalent()
    assert listed
    assert all(name.startswith("audit.") and reason.strip() for name, reason in listed.items())


def test_an_equivalent_filed_under_another_module_or_without_reason_is_refused(
    tmp_path: Path,
) -> None:
    (tmp_path / "verdicts.toml").write_text('"audit.overall.x_f__mutmut_1" = "why"\n')
    with pytest.raises(ValueError, match=r"not a mutant of audit\.verdicts"):
        load_equivalent(tmp_path)
    (tmp_path / "verdicts.toml").write_text('"audit.verdicts.x_f__mutmut_1" = " "\n')
    with pytest.raises(ValueError, match="with a reason"):
        load_equivalent(tmp_path)
    (tmp_path / "verdicts.toml").write_text('"audit.verdicts.x_f__mutmut_1" = "why"\n')
    assert load_equivalent(tmp_path) == {"audit.verdicts.x_f__mutmut_1": "why"}


# --- the ledger --------------------------------------------------------------------------------


def _tree(tmp_path: Path) -> tuple[Path, Path, Path]:
    root = tmp_path / "tree"
    for module in ("m.py", "n.py", "evaluation/e.py"):
        (root / "audit" / module).parent.mkdir(parents=True, exist_ok=True)
        (root / "audit" / module).write_text(f"# {module}\n", encoding="utf-8")
    return root, tmp_path / "mutants", tmp_path / "ledger.toml"


def test_a_complete_module_is_recorded_with_its_source_and_goes_stale_when_it_changes(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    root, mutants, ledger = _tree(tmp_path)
    write_meta(mutants, "m.py", {"audit.m.x_a__mutmut_1": 1, "audit.m.x_a__mutmut_2": 0})
    write_meta(mutants, "n.py", {"audit.n.x_a__mutmut_1": 1, "audit.n.x_a__mutmut_2": None})
    write_meta(mutants, "evaluation/e.py", {"audit.evaluation.e.x_a__mutmut_1": None})
    (root / "audit/o.py").write_text("X = 1\n", encoding="utf-8")
    write_meta(mutants, "o.py", {})  # nothing to mutate
    files = ["--mutants", str(mutants), "--ledger-file", str(ledger), "--root", str(root)]
    assert main([*files, "--record"]) == 0
    err = capsys.readouterr().err
    assert "audit/n.py: not recorded, 1 mutants unchecked" in err
    assert "1 modules not recorded: none of their mutants checked" in err
    recorded = load_ledger(ledger)
    assert recorded["audit/o.py"].mutants == 0
    entry = recorded["audit/m.py"]
    assert (entry.module, entry.mutants, entry.killed, entry.equivalent, entry.survived) == (
        "audit/m.py",
        2,
        1,
        0,
        ("audit.m.x_a__mutmut_2",),
    )
    assert entry.sha256 == source_digest(root / "audit/m.py")
    meta_time = (mutants / "audit/m.py.meta").stat().st_mtime
    assert entry.recorded == datetime.fromtimestamp(meta_time, UTC).strftime("%Y-%m-%dT%H:%MZ")

    assert main([*files, "--ledger", "--min", "50"]) == 0
    out = capsys.readouterr().out
    assert "| audit/m.py | 2 | 1 | 1 | 0 | 50.0 % |" in out
    assert "| audit/o.py | 0 | 0 | 0 | 0 | no mutants |" in out
    assert "| **total (current entries)** | 2 | 1 | | | 50.0 % | |" in out
    assert "not run (1): audit/n.py" in out  # the harness in audit/evaluation/ is no target
    assert main([*files, "--ledger", "--min", "92"]) == 1

    (root / "audit/m.py").write_text("# changed\n", encoding="utf-8")
    assert main([*files, "--ledger"]) == 2  # nothing current is left to score
    captured = capsys.readouterr()
    assert "| audit/m.py | 2 | 1 | 1 | 0 | stale (source changed) |" in captured.out
    assert "error: no current entry in ledger.toml" in captured.err


def test_results_older_than_their_source_are_not_recorded(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    root, mutants, ledger = _tree(tmp_path)
    write_meta(mutants, "m.py", {"audit.m.x_a__mutmut_1": 1})
    source = root / "audit/m.py"
    later = (mutants / "audit/m.py.meta").stat().st_mtime + 5
    os.utime(source, (later, later))
    files = ["--mutants", str(mutants), "--ledger-file", str(ledger), "--root", str(root)]
    assert main([*files, "--record"]) == 0
    assert "audit/m.py: not recorded, the source changed after the run" in capsys.readouterr().err
    assert load_ledger(ledger) == {}


def test_a_ledger_entry_whose_counts_do_not_add_up_is_refused(tmp_path: Path) -> None:
    ledger = tmp_path / "ledger.toml"
    ledger.write_text(
        '["audit/m.py"]\nsha256 = "0"\nrecorded = "x"\nmutants = 3\nkilled = 1\n'
        'equivalent = 0\nsurvived = ["audit.m.x_a__mutmut_2"]\n',
        encoding="utf-8",
    )
    with pytest.raises(ValueError, match=r"\[audit/m\.py\] counts do not add up"):
        load_ledger(ledger)
    ledger.write_text('["audit/m.py"]\nsha256 = "0"\n', encoding="utf-8")
    with pytest.raises(ValueError, match=r"\[audit/m\.py\] is malformed"):
        load_ledger(ledger)


def test_every_current_entry_of_the_committed_ledger_matches_its_equivalent_list() -> None:
    """A module's listed equivalents are those it was recorded with plus recorded survivors
    reviewed since: a listed name the run killed, or never saw, makes the counts differ."""
    names = load_equivalent()
    modules = set(audit_modules())
    for module, entry in load_ledger().items():
        assert module in modules
        if entry.sha256 != source_digest(ROOT / module):
            continue  # stale: printed as such, never counted
        dotted = module.removesuffix(".py").replace("/", ".")
        listed = sum(n.startswith(f"{dotted}.x") for n in names)
        assert entry.reviewed(names).equivalent == listed, module


def test_a_survivor_listed_as_equivalent_after_the_record_leaves_the_denominator(
    tmp_path: Path,
) -> None:
    """Reviewed later, without a rerun: the equivalent one leaves the denominator, the other
    survivor still counts, and the score printed from the ledger says so."""
    root = tmp_path / "tree"
    (root / "audit").mkdir(parents=True)
    (root / "audit" / "m.py").write_text("x = 1\n", encoding="utf-8")
    digest = source_digest(root / "audit" / "m.py")
    ledger = tmp_path / "ledger.toml"
    ledger.write_text(
        f'["audit/m.py"]\nsha256 = "{digest}"\nrecorded = "2026-12-03T10:00Z"\nmutants = 4\n'
        'killed = 2\nequivalent = 0\nsurvived = ["audit.m.x_a__mutmut_1", '
        '"audit.m.x_a__mutmut_2"]\n',
        encoding="utf-8",
    )
    entry = load_ledger(ledger)["audit/m.py"]
    reviewed = entry.reviewed({"audit.m.x_a__mutmut_2": "why"})
    assert (reviewed.equivalent, reviewed.survived, reviewed.counted) == (
        1,
        ("audit.m.x_a__mutmut_1",),
        3,
    )
    assert entry.reviewed({}) is entry
    text, total = ledger_table(load_ledger(ledger), root, {"audit.m.x_a__mutmut_2": "why"})
    assert "| audit/m.py | 4 | 2 | 1 | 1 | 66.7 % |" in text
    assert total == pytest.approx(200 / 3)
