"""The mutmut cache reset of tests/audit/conftest.py finds and empties the audit's caches."""

from __future__ import annotations

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
