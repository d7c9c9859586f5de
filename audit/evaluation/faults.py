"""Injected faults: break one decision of the audit at a time and rerun the evaluation.

    python -m audit.evaluation.faults [--seed N] [--per-category K] [--json-out F]

Each fault patches one thing, as a real bug would: a fold of the contract's table removed, a
lenient comparator, a check code that ignores the path, one rule of the verdict ladder, of the
flags, of the sentence statuses, of the metrics or of the overall verdict made wrong. The
evaluation (planting included, so a minting fault mints as a buggy installation would) runs
under the patch; a fault is caught when any planted case fails or the audit crashes. A fault
that cannot be caught says why (:attr:`Fault.expected_miss`): a miss without a reason, or a
"cannot be caught" fault that is caught, is a failure of the evaluation itself.

Every patch names an attribute of the audit's modules; an attribute that no longer exists is
reported as a fault that could not be injected (a failure), never skipped.
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from collections.abc import Collection
from contextlib import ExitStack
from dataclasses import dataclass
from pathlib import Path

from audit.evaluation import DEMO_KEY, run
from audit.evaluation.fault_catalogue import Fault, faults
from audit.evaluation.scoring import Prepared, prepare, score
from audit.evaluation.world import generated_world
from audit.keys import Keyring

__all__ = ["EvaluationFailed", "Fault", "Outcome", "faults", "run_faults", "try_fault"]


@dataclass(frozen=True)
class Outcome:
    fault: Fault
    caught: bool
    reason: str
    seconds: float

    @property
    def ok(self) -> bool:
        return self.caught == (self.fault.expected_miss is None)


def try_fault(fault: Fault, prepared: Prepared | None, seed: int, per_category: int) -> Outcome:
    """Rerun the evaluation with ``fault`` injected: caught, and why. ``prepared``: the
    planted answers to audit again (None: plant again under the fault, as a fault in minting
    needs); the generated world is rebuilt under the fault either way (its passages are
    folded when the corpus is built)."""
    started = time.perf_counter()
    with ExitStack() as stack:
        try:
            fault.patch(stack)
        except LookupError as error:  # the patch names something the audit no longer has
            took = time.perf_counter() - started
            return Outcome(fault, False, f"could not be injected: {error}", took)
        try:
            if prepared is None or fault.replant:
                result = run(seed, per_category, stop_at_first=True)
            else:
                worlds = [generated_world()]
                result = score(prepared, worlds, Keyring.demo_keyring(), stop_at_first=True)
        except Exception as error:  # noqa: BLE001  # a crash under a fault is the fault caught
            why = f"the audit crashed: {type(error).__name__}: {error}"
            return Outcome(fault, True, why, time.perf_counter() - started)
    seconds = time.perf_counter() - started
    if result.failures:
        return Outcome(fault, True, result.failures[0], seconds)
    return Outcome(fault, False, fault.expected_miss or "no planted case failed", seconds)


def run_faults(
    seed: int = 0, per_category: int = 16, styles: Collection[str] | None = None
) -> list[Outcome]:
    """Every fault tried in turn (``per_category`` ≥ 16 plants every fold character). The
    cases are planted and parsed once (in ``styles`` only, when given) and audited again
    under each fault; a fault in minting plants again."""
    prepared = prepare(
        [generated_world()],
        Keyring.demo_keyring(),
        DEMO_KEY,
        seed=seed,
        per_category=per_category,
        styles=styles,
    )
    baseline = score(prepared, [generated_world()], Keyring.demo_keyring())
    if not baseline.ok:
        raise EvaluationFailed(baseline.failures)
    return [try_fault(fault, prepared, seed, per_category) for fault in faults()]


class EvaluationFailed(Exception):
    """The evaluation fails without any fault: faults would be caught for the wrong reason."""

    def __init__(self, failures: list[str]) -> None:
        super().__init__(f"the evaluation fails without a fault: {failures[0]}")
        self.failures = failures


def to_json(outcomes: list[Outcome]) -> dict[str, object]:
    return {
        "faults": len(outcomes),
        "caught": sum(o.caught for o in outcomes),
        "explained": sum(not o.caught and o.ok for o in outcomes),
        "failed": sum(not o.ok for o in outcomes),
        "outcomes": [
            {
                "fault": o.fault.name,
                "group": o.fault.group,
                "caught": o.caught,
                "reason": o.reason,
                "seconds": round(o.seconds, 2),
            }
            for o in outcomes
        ],
    }


def to_text(outcomes: list[Outcome]) -> str:
    lines = []
    for o in outcomes:
        mark = "caught" if o.caught else ("explained" if o.ok else "NOT CAUGHT")
        lines.append(f"{mark:10} {o.fault.name}: {o.reason[:160]}")
    caught = sum(o.caught for o in outcomes)
    explained = sum(not o.caught and o.ok for o in outcomes)
    failed = sum(not o.ok for o in outcomes)
    lines.append(
        f"{caught} of {len(outcomes)} faults caught, {explained} explained, {failed} failed"
    )
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m audit.evaluation.faults")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--per-category", type=int, default=16)
    parser.add_argument("--json-out", type=Path)
    args = parser.parse_args(argv)
    if args.per_category < 1:
        parser.error("--per-category must be at least 1")
    started = time.perf_counter()
    try:
        outcomes = run_faults(args.seed, args.per_category)
    except EvaluationFailed as error:
        print(f"error: {error}", file=sys.stderr)
        return 1
    print(to_text(outcomes))
    print(f"run time {time.perf_counter() - started:.1f} s")
    if args.json_out is not None:
        args.json_out.write_text(json.dumps(to_json(outcomes), indent=2) + "\n", encoding="utf-8")
    return 0 if all(o.ok for o in outcomes) else 1


if __name__ == "__main__":
    sys.exit(main())
