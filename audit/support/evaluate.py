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
  no precision (``None``) and F1 0. Contradicted precision is given with its count (k of n)
  and its Wilson 95 % interval (:func:`wilson_interval`), since it often rests on a few
  predictions.
* **Splits.** :func:`claim_part` puts every pair of one claim in the same part (by a hash of
  the claim text, case and spacing folded), so a tuning part never leaks a claim into the
  held-out part, as random pair splits would.
* **Cross-validation.** :func:`claim_folds` deals the distinct claims, ordered by the same
  hash, round-robin into ``k`` folds (so fold sizes differ by at most one claim, and the
  assignment depends only on the set of claims, never on row order); every pair goes to its
  claim's fold, every row is in exactly one fold, and no claim is in two. :func:`cross_validate`
  scores each fold and gives the mean and spread (sample standard deviation) of each figure
  over the folds; a figure a fold cannot have (a precision with no prediction of the class) is
  left out of the mean, and the number of folds that had it is stated. The judge is fixed: no
  fold's figures are used to set anything.
* **Tuning inside the folds.** :func:`cross_validate_tuned` takes several candidate settings
  of one judge (their predictions on every pair) and, for each fold, chooses one on the
  *other* folds only (the training part) by :func:`choose`: among the candidates whose
  training figures have contradicted precision ≥ :data:`PRECISION_FLOOR` and coverage ≥
  :data:`COVERAGE_FLOOR` (or the floor given), the highest macro-F1 (a tie: the earlier
  candidate); when none meets both floors, the highest macro-F1 among those that meet the
  coverage floor (else of all), and the fold says so — so a candidate that abstains on most
  pairs is never chosen for a macro-F1 that rests on few of them. The fold's figures are the
  chosen candidate's on the fold itself, so every figure is on claims its setting never saw.
  Scoring one part of the claims, each fold chooses on every other pair of the file (the
  other folds of the part and the whole other part), still never on a claim of the fold.
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
    names = [h.lstrip("\ufeff").strip() for h in header]
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


def claim_key(claim: str) -> str:
    """A claim's identity for grouping: its text with case and spacing folded."""
    return " ".join(claim.casefold().split())


def claim_hash(claim: str) -> bytes:
    """The SHA-256 of :func:`claim_key`: the one hash every claim-grouped split uses."""
    return hashlib.sha256(claim_key(claim).encode("utf-8")).digest()


def claim_part(claim: str) -> Literal["tune", "held-out"]:
    """The part a claim belongs to: half the claims (by hash) tune, the others are held out."""
    return "tune" if claim_hash(claim)[0] % 2 == 0 else "held-out"


MIN_FOLDS = 2
MAX_FOLDS = 20


def claim_folds(pairs: Sequence[Pair], folds: int) -> list[int]:
    """The fold (0 … ``folds`` - 1) of each pair: claims ordered by :func:`claim_hash`, dealt
    round-robin; InputError when ``folds`` is out of range or above the number of claims."""
    if not MIN_FOLDS <= folds <= MAX_FOLDS:
        raise InputError(f"--folds: expected {MIN_FOLDS} to {MAX_FOLDS}, got {folds}")
    keys = {claim_key(p.claim) for p in pairs}
    if folds > len(keys):
        raise InputError(f"--folds {folds}: the pairs hold only {len(keys)} claims")
    order = sorted(keys, key=lambda k: (claim_hash(k), k))
    fold_of = {key: rank % folds for rank, key in enumerate(order)}
    return [fold_of[claim_key(p.claim)] for p in pairs]


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
    contradicted_precision_interval: tuple[float, float] | None = None
    """The Wilson 95 % interval of :attr:`contradicted_precision` (None: no prediction)."""
    classes: list[ClassScore]
    confusion: dict[str, dict[str, int]]
    """gold label → predicted label (abstain included) → count."""


def _ratio(top: int, bottom: int) -> float | None:
    return top / bottom if bottom else None


WILSON_Z = 1.959964
"""The standard normal quantile of a two-sided 95 % interval."""


def wilson_interval(k: int, n: int, z: float = WILSON_Z) -> tuple[float, float] | None:
    """The Wilson score interval of a proportion of ``k`` successes in ``n`` trials (None when
    ``n`` is 0): unlike the normal approximation, it stays inside [0, 1] and is not empty at
    ``k == n``, which matters for a precision resting on a handful of predictions."""
    if not 0 <= k <= n:
        raise ValueError(f"expected 0 <= k <= n, got k={k}, n={n}")
    if n == 0:
        return None
    share = k / n
    middle = (share + z * z / (2 * n)) / (1 + z * z / n)
    half = z / (1 + z * z / n) * (share * (1 - share) / n + z * z / (4 * n * n)) ** 0.5
    low = 0.0 if k == 0 else max(0.0, middle - half)
    return low, 1.0 if k == n else min(1.0, middle + half)


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
        claims=len({claim_key(p.claim) for p in pairs}),
        abstained=abstained,
        coverage=judged / len(pairs) if pairs else 0.0,
        abstention_rate=abstained / len(pairs) if pairs else 0.0,
        macro_f1=sum(c.f1 for c in classes) / len(classes),
        accuracy=_ratio(sum(c.correct for c in classes), judged),
        contradicted_precision=classes[1].precision,
        contradicted_precision_interval=wilson_interval(classes[1].correct, classes[1].predicted),
        classes=classes,
        confusion=confusion,
    )


class Spread(BaseModel):
    """One figure over the folds: mean and sample standard deviation over the ``folds`` that
    have it (a precision needs a prediction of its class)."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    mean: float | None
    sd: float | None
    folds: int


FOLD_FIGURES = (
    "coverage",
    "abstention_rate",
    "macro_f1",
    "accuracy",
    "contradicted_precision",
    "contradicted_recall",
    "contradicted_recall_all",
)


class Choice(BaseModel):
    """The candidate a fold's training part chose, and its training figures."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    candidate: str
    met_floors: bool
    training_macro_f1: float
    training_contradicted_precision: float | None
    training_coverage: float


class CrossValidation(BaseModel):
    """A judge scored fold by fold on claim-grouped folds, and the spread of its figures."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    judge: str
    judge_version: str
    part: str
    k: int
    folds: list[Evaluation]
    spread: dict[str, Spread]
    """figure name (:data:`FOLD_FIGURES`) → mean ± sd over the folds."""
    pooled: Evaluation
    """The same predictions scored all together."""
    choices: list[Choice] | None = None
    """With tuning inside the folds: the candidate each fold's training part chose."""
    coverage_floor: float | None = None
    """With tuning inside the folds: the training coverage a choice had to keep."""
    trained_on_all: bool = False
    """With tuning on one part: each fold chose on every other pair of the file (the other
    part included), not only on the other folds of its part."""


def _figure(result: Evaluation, name: str) -> float | None:
    if name == "contradicted_recall":
        return result.classes[1].recall
    if name == "contradicted_recall_all":
        return result.classes[1].recall_all
    return cast(float | None, getattr(result, name))


def _spread(values: list[float]) -> Spread:
    if not values:
        return Spread(mean=None, sd=None, folds=0)
    mean = sum(values) / len(values)
    if len(values) < 2:
        return Spread(mean=mean, sd=None, folds=1)
    sd = (sum((v - mean) ** 2 for v in values) / (len(values) - 1)) ** 0.5
    return Spread(mean=mean, sd=sd, folds=len(values))


def cross_validate(
    pairs: Sequence[Pair],
    predicted: Sequence[str],
    folds: int,
    *,
    judge: str,
    judge_version: str,
    part: str = "all",
) -> CrossValidation:
    """Score ``predicted`` fold by fold on :func:`claim_folds` (see the module docstring)."""
    fold_of = claim_folds(pairs, folds)
    results: list[Evaluation] = []
    for fold in range(folds):
        chosen = [i for i, f in enumerate(fold_of) if f == fold]
        results.append(
            score(
                [pairs[i] for i in chosen],
                [predicted[i] for i in chosen],
                judge=judge,
                judge_version=judge_version,
                part=f"{part} fold {fold + 1}/{folds}",
            )
        )
    spread: dict[str, Spread] = {}
    for name in FOLD_FIGURES:
        values = [v for v in (_figure(r, name) for r in results) if v is not None]
        spread[name] = _spread(values)
    pooled = score(pairs, predicted, judge=judge, judge_version=judge_version, part=part)
    return CrossValidation(
        judge=judge,
        judge_version=judge_version,
        part=part,
        k=folds,
        folds=results,
        spread=spread,
        pooled=pooled,
    )


def cross_validation_text(result: CrossValidation) -> list[str]:
    """A readable report of a cross-validation: one line per fold, the spread, the pooled."""
    lines = [
        f"judge {result.judge} {result.judge_version}; part {result.part}; "
        f"{result.k} claim-grouped folds",
        f"{'fold':<6} {'pairs':>5} {'claims':>6} {'cover':>6} {'macroF1':>7} {'acc':>6} "
        f"{'contra P':>8} {'R':>6} {'R(all)':>7} {'k/n':>5}",
    ]
    for index, fold in enumerate(result.folds, start=1):
        contra = fold.classes[1]
        line = (
            f"{index:<6} {fold.pairs:>5} {fold.claims:>6} {_pct(fold.coverage):>6} "
            f"{_pct(fold.macro_f1):>7} {_pct(fold.accuracy):>6} "
            f"{_pct(fold.contradicted_precision):>8} {_pct(contra.recall):>6} "
            f"{_pct(contra.recall_all):>7} {f'{contra.correct}/{contra.predicted}':>5}"
        )
        if result.choices is not None:
            choice = result.choices[index - 1]
            floors = "" if choice.met_floors else ", no candidate met the floors"
            line += (
                f"  chose {choice.candidate} (training macro-F1 "
                f"{_pct(choice.training_macro_f1)}{floors})"
            )
        lines.append(line)
    if result.coverage_floor is not None:
        where = "every other claim of the file" if result.trained_on_all else "the other folds"
        lines.append(
            f"chosen on {where}: contradicted precision >= {PRECISION_FLOOR} and "
            f"coverage >= {result.coverage_floor:g}, then the highest macro-F1"
        )
    for name in FOLD_FIGURES:
        value = result.spread[name]
        note = ""
        if value.folds != result.k:
            note = f" (over {value.folds} of {result.k} folds; the others have none)"
        lines.append(f"{name} mean {_pct(value.mean)} ± {_pct(value.sd)}{note}")
    lines.append("pooled over the folds:")
    return lines + to_text(result.pooled)


PRECISION_FLOOR = 0.8
COVERAGE_FLOOR = 0.5


def choose(
    pairs: Sequence[Pair],
    candidates: Mapping[str, Sequence[str]],
    rows: Sequence[int],
    *,
    coverage_floor: float = COVERAGE_FLOOR,
) -> Choice:
    """The candidate chosen on ``pairs[i] for i in rows`` (see the module docstring)."""
    if not candidates:
        raise ValueError("no candidates to choose from")
    chosen = [pairs[i] for i in rows]
    best: tuple[bool, bool, float, int] | None = None
    winner: Choice | None = None
    for order, (name, predicted) in enumerate(candidates.items()):
        result = score(chosen, [predicted[i] for i in rows], judge="-", judge_version="-")
        precision = result.contradicted_precision
        covers = result.coverage >= coverage_floor
        meets = covers and precision is not None and precision >= PRECISION_FLOOR
        key = (meets, covers, result.macro_f1, -order)
        if best is None or key > best:
            best = key
            winner = Choice(
                candidate=name,
                met_floors=meets,
                training_macro_f1=result.macro_f1,
                training_contradicted_precision=precision,
                training_coverage=result.coverage,
            )
    assert winner is not None
    return winner


def cross_validate_tuned(
    pairs: Sequence[Pair],
    candidates: Mapping[str, Sequence[str]],
    folds: int,
    *,
    judge: str,
    judge_version: str,
    part: str = "all",
    coverage_floor: float = COVERAGE_FLOOR,
    scored: Sequence[int] | None = None,
) -> CrossValidation:
    """Cross-validate with a candidate chosen inside each fold's training part.

    ``scored`` (row indexes of one part of the claims; default every row) are the pairs dealt
    into folds and scored; each fold chooses on every other pair of ``pairs`` — the other
    folds *and* the rows outside ``scored`` — never on a claim of the fold itself."""
    if any(len(p) != len(pairs) for p in candidates.values()):
        raise ValueError("one prediction per pair for every candidate")
    rows = range(len(pairs)) if scored is None else scored
    chosen = [pairs[i] for i in rows]
    fold_of = claim_folds(chosen, folds)
    fold_of_claim = {claim_key(p.claim): f for p, f in zip(chosen, fold_of, strict=True)}
    predicted: list[str] = [""] * len(chosen)
    choices: list[Choice] = []
    for fold in range(folds):
        training = [i for i, p in enumerate(pairs) if fold_of_claim.get(claim_key(p.claim)) != fold]
        choice = choose(pairs, candidates, training, coverage_floor=coverage_floor)
        choices.append(choice)
        for n, (i, f) in enumerate(zip(rows, fold_of, strict=True)):
            if f == fold:
                predicted[n] = candidates[choice.candidate][i]
    result = cross_validate(
        chosen, predicted, folds, judge=judge, judge_version=judge_version, part=part
    )
    update = {
        "choices": choices,
        "coverage_floor": coverage_floor,
        "trained_on_all": scored is not None,
    }
    return result.model_copy(update=update)


def _pct(value: float | None) -> str:
    return "-" if value is None else f"{value:.3f}"


def _precision(result: Evaluation) -> str:
    """``0.714 (5 of 7; Wilson 95 % 0.359-0.918)``, or ``-`` with no prediction."""
    interval = result.contradicted_precision_interval
    if result.contradicted_precision is None or interval is None:
        return "-"
    contra = result.classes[1]
    return (
        f"{_pct(result.contradicted_precision)} ({contra.correct} of {contra.predicted}; "
        f"Wilson 95 % {_pct(interval[0])}-{_pct(interval[1])})"
    )


def to_text(result: Evaluation) -> list[str]:
    """A readable report of an evaluation."""
    lines = [
        f"judge {result.judge} {result.judge_version}; part {result.part}: "
        f"{result.pairs} pairs, {result.claims} claims",
        f"coverage {_pct(result.coverage)} ({result.pairs - result.abstained} judged, "
        f"{result.abstained} abstained; abstention rate {_pct(result.abstention_rate)})",
        f"macro-F1 {_pct(result.macro_f1)} over judged pairs; accuracy {_pct(result.accuracy)}; "
        f"contradicted precision {_precision(result)}",
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
