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
    profile = (
        "from hypothesis import settings\n"
        "print(settings.default.derandomize, settings.default.deadline)\n"
    )
    root = Path(__file__).resolve().parents[2]

    def run(script: str, environ: dict[str, str]) -> list[str]:
        kept = {k: v for k, v in os.environ.items() if k not in ("MUTANT_UNDER_TEST", "CI")}
        env = kept | environ
        done = subprocess.run(
            [sys.executable, "-c", script], cwd=root, env=env, capture_output=True, text=True
        )
        assert done.returncode == 0, done.stderr
        return done.stdout.split()

    with_conftest = "import tests.audit.conftest\n" + profile
    assert run(with_conftest, {"MUTANT_UNDER_TEST": "stats"}) == ["True", "None"]
    # An ordinary run keeps whatever Hypothesis itself chose here: random examples on a
    # workstation, its own "ci" profile (also derandomized) when CI is set.
    assert run(with_conftest, {}) == run(profile, {})
    assert run(profile, {})[0] == "False"  # random examples on a workstation
    assert run(with_conftest, {"CI": "true"}) == run(profile, {"CI": "true"})
