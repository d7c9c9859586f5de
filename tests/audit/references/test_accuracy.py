"""The labelled accuracy set (tests/audit/references/accuracy.py): its size and the floors.

Calling a real paper fabricated is the worst error, hence the hallucinated-precision floor.
The set is ours and synthetic; its figures are printed by ``make check-accuracy``.
"""

from __future__ import annotations

from collections import Counter

import pytest

from audit.references.check import TIERS
from tests.audit.fixture_scope import per_module
from tests.audit.references.accuracy import Scores, evaluate, labelled_set, render


@pytest.fixture(scope=per_module, params=["accuracy.json", "accuracy.md"])
def scores(request: pytest.FixtureRequest) -> Scores:
    return evaluate(request.param)


def test_the_set_has_at_least_300_references_and_every_tier() -> None:
    items = labelled_set()
    assert len(items) >= 300
    assert {c.label for c in items} == set(TIERS)


def test_hallucinated_precision_is_at_least_0_95(scores: Scores) -> None:
    precision = scores.precision["hallucinated"]
    assert precision is not None and precision >= 0.95


def test_no_tier_falls_below_0_9_precision_or_recall(scores: Scores) -> None:
    low = {
        (tier, which): value
        for tier in TIERS
        for which, value in (("precision", scores.precision[tier]), ("recall", scores.recall[tier]))
        if value is None or value < 0.9
    }
    assert low == {}


def test_the_report_names_every_wrong_prediction() -> None:
    made = Scores(
        total=2,
        precision=dict.fromkeys(TIERS, None),
        recall=dict.fromkeys(TIERS, None),
        confusion=Counter(),
        errors=[("wrong-doi", "mismatch", "hallucinated")],
    )
    assert "  wrong: wrong-doi (mismatch) -> hallucinated x1\n" in render(made, "x.json")
