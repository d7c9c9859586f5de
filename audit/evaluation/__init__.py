"""``citeseal evaluate``: planted cases prove every decision the audit makes.

    run(seed=0, per_category=25) -> Result      the evaluation on the generated world
    run_worlds(worlds, keyring, key, ...)       on any worlds (the demo snapshot, …)

Modules: :mod:`~audit.evaluation.world` (what a corpus holds, as plain facts; the generated
world), :mod:`~audit.evaluation.oracle` (the expected outcomes, written from the spec and
sharing no code with the audit), :mod:`~audit.evaluation.categories`,
:mod:`~audit.evaluation.handle_cases` and :mod:`~audit.evaluation.catalogue` (what each
category plants), :mod:`~audit.evaluation.planting`
(answer text in several citation styles, and claims JSON), :mod:`~audit.evaluation.scoring`
(audit and compare), :mod:`~audit.evaluation.report` (tables and JSON),
:mod:`~audit.evaluation.faults` (one decision broken at a time).
"""

from __future__ import annotations

from collections.abc import Iterable

from audit.evaluation.scoring import Result, run_worlds
from audit.evaluation.world import World, close_world, generated_world, snapshot_world

DEMO_KEY = b"citeseal public demo key: NOT SECRET, demo only"
"""The public demo key as docs/contract.md prints it; the oracle computes check codes with it."""


def run(
    seed: int = 0,
    per_category: int = 25,
    worlds: Iterable[World] | None = None,
    *,
    stop_at_first: bool = False,
) -> Result:
    """The evaluation: plant, audit, score. ``worlds`` defaults to the generated world.

    ``result.ok`` is True only when every rendering passed and every category was planted;
    ``result.failures`` lists each failure with its reason."""
    from audit.keys import Keyring

    chosen = list(worlds) if worlds is not None else [generated_world()]
    return run_worlds(
        chosen,
        Keyring.demo_keyring(),
        DEMO_KEY,
        seed=seed,
        per_category=per_category,
        stop_at_first=stop_at_first,
    )


__all__ = [
    "DEMO_KEY",
    "Result",
    "World",
    "close_world",
    "generated_world",
    "run",
    "run_worlds",
    "snapshot_world",
]
