"""The support bench's generated pairs (never the bench itself: it is slow)."""

from __future__ import annotations

import random
from collections import Counter

from audit.support.rules import RulesJudge
from pipeline.bench.bench_support import _pairs


def test_the_generated_pairs_exercise_every_label_and_keep_entities_inside_the_text() -> None:
    pairs = _pairs(random.Random(16))[:400]
    judge = RulesJudge()
    labels = Counter(judge.judge(claim, evidence).label for claim, evidence in pairs)
    assert set(labels) == {"supported", "contradicted", "not_mentioned", "abstain"}
    for _, evidence in pairs:
        for entity in evidence.entities:
            assert 0 <= entity.start < entity.end <= len(evidence.text)
