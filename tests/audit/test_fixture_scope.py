"""The shared fixtures of the audit tests are rebuilt per test under mutmut (fixture_scope)."""

from __future__ import annotations

import pytest

from tests.audit.fixture_scope import per_module


def test_one_per_module_normally(monkeypatch: pytest.MonkeyPatch, pytestconfig: pytest.Config):
    monkeypatch.delenv("MUTANT_UNDER_TEST", raising=False)
    assert per_module("made", pytestconfig) == "module"


@pytest.mark.parametrize("mutant", ["stats", "audit.references.sarif.x_to_sarif__mutmut_3"])
def test_one_per_test_while_mutmut_maps_or_runs_mutants(
    monkeypatch: pytest.MonkeyPatch, pytestconfig: pytest.Config, mutant: str
):
    monkeypatch.setenv("MUTANT_UNDER_TEST", mutant)
    assert per_module("made", pytestconfig) == "function"
