"""One answer at a time on the audit bench's snapshot, alone: ``python -m pipeline.bench answer``.

The one-answer figures of the ``audit`` bench (:func:`pipeline.bench.bench_audit.
one_answer_figures`: per call, kept open, look-ups kept, kept warm) on the same generated
1,000,000 passages and answers, without the handle, quote and batched figures before them.
"""

from __future__ import annotations

import random
from pathlib import Path

from audit.keys import Keyring
from pipeline.bench import Figure
from pipeline.bench.bench_audit import (
    _answers,
    generate_snapshot,
    one_answer_figures,
    without_indexes,
)


def run(workdir: Path) -> list[Figure]:
    keyring = Keyring.demo_keyring()
    path = workdir / "bench.duckdb"
    generate_snapshot(path)
    answers = _answers(path, keyring, random.Random(20250602))
    older = without_indexes(path, workdir / "bench-before-indexes.duckdb")
    return one_answer_figures(path, keyring, answers, older)
