"""The judge registry: the default entry and the error for an unknown name."""

from __future__ import annotations

import pytest

from audit.errors import InputError
from audit.support.judges import DEFAULT_JUDGE, JUDGES, judge_by_name
from audit.support.model import Evidence
from audit.support.rules import RulesJudge


def test_the_default_judge_is_the_rules_judge_and_reads_no_setting() -> None:
    judge = judge_by_name(DEFAULT_JUDGE, {})
    assert isinstance(judge, RulesJudge)
    assert (judge.name, judge.version) == ("rules", "1.5")
    result = judge.judge("zentravir raises mortality", Evidence("Zentravir raised mortality."))
    assert result.label == "supported"


def test_every_registered_factory_builds_a_judge_named_as_registered() -> None:
    assert "rules" in JUDGES
    assert judge_by_name("rules", {"ANYTHING": "x"}).name == "rules"


def test_an_unknown_judge_is_one_error_naming_the_choices() -> None:
    with pytest.raises(InputError) as caught:
        judge_by_name("oracle", {})
    choices = ", ".join(sorted(JUDGES))
    assert caught.value.message == f"unknown judge 'oracle' (expected one of {choices})"
