"""Scoring a judge on labelled claim–evidence pairs (``citeseal evaluate-support``).

Pure: :func:`read_pairs` takes the CSV's text, :func:`score` takes gold labels and
predictions. Rules:

* **Columns.** ``claim``, ``evidence`` and ``label`` by default (HealthVer's names); any other
  name can be given. A missing column, a row with the wrong number of fields, an empty claim or
  label, or a label that is not mapped is an :class:`~audit.errors.InputError` naming the row
  (the header is row 1). An empty evidence cell is kept (the judge says what it makes of it).
* **Labels.** Gold labels are mapped to support labels (default
  ``Supports=supported,Refutes=contradicted,Neutral=not_mentioned``; names compared
  case-insensitively); a gold label may not be ``abstain``.
* **Figures.** ``abstain`` is not a verdict: precision, recall and F1 per class, and their
  macro mean, are over the non-abstained pairs, and the coverage (non-abstained / all) is
  stated beside them; ``recall_all`` counts abstentions as misses. A class never predicted has
  no precision (``None``) and F1 0.
* **Splits.** :func:`claim_part` puts every pair of one claim in the same part (by a hash of
  the claim text, case and spacing folded), so a tuning part never leaks a claim into the
  held-out part, as random pair splits would.
"""

from __future__ import annotations

import csv
import hashlib
import io
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Literal, cast

from pydantic import BaseModel, ConfigDict

from audit.errors import InputError
from audit.support.model import SUPPORT_LABELS, SupportLabel

VERDICTS: tuple[SupportLabel, ...] = ("supported", "contradicted", "not_mentioned")
DEFAULT_LABELS = "Supports=supported,Refutes=contradicted,Neutral=not_mentioned"
Part = Literal["all", "tune", "held-out"]
PARTS: tuple[Part, ...] = ("all", "tune", "held-out")


@dataclass(frozen=True, slots=True)
class Pair:
    """One labelled pair; ``row`` is its row in the file (the header is row 1)."""

    row: int
    claim: str
    evidence: str
    gold: SupportLabel


def parse_label_map(text: str) -> dict[str, SupportLabel]:
    """``"Supports=supported,Refutes=contradicted"`` → a case-folded map; InputError if bad."""
    mapping: dict[str, SupportLabel] = {}
    for item in text.split(","):
        name, sep, label = item.partition("=")
        name, label = name.strip(), label.strip()
        if not sep or not name or not label:
            raise InputError(f"--labels: expected NAME=LABEL, got {item.strip()!r}")
        if label not in VERDICTS:
            raise InputError(
                f"--labels: {label!r} is not a verdict; expected one of {', '.join(VERDICTS)}"
            )
        mapping[name.casefold()] = cast(SupportLabel, label)
    return mapping


def read_pairs(
    text: str,
    labels: Mapping[str, SupportLabel],
    *,
    claim: str = "claim",
    evidence: str = "evidence",
    label: str = "label",
    source: str = "the CSV",
) -> list[Pair]:
    """The pairs of a labelled CSV's text (see the module docstring for the rules)."""
    reader = csv.reader(io.StringIO(text, newline=""), strict=True)
    try:
        header = next(reader, None)
    except csv.Error as error:
        raise InputError(f"{source} row 1: {error}") from None
    if not header:
        raise InputError(f"{source} is empty; expected a header row")
    names = [h.strip().lstrip("\ufeff") for h in header]
    where: dict[str, int] = {}
    for role, column in (("claim", claim), ("evidence", evidence), ("label", label)):
        if column not in names:
            raise InputError(
                f"{source} has no {column!r} column for the {role} (header: {', '.join(names)})"
            )
        where[role] = names.index(column)
    pairs: list[Pair] = []
    row = 1
    try:
        for row, fields in enumerate(reader, start=2):
            if not fields:
                continue
            pairs.append(_pair(fields, row, len(names), where, labels, source))
    except csv.Error as error:
        raise InputError(f"{source} row {row + 1}: {error}") from None
    if not pairs:
        raise InputError(f"{source} has a header but no rows")
    return pairs


def _pair(
    fields: list[str],
    row: int,
    width: int,
    where: Mapping[str, int],
    labels: Mapping[str, SupportLabel],
    source: str,
) -> Pair:
    if len(fields) != width:
        raise InputError(f"{source} row {row}: expected {width} fields, got {len(fields)}")
    claim, evidence = fields[where["claim"]].strip(), fields[where["evidence"]]
    gold = fields[where["label"]].strip()
    if not claim:
        raise InputError(f"{source} row {row}: the claim is empty")
    mapped = labels.get(gold.casefold())
    if mapped is None:
        known = ", ".join(sorted(labels))
        raise InputError(f"{source} row {row}: label {gold!r} is not mapped (mapped: {known})")
    return Pair(row, claim, evidence, mapped)


def claim_part(claim: str) -> Literal["tune", "held-out"]:
    """The part a claim belongs to: half the claims (by hash) tune, the others are held out."""
    folded = " ".join(claim.casefold().split())
    digest = hashlib.sha256(folded.encode("utf-8")).digest()
    return "tune" if digest[0] % 2 == 0 else "held-out"


def select(pairs: Iterable[Pair], part: Part) -> list[Pair]:
    """The pairs of one part (``all``: every pair)."""
    return [p for p in pairs if part == "all" or claim_part(p.claim) == part]


class ClassScore(BaseModel):
    """Precision/recall/F1 of one verdict class over the non-abstained pairs."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    label: SupportLabel
    gold: int
    predicted: int
    correct: int
    precision: float | None
    recall: float | None
    recall_all: float | None
    f1: float


class Evaluation(BaseModel):
    """The figures of one judge on one labelled set."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    judge: str
    judge_version: str
    part: str
    pairs: int
    claims: int
    abstained: int
    coverage: float
    abstention_rate: float
    macro_f1: float
    accuracy: float | None
    contradicted_precision: float | None
    classes: list[ClassScore]
    confusion: dict[str, dict[str, int]]
    """gold label → predicted label (abstain included) → count."""


def _ratio(top: int, bottom: int) -> float | None:
    return top / bottom if bottom else None


def score(
    pairs: Sequence[Pair],
    predicted: Sequence[str],
    *,
    judge: str,
    judge_version: str,
    part: str = "all",
) -> Evaluation:
    """The figures for ``predicted[i]`` (a support label) against ``pairs[i].gold``."""
    if len(pairs) != len(predicted):
        raise ValueError("one prediction per pair")
    unknown = set(predicted) - set(SUPPORT_LABELS)
    if unknown:
        raise ValueError(f"not support labels: {sorted(unknown)}")
    confusion: dict[str, dict[str, int]] = {g: dict.fromkeys(SUPPORT_LABELS, 0) for g in VERDICTS}
    for pair, label in zip(pairs, predicted, strict=True):
        confusion[pair.gold][label] += 1
    abstained = sum(row["abstain"] for row in confusion.values())
    judged = len(pairs) - abstained
    classes: list[ClassScore] = []
    for label in VERDICTS:
        correct = confusion[label][label]
        gold_all = sum(confusion[label].values())
        gold = gold_all - confusion[label]["abstain"]
        made = sum(confusion[g][label] for g in VERDICTS)
        precision, recall = _ratio(correct, made), _ratio(correct, gold)
        f1 = 0.0
        if precision and recall:
            f1 = 2 * precision * recall / (precision + recall)
        classes.append(
            ClassScore(
                label=label,
                gold=gold_all,
                predicted=made,
                correct=correct,
                precision=precision,
                recall=recall,
                recall_all=_ratio(correct, gold_all),
                f1=f1,
            )
        )
    return Evaluation(
        judge=judge,
        judge_version=judge_version,
        part=part,
        pairs=len(pairs),
        claims=len({" ".join(p.claim.casefold().split()) for p in pairs}),
        abstained=abstained,
        coverage=judged / len(pairs) if pairs else 0.0,
        abstention_rate=abstained / len(pairs) if pairs else 0.0,
        macro_f1=sum(c.f1 for c in classes) / len(classes),
        accuracy=_ratio(sum(c.correct for c in classes), judged),
        contradicted_precision=classes[1].precision,
        classes=classes,
        confusion=confusion,
    )


def _pct(value: float | None) -> str:
    return "-" if value is None else f"{value:.3f}"


def to_text(result: Evaluation) -> list[str]:
    """A readable report of an evaluation."""
    lines = [
        f"judge {result.judge} {result.judge_version}; part {result.part}: "
        f"{result.pairs} pairs, {result.claims} claims",
        f"coverage {_pct(result.coverage)} ({result.pairs - result.abstained} judged, "
        f"{result.abstained} abstained; abstention rate {_pct(result.abstention_rate)})",
        f"macro-F1 {_pct(result.macro_f1)} over judged pairs; accuracy {_pct(result.accuracy)}; "
        f"contradicted precision {_pct(result.contradicted_precision)}",
        f"{'class':<14} {'gold':>5} {'pred':>5} {'P':>6} {'R':>6} {'R(all)':>7} {'F1':>6}",
    ]
    for c in result.classes:
        lines.append(
            f"{c.label:<14} {c.gold:>5} {c.predicted:>5} {_pct(c.precision):>6} "
            f"{_pct(c.recall):>6} {_pct(c.recall_all):>7} {_pct(c.f1):>6}"
        )
    lines.append("confusion (rows gold, columns predicted):")
    lines.append(f"{'':<14} " + " ".join(f"{p:>13}" for p in SUPPORT_LABELS))
    for gold, row in result.confusion.items():
        lines.append(f"{gold:<14} " + " ".join(f"{row[p]:>13}" for p in SUPPORT_LABELS))
    return lines
