"""The planted-case evaluation on a small setting: every case as planted, every category
planted, the oracle independent of the audit's code, the scoring able to fail."""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

from audit.duckdb_corpus import DuckDBCorpus
from audit.evaluation import DEMO_KEY, close_world, oracle, run, snapshot_world
from audit.evaluation.catalogue import CATEGORIES
from audit.evaluation.report import to_json, to_text
from audit.evaluation.scoring import difference
from audit.evaluation.world import generated_world

EVALUATION = Path(__file__).resolve().parents[3] / "audit" / "evaluation"


def test_every_planted_case_and_whole_answer_comes_out_as_planted() -> None:
    result = run(seed=0, per_category=3)
    assert result.failures == []
    assert result.unplanted == []
    assert len(CATEGORIES) >= 45
    cases = [s for s in result.scores.values() if s.group != "whole answers"]
    assert all(s.renderings >= 3 and s.passed == s.renderings for s in cases)
    wholes = {s.name: s for s in result.scores.values() if s.group == "whole answers"}
    assert set(wholes) == {"answer:mixed", "answer:clean", "answer:paired"}
    assert all(s.renderings > 0 and s.passed == s.renderings for s in wholes.values())


def test_cases_are_scored_as_answer_text_in_several_styles_and_as_claims() -> None:
    result = run(seed=1, per_category=2)
    styles = set().union(*(s.styles for s in result.scores.values()))
    assert {"bracket", "parens", "bare", "footnote", "claims"} <= styles
    assert {"bracket", "claims"} <= result.scores["digit"].styles
    assert {"bare", "parens"} <= result.scores["forged_check_code"].styles


def test_the_report_has_the_table_the_confusion_matrix_and_distinct_counts() -> None:
    result = run(seed=0, per_category=2)
    text = to_text(result)
    assert "failures: none" in text
    assert "came out as planted" in text
    data = to_json(result, 1.0)
    assert data["ok"] is True
    by_name = {c["name"]: c for c in data["categories"]}  # type: ignore[index, union-attr]
    assert by_name["withdrawn_record"]["distinct_cases"] == 1  # one withdrawn record, one path
    confusion = data["confusion"]
    assert confusion["forged"] == {"forged": result.confusion[("forged", "forged")]}  # type: ignore[index]


@pytest.mark.parametrize(
    ("module", "allowed"),
    [
        ("oracle.py", {"audit.evaluation.world", "audit.evaluation.oracle_references"}),
        ("oracle_references.py", {"audit.evaluation.world"}),
        ("oracle_support.py", set()),
    ],
)
def test_the_oracle_imports_nothing_of_the_audit(module: str, allowed: set[str]) -> None:
    """The oracle is written from the spec: it reads the world's facts and nothing else."""
    tree = ast.parse((EVALUATION / module).read_text(encoding="utf-8"))
    imported = {
        node.module if isinstance(node, ast.ImportFrom) else alias.name
        for node in ast.walk(tree)
        if isinstance(node, ast.Import | ast.ImportFrom)
        for alias in node.names
    }
    assert {name for name in imported if name and name.startswith("audit")} == allowed


def test_the_oracle_computes_the_check_codes_the_contract_prints() -> None:
    # docs/contract.md: citeseal handle mint --demo-key pmid:30831578/abstract.7 → ~wk9p5
    assert oracle.check_code(DEMO_KEY, "pmid:30831578/abstract.7") == "wk9p5"
    assert oracle.parse("pmid:30831578/abstract.7~wk9p5") is not None
    assert oracle.parse("pmid:030831578/abstract.7~wk9p5") is None
    assert oracle.parse("nct:NCT99000001/trial.brief_summary.1~0wn8m") is None  # unpinned


def test_the_oracle_folds_as_the_contract_says() -> None:
    assert oracle.fold(" a\u00a0\u2013 b\u200b\u2026 ") == "a - b..."
    assert oracle.fold("caf\u0065\u0301") == "caf\u00e9"
    assert oracle.fold("10\u00b3 \u2264 5") == "10\u00b3 \u2264 5"  # superscripts, signs kept


def test_a_report_that_differs_from_the_plan_is_a_failure_with_its_reason() -> None:
    from audit.citations import parse_answer
    from audit.engine import audit_answer
    from audit.keys import Keyring

    world = generated_world()
    handle = "pmid:99100001/abstract.5"
    from audit.handles import mint, parse_locator

    text = mint(Keyring.demo_keyring(), parse_locator(handle))
    report = audit_answer(
        parse_answer(f"Zentravir works [{text}]."), world.corpus, Keyring.demo_keyring()
    )
    wrong = oracle.SentencePlan("sentence", ((text, None, oracle.Expected("forged")),))
    assert difference(report, [wrong]) == (
        "sentence 1 citation 1: got ('ok', (), None, None), expected ('forged', (), None, None)"
    )
    right = oracle.SentencePlan(
        "sentence", ((text, None, oracle.judge(text, None, world, DEMO_KEY)),)
    )
    assert difference(report, [right]) is None


def test_the_demo_snapshot_is_a_world_too(demo_pair: tuple[Path, Path]) -> None:
    path = demo_pair[1]
    with DuckDBCorpus(path) as corpus:
        world = snapshot_world(path, corpus, "demo")
        assert "nct:NCT99000001" in world.records
        try:
            result = run(seed=0, per_category=2, worlds=[world])
        finally:
            close_world(world)
    # the demo corpus has no pool for some categories (no accent, no failed source…): the
    # generated world is there for those; every case planted here comes out as planted
    scored = [s for s in result.scores.values() if s.renderings]
    assert len(scored) >= 60
    assert {"reference_verified", "reference_retracted", "support_null_finding"} <= {
        s.name for s in scored
    }  # the snapshot resolver and the demo's own "does not increase the risk" passage
    assert [f for s in scored for f in s.failures] == []
    assert all(s.passed == s.renderings for s in scored)
