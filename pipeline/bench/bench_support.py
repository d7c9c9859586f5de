"""Claim-support throughput of the default judge on generated pairs (``make bench``).

The pairs are generated at run time (never committed): invented claims about invented drugs
against ~400-character passages of three sentences, a mix that exercises every rule —
paraphrases, negated and opposite directions, null findings, ratios with intervals, figures
that agree or not, unrelated passages — each passage with two PubTator3-like entities.
Figures:

- support judgments/s — ``RulesJudge.judge`` over the pairs;
- a reference measured in the same run (``rapidfuzz.fuzz.token_set_ratio`` of each claim
  against its passage, the one library call every judgment makes at least once per sentence),
  which shows how loaded the shared machine was.
"""

from __future__ import annotations

import random
import time
from collections.abc import Callable
from pathlib import Path

from rapidfuzz import fuzz

from audit.support.model import Entity, Evidence
from audit.support.rules import RulesJudge
from pipeline.bench import Figure

PAIRS = 20_000
DRUGS = ("zentravir", "farrocillin", "quendamab", "lorvaxin", "pelmotide")
OUTCOMES = ("the risk of stroke", "mortality", "hospital admission", "the rate of falls")
CLAIMS = (
    "{drug} raises {outcome}",
    "{drug} lowers {outcome} by 30 %",
    "{drug} does not change {outcome}",
    "{drug} is associated with {outcome}",
    "{drug} raises {outcome} in older adults with kidney disease and heart failure",
)
FINDINGS = (
    "{drug} does not increase {outcome}.",
    "{drug} lowered {outcome} by 13 % in the invented cohort.",
    "{drug} and {outcome}: HR 0.97 (0.84\u20131.12).",
    "{drug} significantly increased {outcome} (OR 1.8, 95% CI 1.2\u20132.6).",
    "Patients taking {drug} had a higher {outcome} than those on placebo.",
    "The invented registry followed patients in Farrowland for five years.",
)
FILLER = "The invented cohort was followed in an invented registry for invented outcomes."


def _pairs(rng: random.Random) -> list[tuple[str, Evidence]]:
    pairs: list[tuple[str, Evidence]] = []
    for _ in range(PAIRS):
        drug, outcome = rng.choice(DRUGS), rng.choice(OUTCOMES)
        claim = rng.choice(CLAIMS).format(drug=drug.capitalize(), outcome=outcome)
        finding = rng.choice(FINDINGS).format(drug=drug.capitalize(), outcome=outcome)
        text = f"{FILLER} {finding} {FILLER} {FILLER}"
        at = text.find(drug.capitalize())
        entities = (
            Entity(at, at + len(drug), "Chemical", f"MESH:D99{DRUGS.index(drug)}", drug)
            if at >= 0
            else Entity(0, 3, "Chemical", "MESH:D990", "The"),
            Entity(0, 3, "Species", "9606", "The"),
        )
        pairs.append((claim, Evidence(text=text, entities=entities)))
    return pairs


def _rate(n: int, action: Callable[[], object]) -> float:
    start = time.perf_counter()
    action()
    return n / (time.perf_counter() - start)


def run(workdir: Path) -> list[Figure]:
    """The support figures (``workdir`` is unused: nothing is written)."""
    del workdir
    pairs = _pairs(random.Random(16))
    judge = RulesJudge()
    judged = _rate(len(pairs), lambda: [judge.judge(c, e) for c, e in pairs])
    reference = _rate(
        len(pairs), lambda: [fuzz.token_set_ratio(c.lower(), e.text.lower()) for c, e in pairs]
    )
    return [
        Figure("support judgments (rules judge)", judged, "/s", 500),
        Figure("reference: rapidfuzz token_set_ratio (load gauge)", reference, "/s"),
    ]
