"""The mutmut cache reset of tests/audit/conftest.py finds and empties the audit's caches."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

from audit import lookalikes, segments
from tests.audit.conftest import audit_caches, clear_audit_caches


def test_the_audit_caches_are_found_and_emptied() -> None:
    segments.word_diff("a b", "a c")
    lookalikes.ascii_of("é")
    assert segments.word_diff in audit_caches()
    assert lookalikes.ascii_of in audit_caches()
    clear_audit_caches()
    assert segments.word_diff.cache_info().currsize == 0
    assert lookalikes.ascii_of.cache_info().currsize == 0


def test_under_mutmut_hypothesis_draws_the_same_examples_without_a_deadline() -> None:
    script = (
        "import tests.audit.conftest\n"
        "from hypothesis import settings\n"
        "print(settings.default.derandomize, settings.default.deadline)\n"
    )
    root = Path(__file__).resolve().parents[2]
    outputs = []
    for environ in ({"MUTANT_UNDER_TEST": "stats"}, {}):
        env = {k: v for k, v in os.environ.items() if k != "MUTANT_UNDER_TEST"} | environ
        done = subprocess.run(
            [sys.executable, "-c", script], cwd=root, env=env, capture_output=True, text=True
        )
        outputs.append(done.stdout.split())
    assert outputs[0] == ["True", "None"]
    assert outputs[1][0] == "False"  # an ordinary run keeps Hypothesis's random examples
