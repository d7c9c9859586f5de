"""The scope of the audit tests' shared fixtures: one per module, except under mutmut.

mutmut maps each function of ``audit/`` to the tests that called it, and runs a mutant against
those tests only. What a module-scoped fixture computes is credited to the first test that
requested it, at that test's teardown: the module's other tests, which assert on the same
result, are never run against a mutant of the code behind it (the golden SARIF and Markdown
comparisons of ``references/test_check_golden.py`` were never run against a mutant of the SARIF
or Markdown writer, and 46 mutants of ``to_sarif`` survived them). With ``MUTANT_UNDER_TEST``
set (mutmut's test-mapping run and its mutant runs), such a fixture is built anew for each
test, so its work is credited to, and checked by, every test that reads it.
"""

from __future__ import annotations

import os
from typing import Literal

import pytest


def per_module(fixture_name: str, config: pytest.Config) -> Literal["module", "function"]:
    """``scope=per_module``: ``module``, or ``function`` while mutmut runs the tests."""
    del fixture_name, config
    return "function" if os.environ.get("MUTANT_UNDER_TEST") else "module"
