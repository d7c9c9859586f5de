"""CLI: ``citeseal evaluate-support FILE.csv [--judge NAME] [--labels …] [--part …]
[--folds K] [--json]``.

Scores a claim-support judge on a labelled CSV (claim, evidence, label; HealthVer's column
names by default) with :mod:`audit.support.evaluate`: macro-F1 over the judged pairs with the
coverage, per-class precision/recall, contradicted precision, the abstention rate and the
confusion matrix. ``--folds K`` scores the chosen part on K claim-grouped folds instead
(figures per fold, mean ± sd, and pooled); with ``--tune-thresholds`` (the rules judge only)
each fold's thresholds are chosen from :func:`audit.support.rules.threshold_grid` on the other
folds (``--min-coverage F``: among those judging at least F of the training pairs; with
``--part``, on every claim of the file outside the fold), so no figure is on a claim its
thresholds were chosen on. A malformed CSV (a missing
column, a short row, an unmapped label) is a one-line error naming the row, exit 2; nothing is
written.
"""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Annotated, cast

import typer

from audit.errors import InputError, undecodable_offset
from audit.support.evaluate import (
    COVERAGE_FLOOR,
    DEFAULT_LABELS,
    MAX_FOLDS,
    MIN_FOLDS,
    PARTS,
    CrossValidation,
    Evaluation,
    Part,
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
)
from audit.support.judges import DEFAULT_JUDGE, JUDGES, judge_by_name
from audit.support.model import Evidence
from audit.support.rules import RulesJudge, threshold_grid
from pipeline.cli.options import JsonOpt

MAX_BYTES = 256 * 1024 * 1024


def _read(file: Path) -> str:
    try:
        if file.stat().st_size > MAX_BYTES:
            raise InputError(f"{file} is larger than {MAX_BYTES // (1024 * 1024)} MB")
        data = file.read_bytes()
    except IsADirectoryError:
        raise InputError(f"{file} is a directory, not a CSV file") from None
    except FileNotFoundError:
        raise InputError(f"{file} does not exist") from None
    except OSError as error:
        raise InputError(f"cannot read {file}: {error.strerror or error}") from None
    try:
        return data.decode("utf-8-sig")
    except UnicodeDecodeError as error:
        raise InputError(f"{file} is not UTF-8 (byte {undecodable_offset(error, data)})") from None


def evaluate_file(
    file: Path,
    *,
    judge_name: str,
    labels: str,
    part: str,
    columns: tuple[str, str, str],
    folds: int | None = None,
    tune: bool = False,
    min_coverage: float | None = None,
) -> Evaluation | CrossValidation:
    """Read, judge and score one labelled CSV file (on ``folds`` claim-grouped folds when
    given; ``tune``: the rules judge's thresholds chosen inside each fold, among those that
    keep ``min_coverage`` of the training pairs judged)."""
    if folds is not None and not MIN_FOLDS <= folds <= MAX_FOLDS:
        raise InputError(f"--folds: expected {MIN_FOLDS} to {MAX_FOLDS}, got {folds}")
    if tune and folds is None:
        raise InputError("--tune-thresholds needs --folds K (thresholds are chosen per fold)")
    if tune and judge_name != "rules":
        raise InputError(
            f"--tune-thresholds: only the rules judge has thresholds, not {judge_name!r}"
        )
    if min_coverage is not None and not tune:
        raise InputError("--min-coverage needs --tune-thresholds (it bounds the choice)")
    if min_coverage is not None and not 0.0 <= min_coverage <= 1.0:
        raise InputError(f"--min-coverage: expected 0 to 1, got {min_coverage:g}")
    if part not in PARTS:
        raise InputError(f"--part: expected one of {', '.join(PARTS)}, got {part!r}")
    mapping = parse_label_map(labels)
    judge = judge_by_name(judge_name, os.environ)
    claim, evidence, label = columns
    pairs = read_pairs(
        _read(file), mapping, claim=claim, evidence=evidence, label=label, source=str(file)
    )
    chosen = select(pairs, cast(Part, part))
    if not chosen:
        raise InputError(f"{file}: no pairs in part {part!r}")
    if folds is not None:
        claim_folds(chosen, folds)  # refuse too many folds before judging anything
    if tune and folds is not None:
        floor = COVERAGE_FLOOR if min_coverage is None else min_coverage
        grid = threshold_grid()
        rules = RulesJudge()
        # every pair is read, whatever the part: each fold chooses on all claims outside it
        readings = [
            [r.label for r in rules.judge_many(p.claim, Evidence(text=p.evidence), grid)]
            for p in pairs
        ]
        candidates = {t.label: [row[i] for row in readings] for i, t in enumerate(grid)}
        scored = [i for i, p in enumerate(pairs) if claim_part(p.claim) == part]
        return cross_validate_tuned(
            pairs, candidates, folds, judge=judge.name, judge_version=judge.version,
            part=part, coverage_floor=floor, scored=None if part == "all" else scored,
        )  # fmt: skip
    predicted = [judge.judge(p.claim, Evidence(text=p.evidence)).label for p in chosen]
    if folds is not None:
        return cross_validate(
            chosen, predicted, folds, judge=judge.name, judge_version=judge.version, part=part
        )
    return score(chosen, predicted, judge=judge.name, judge_version=judge.version, part=part)


def evaluate_support_command(
    file: Annotated[Path, typer.Argument(metavar="FILE.csv", help="A labelled CSV file.")],
    judge: Annotated[
        str, typer.Option("--judge", help=f"The judge to score ({', '.join(sorted(JUDGES))}).")
    ] = DEFAULT_JUDGE,
    labels: Annotated[
        str, typer.Option("--labels", help="How the file's labels map to verdicts.")
    ] = DEFAULT_LABELS,
    part: Annotated[
        str,
        typer.Option(
            "--part", help="all, or one half of the claims (grouped by claim): tune, held-out."
        ),
    ] = "all",
    claim_column: Annotated[str, typer.Option("--claim-column", help="Claim column.")] = "claim",
    evidence_column: Annotated[
        str, typer.Option("--evidence-column", help="Evidence column.")
    ] = "evidence",
    label_column: Annotated[str, typer.Option("--label-column", help="Label column.")] = "label",
    folds: Annotated[
        int | None,
        typer.Option(
            "--folds",
            help=f"Score on K claim-grouped folds ({MIN_FOLDS}-{MAX_FOLDS}): per fold, mean ± sd.",
            metavar="K",
        ),
    ] = None,
    tune: Annotated[
        bool,
        typer.Option(
            "--tune-thresholds",
            help="With --folds: choose the rules judge's thresholds inside each fold.",
        ),
    ] = False,
    min_coverage: Annotated[
        float | None,
        typer.Option(
            "--min-coverage",
            help=f"With --tune-thresholds: coverage a choice must keep (default {COVERAGE_FLOOR}).",
            metavar="F",
        ),
    ] = None,
    json_out: JsonOpt = False,
) -> None:
    """Score a claim-support judge on a labelled CSV (macro-F1, P/R, confusion matrix)."""
    result = evaluate_file(
        file,
        judge_name=judge.strip(),
        labels=labels,
        part=part.strip(),
        columns=(claim_column, evidence_column, label_column),
        folds=folds,
        tune=tune,
        min_coverage=min_coverage,
    )
    if json_out:
        typer.echo(json.dumps(result.model_dump(mode="json"), indent=2))
        return
    lines = cross_validation_text(result) if isinstance(result, CrossValidation) else None
    for line in lines or to_text(cast(Evaluation, result)):
        typer.echo(line)


def register(app: typer.Typer) -> None:
    """Attach ``citeseal evaluate-support`` to the root app."""
    app.command("evaluate-support")(evaluate_support_command)
