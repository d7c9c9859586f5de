"""The suite's Hypothesis settings (tests/conftest.py): no per-example deadline."""

from __future__ import annotations

from hypothesis import settings


def test_no_example_fails_for_its_time() -> None:
    current = settings.default
    assert current is not None
    assert current.deadline is None
    assert current.max_examples == 100  # Hypothesis's own count is kept
