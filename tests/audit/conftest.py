"""Under mutmut, every test of ``audit/`` starts with the audit's memo caches empty.

mutmut runs the clean tests once in its own process, then forks that process for each mutant.
A ``functools`` cache filled by the clean run (``segments.word_diff``, ``lookalikes.ascii_of``,
``support.cues.stem``, the Jinja environment of ``render_html``) is inherited by the fork, so
a mutant of the code behind a cached call is never executed: the cache answers with the clean
result and the mutant survives though a test reads that result. With ``MUTANT_UNDER_TEST`` set
(mutmut's runs only), each test first clears every cache of the ``audit`` modules loaded.
Outside mutmut nothing is cleared: the caches behave as in production.

Under mutmut (which sets ``MUTANT_UNDER_TEST`` before it collects the tests) Hypothesis runs
with a fixed seed and no deadline: every mutant meets the same examples, so a mutant is killed
or survives the same way in every run, and a test slowed by the host's load never counts as a
kill.
"""

from __future__ import annotations

import os
import sys
from collections.abc import Iterator

import pytest
from hypothesis import settings

if "MUTANT_UNDER_TEST" in os.environ:  # mutmut's runs only (see the module docstring)
    settings.register_profile("mutmut", derandomize=True, deadline=None, database=None)
    settings.load_profile("mutmut")


def audit_caches() -> list[object]:
    """Every function of a loaded ``audit`` module that carries a ``cache_clear``."""
    found: dict[int, object] = {}
    for name, module in tuple(sys.modules.items()):
        if module is None or not (name == "audit" or name.startswith("audit.")):
            continue
        for value in tuple(vars(module).values()):
            if callable(getattr(value, "cache_clear", None)):
                found[id(value)] = value
    return list(found.values())


def clear_audit_caches() -> None:
    """Clear the caches :func:`audit_caches` finds."""
    for cached in audit_caches():
        cached.cache_clear()  # type: ignore[attr-defined]


@pytest.fixture(autouse=True)
def _fresh_audit_caches() -> Iterator[None]:
    if os.environ.get("MUTANT_UNDER_TEST"):
        clear_audit_caches()
    yield
