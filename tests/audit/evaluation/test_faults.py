"""Injected faults on the small setting: every fault caught, or explained as one that cannot
be planted."""

from __future__ import annotations

from audit.evaluation.faults import Fault, faults, run_faults, try_fault


def test_every_injected_fault_is_caught_or_explained() -> None:
    # claims, and the answers written as they are (the reference categories are those only)
    outcomes = run_faults(seed=0, per_category=16, styles=("claims", "as_written"))
    assert len(outcomes) >= 100
    failed = [f"{o.fault.name}: {o.reason}" for o in outcomes if not o.ok]
    assert failed == []
    explained = sorted(o.fault.name for o in outcomes if not o.caught)
    assert explained == [
        "fold removed: U+00A0 NO-BREAK SPACE",
        "fold removed: U+2007 FIGURE SPACE",
        "fold removed: U+202F NARROW NO-BREAK SPACE",
    ]


def test_each_fold_of_the_contract_table_is_a_fault() -> None:
    names = {f.name for f in faults()}
    assert "fold removed: U+2212 MINUS SIGN" in names
    assert "fold removed: U+FEFF ZERO WIDTH NO-BREAK SPACE" in names
    assert "check code ignores the path" in names
    assert "references: an outage read as no such record" in names
    assert "support: hedges not read" in names
    assert "overall: a contradicted citation does not warn" in names


def test_a_fault_that_cannot_be_injected_is_a_failure_not_a_skip() -> None:
    def missing(stack: object) -> None:
        raise LookupError("audit.verdicts.rule_gone does not exist")

    outcome = try_fault(Fault("a rule renamed", "verdict", missing), None, 0, 1)
    assert not outcome.ok
    assert outcome.reason == "could not be injected: audit.verdicts.rule_gone does not exist"
